// ONNX node conformance through the full path: every in-scope case of the
// node suite is converted to fp16; those with at least one op the NPU runs
// as tasks (on RK3588) are loaded with rknn_init, fed with rknn_inputs_set
// (FLOAT32 values, NCHW or UNDEFINED), run on the mock device and read back
// with rknn_outputs_get (want_float), then compared with the suite's
// expected outputs within fp16 tolerance (1e-2 relative, plus 1e-2 of the
// output's largest magnitude).
//
// usage: api_conformance SUITE_DIR EXPECTED_FAILURES REPORT_FILE
// Fails when a case fails that EXPECTED_FAILURES does not list.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "base/log.h"
#include "converter.h"
#include "cpu/convert.h"
#include "hw/soc_profile.h"
#include "model/model_file.h"
#include "node_cases.h"
#include "npu/placement.h"
#include "rknn_api.h"

namespace {

namespace fs = std::filesystem;
using rknn::Status;
using rknn::StatusCode;
using rknn::StatusOr;
using rknn::cpu::HostTensor;

constexpr double kRelTolerance = 1e-2;
constexpr double kRangeTolerance = 1e-2;

Status api(int code, const char* call) {
    return code == RKNN_SUCC ? Status::ok() : rknn::make_status(StatusCode::kInternal, "%s returned %d", call, code);
}

// Runs one data set through the C API; `ran` is false when the case is not NPU-mapped.
Status run_case(const fs::path& dir, bool* npu_mapped) {
    *npu_mapped = false;
    rknn::convert::ConvertOptions options;
    options.onnx_path = (dir / "model.onnx").string();
    options.dtype = rknn::convert::TargetDType::kFloat16;
    auto converted = rknn::convert::convert_onnx(options);
    if (!converted.is_ok()) return Status::ok();  // outside the converter's fp16 scope: not counted
    const rknn::graph::Graph& g = converted.value().graph;
    for (int32_t t : g.inputs)
        if (!rknn::graph::is_float(g.tensors[static_cast<size_t>(t)].dtype)) return Status::ok();
    for (int32_t t : g.outputs)
        if (!rknn::graph::is_float(g.tensors[static_cast<size_t>(t)].dtype)) return Status::ok();
    const auto placements = rknn::npu::place_graph(g, rknn::hw::default_soc());
    *npu_mapped = std::any_of(placements.begin(), placements.end(), [](const rknn::npu::Placement& p) {
        return p.target == rknn::npu::Target::kNpu && p.form == rknn::npu::NpuForm::kTasks;
    });
    if (!*npu_mapped) return Status::ok();

    RKNN_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, rknn::model::serialize_model(g));
    rknn_context ctx = 0;
    RKNN_RETURN_IF_ERROR(api(rknn_init(&ctx, bytes.data(), static_cast<uint32_t>(bytes.size()),
                                       RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY, nullptr),
                             "rknn_init"));
    Status status;
    for (const fs::path& data_set : rknn::testing::data_sets(dir)) {
        auto inputs = rknn::testing::read_numbered(data_set, "input_");
        auto expected = rknn::testing::read_numbered(data_set, "output_");
        if (!inputs.is_ok() || !expected.is_ok() || inputs.value().size() != g.inputs.size() ||
            expected.value().size() != g.outputs.size()) {
            status = Status(StatusCode::kInternal, "data set does not match the model's inputs/outputs");
            break;
        }
        std::vector<HostTensor> as_float;
        std::vector<rknn_input> in(g.inputs.size());
        for (size_t i = 0; i < g.inputs.size(); ++i) {
            as_float.push_back(rknn::cpu::to_float32(inputs.value()[i]));
            in[i].index = static_cast<uint32_t>(i);
            in[i].buf = as_float.back().raw();
            in[i].size = static_cast<uint32_t>(as_float.back().byte_size());
            in[i].type = RKNN_TENSOR_FLOAT32;
            in[i].fmt = as_float.back().rank() == 4 ? RKNN_TENSOR_NCHW : RKNN_TENSOR_UNDEFINED;
        }
        status = api(rknn_inputs_set(ctx, static_cast<uint32_t>(in.size()), in.data()), "rknn_inputs_set");
        if (status.is_ok()) status = api(rknn_run(ctx, nullptr), "rknn_run");
        std::vector<rknn_output> out(g.outputs.size());
        for (rknn_output& o : out) o.want_float = 1;
        if (status.is_ok())
            status = api(rknn_outputs_get(ctx, static_cast<uint32_t>(out.size()), out.data(), nullptr), "rknn_outputs_get");
        for (size_t k = 0; k < out.size() && status.is_ok(); ++k) {
            const HostTensor e = rknn::cpu::to_float32(expected.value()[k]);
            HostTensor actual(rknn::graph::DType::kFloat32, e.shape());
            if (out[k].size != actual.byte_size()) {
                status = Status(StatusCode::kInternal, "output " + std::to_string(k) + " has another size");
                break;
            }
            std::memcpy(actual.raw(), out[k].buf, actual.byte_size());
            double range = 1.0;
            for (int64_t i = 0; i < e.numel(); ++i)
                if (std::isfinite(e.data<float>()[i])) range = std::max(range, std::fabs(double{e.data<float>()[i]}));
            status = rknn::testing::compare_outputs(e, actual, k, kRelTolerance, kRangeTolerance * range);
        }
        if (out[0].buf != nullptr) (void)rknn_outputs_release(ctx, static_cast<uint32_t>(out.size()), out.data());
        if (!status.is_ok()) break;
    }
    (void)rknn_destroy(ctx);
    return status;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: %s SUITE_DIR EXPECTED_FAILURES REPORT_FILE\n", argv[0]);
        return 2;
    }
    const fs::path suite = argv[1];
    if (!fs::is_directory(suite)) {
        std::printf("SKIP: %s not found (install libonnx-testdata)\n", suite.c_str());
        return 77;
    }
    rknn::log::set_level(0);  // expected failures would flood the log
    const std::set<std::string> expected_failures = rknn::testing::read_expected_failures(argv[2]);
    std::ofstream report(argv[3]);
    report << "# ONNX node cases through the C API: failures (case: reason), written by api_conformance\n";
    int mapped = 0, passed = 0, unexpected = 0;
    for (const fs::path& dir : rknn::testing::cases_in_scope(suite)) {
        const std::string name = dir.filename().string();
        bool npu_mapped = false;
        const Status status = run_case(dir, &npu_mapped);
        if (!npu_mapped) continue;
        ++mapped;
        if (status.is_ok()) {
            ++passed;
            std::printf("pass %s\n", name.c_str());
            if (expected_failures.count(name)) std::printf("NOTE %s now passes; drop it from the expected failures\n", name.c_str());
            continue;
        }
        const bool known = expected_failures.count(name) > 0;
        unexpected += known ? 0 : 1;
        std::printf("%s %s: %s\n", known ? "FAIL (expected)" : "FAIL", name.c_str(), status.message().c_str());
        report << name << ": " << status.message() << "\n";
    }
    std::printf("ONNX node cases with NPU ops, through the C API on the mock device: %d passed / %d, %d unexpected failures\n",
                passed, mapped, unexpected);
    return unexpected == 0 ? 0 : 1;
}
