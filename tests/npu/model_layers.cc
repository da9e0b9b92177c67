// Whole models, layer by layer, on the emulated NPU: mobilenet_v2, resnet18
// and the YOLOv5s-like detector (exported by tests/models/export_models.py)
// are converted to int8; the CPU reference runs each graph once and keeps
// every intermediate tensor; then every op the placement puts on the NPU
// (convolutions, element-wise ops, activations, pools) is lowered, run
// through the rknpu back-end on the mock kernel with the reference's own
// input tensors, and its output compared bit for bit with the reference's. Prints the placement, the code-generation time, the
// regcmd bytes and task counts per model.
//
// usage: npu_model_layers MODELS_DIR
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>

#include "base/half.h"
#include "converter.h"
#include "exported_models.h"
#include "cpu/graph_executor.h"
#include "hw/soc_profile.h"
#include "npu/prepared_op.h"
#include "npu/concat_plan.h"
#include "npu/native_layout.h"
#include "npu/placement.h"
#include "npu_runner.h"

namespace {

namespace fs = std::filesystem;
namespace npu = rknn::npu;
using rknn::Status;
using rknn::StatusOr;
using rknn::cpu::HostTensor;

constexpr const char* kModels[] = {"mobilenet_v2", "resnet18", "yolov5s_like"};

HostTensor deep_copy(const HostTensor& t) {
    HostTensor copy(t.dtype(), t.shape());
    if (t.byte_size() > 0) std::memcpy(copy.raw(), t.raw(), t.byte_size());
    copy.quant = t.quant;
    return copy;
}

struct ModelReport {
    int npu_ops = 0, cpu_ops = 0, differing_ops = 0;
    size_t tasks = 0, regcmd_bytes = 0;
    double codegen_ms = 0;
    double worst_fp16_ulps = 0;
    std::map<std::string, int> cpu_reasons;  // "Type: reason" -> count
    std::map<std::string, int> npu_by_type;
};

// A cube of an int8 or fp16 NCHW tensor of `c` channels.
std::vector<uint8_t> cube_of(const HostTensor& t, int c, int h, int w) {
    if (t.dtype() != rknn::graph::DType::kFloat16)
        return npu::pack_int8_cube(t.data<int8_t>(), c, h, w, npu::align_up(c, 16), 0);
    std::vector<float> values(static_cast<size_t>(t.numel()));
    for (size_t i = 0; i < values.size(); ++i) values[i] = rknn::half_to_float(t.data<uint16_t>()[i]);
    return npu::pack_fp16_cube(values.data(), c, h, w, npu::align_up(c, 8));
}

// Packs a Concat's inputs at the offsets plan_concat_in_place gives and
// compares the bytes with the reference output's packed cube.
bool concat_layout_holds(const rknn::graph::Graph& g, const rknn::graph::Op& op,
                         const std::map<int32_t, HostTensor>& values) {
    auto plan = npu::plan_concat_in_place(g, op);
    if (!plan.is_ok()) return false;
    const HostTensor& y = values.at(op.outputs[0]);
    const int c = static_cast<int>(y.shape()[1]), h = static_cast<int>(y.shape()[2]), w = static_cast<int>(y.shape()[3]);
    std::vector<uint8_t> placed(plan.value().output_bytes, 0);
    for (size_t i = 0; i < op.inputs.size(); ++i) {
        const HostTensor& x = values.at(op.inputs[i]);
        const auto cube = cube_of(x, static_cast<int>(x.shape()[1]), h, w);
        std::copy(cube.begin(), cube.end(), placed.begin() + static_cast<std::ptrdiff_t>(plan.value().input_offsets[i]));
    }
    return placed == cube_of(y, c, h, w);
}

// A Split read in place: each output's cube equals the input cube's bytes
// from its planned offset on (whole atoms; the last output's padding lanes
// are the input's own).
bool split_layout_holds(const rknn::graph::Graph& g, const rknn::graph::Op& op,
                        const std::map<int32_t, HostTensor>& values) {
    auto plan = npu::plan_split_in_place(g, op);
    if (!plan.is_ok()) return false;
    const HostTensor& x = values.at(op.inputs[0]);
    const int h = static_cast<int>(x.shape()[2]), w = static_cast<int>(x.shape()[3]);
    const auto whole = cube_of(x, static_cast<int>(x.shape()[1]), h, w);
    for (size_t i = 0; i < op.outputs.size(); ++i) {
        const HostTensor& y = values.at(op.outputs[i]);
        const auto part = cube_of(y, static_cast<int>(y.shape()[1]), h, w);
        const size_t at = plan.value().output_offsets[i];
        if (at + part.size() > whole.size() || !std::equal(part.begin(), part.end(), whole.begin() + static_cast<std::ptrdiff_t>(at)))
            return false;
    }
    return true;
}

// fp16 outputs: within 2 fp16 ulps of the reference, plus 2^-12 of the
// tensor's largest magnitude where fp32 sums of many terms cancel.
bool fp16_close(const std::vector<uint8_t>& got, const HostTensor& ref, double* worst_ulps) {
    const auto* g16 = reinterpret_cast<const uint16_t*>(got.data());
    const uint16_t* r16 = ref.data<uint16_t>();
    double scale = 0;
    for (int64_t i = 0; i < ref.numel(); ++i) scale = std::max(scale, std::fabs(double{rknn::half_to_float(r16[i])}));
    bool ok = true;
    for (int64_t i = 0; i < ref.numel(); ++i) {
        const double r = rknn::half_to_float(r16[i]), v = rknn::half_to_float(g16[i]);
        const double ulp = std::ldexp(1.0, std::ilogb(std::max(std::max(std::fabs(r), std::fabs(v)), 6.1e-5)) - 10);
        *worst_ulps = std::max(*worst_ulps, std::fabs(v - r) / ulp);
        ok = ok && std::fabs(v - r) <= 2 * ulp + std::ldexp(scale, -12);
    }
    return ok;
}

StatusOr<ModelReport> run_model(const fs::path& dir, const char* name, uint32_t core_mask, bool fp16, const char* soc) {
    rknn::convert::ConvertOptions options = rknn::testing::exported_model_options(
        dir, name, fp16 ? rknn::convert::TargetDType::kFloat16 : rknn::convert::TargetDType::kInt8);
    options.target_soc = soc;
    RKNN_ASSIGN_OR_RETURN(rknn::convert::ConvertResult converted, rknn::convert::convert_onnx(options));
    const rknn::graph::Graph& g = converted.graph;

    // Any input exercises every layer with the activations it produces.
    std::vector<HostTensor> inputs;
    std::mt19937 rng(7);
    for (int32_t id : g.inputs) {
        HostTensor t = rknn::cpu::make_tensor_like(g.tensors[static_cast<size_t>(id)], g.tensors[static_cast<size_t>(id)].shape);
        for (int64_t i = 0; i < t.numel(); ++i) {
            const int code = static_cast<int>(rng() % 200) - 100;
            if (t.dtype() == rknn::graph::DType::kFloat16) {
                t.data<uint16_t>()[i] = rknn::float_to_half(static_cast<float>(code) / 50.0f);
            } else {
                t.data<int8_t>()[i] = static_cast<int8_t>(code);
            }
        }
        inputs.push_back(std::move(t));
    }
    std::map<int32_t, HostTensor> values;
    for (size_t i = 0; i < g.inputs.size(); ++i) values[g.inputs[i]] = deep_copy(inputs[i]);
    RKNN_ASSIGN_OR_RETURN(auto exec, rknn::cpu::GraphExecutor::create(g));
    std::vector<HostTensor> outputs;
    RKNN_RETURN_IF_ERROR(exec->run(inputs, &outputs, [&](int32_t op_index, const std::vector<const HostTensor*>& outs) {
        const auto& op = g.ops[static_cast<size_t>(op_index)];
        for (size_t k = 0; k < outs.size() && k < op.outputs.size(); ++k) values[op.outputs[k]] = deep_copy(*outs[k]);
        return Status::ok();
    }));

    ModelReport report;
    const auto placements = npu::place_graph(g, *rknn::hw::find_soc(soc), core_mask);
    for (size_t i = 0; i < g.ops.size(); ++i) {
        const auto& op = g.ops[i];
        if (placements[i].target != npu::Target::kNpu) {
            ++report.cpu_ops;
            ++report.cpu_reasons[std::string(rknn::graph::op_type_name(op.type)) + ": " + placements[i].reason];
            continue;
        }
        ++report.npu_ops;
        ++report.npu_by_type[rknn::graph::op_type_name(op.type)];
        if (placements[i].reason.rfind("an alias", 0) == 0) {
            // No task: the output must be the input's bytes (the placement checked the cube shapes).
            const HostTensor& in = values.at(op.inputs[0]);
            const HostTensor& out = values.at(op.outputs[0]);
            if (in.byte_size() != out.byte_size() || std::memcmp(in.raw(), out.raw(), in.byte_size()) != 0) {
                ++report.differing_ops;
                std::printf("  op %zu %s: not an alias of its input\n", i, op.name.c_str());
            }
            continue;
        }
        if (op.type == rknn::graph::OpType::kConcat) {
            // In place: the inputs' cubes at the planned offsets are the output's cube.
            if (!concat_layout_holds(g, op, values)) {
                ++report.differing_ops;
                std::printf("  op %zu %s: the in-place layout differs from the reference\n", i, op.name.c_str());
            }
            continue;
        }
        if (op.type == rknn::graph::OpType::kSplit) {
            if (!split_layout_holds(g, op, values)) {
                ++report.differing_ops;
                std::printf("  op %zu %s: the in-place split differs from the reference\n", i, op.name.c_str());
            }
            continue;
        }
        auto run = npu::testing::run_graph_op(g, op, [&values](int32_t id) -> const HostTensor& { return values.at(id); },
                                              core_mask, false, soc);
        if (!run.is_ok()) return run.status().with_context("op " + std::to_string(i) + " " + op.name);
        report.codegen_ms += run.value().codegen_ms;
        report.tasks += run.value().tasks;
        report.regcmd_bytes += run.value().regcmd_bytes;
        const HostTensor& ref = values.at(op.outputs[0]);
        const bool same = ref.dtype() == rknn::graph::DType::kFloat16
                              ? fp16_close(run.value().output, ref, &report.worst_fp16_ulps)
                              : std::memcmp(run.value().output.data(), ref.raw(), run.value().output.size()) == 0;
        if (!same) {
            ++report.differing_ops;
            std::printf("  op %zu %s: NPU output differs from the reference\n", i, op.name.c_str());
        }
    }
    return report;
}

}  // namespace

int main(int argc, char** argv) {
    fs::path dir;
    if (const int code = rknn::testing::exported_models_dir(argc, argv, &dir); code != 0) return code;
    int failures = 0;
    struct Pass {
        const char* soc;
        bool fp16;
    };
    // RK3568: int8 only (one core; its fp16 path is not built).
    for (const Pass pass : {Pass{"rk3588", false}, Pass{"rk3588", true}, Pass{"rk3568", false}}) {
        const bool fp16 = pass.fp16;
        for (const char* name : kModels) {
            // Single core for two models, all three cores of an RK3588 for the detector.
            const bool all_cores = std::strcmp(name, "yolov5s_like") == 0 && std::strcmp(pass.soc, "rk3588") == 0;
            const uint32_t mask = all_cores ? 0x7u : 0u;
            auto report = run_model(dir, name, mask, fp16, pass.soc);
            if (!report.is_ok()) {
                std::printf("%-14s %s %s FAILED: %s\n", name, pass.soc, fp16 ? "fp16" : "int8",
                            report.status().message().c_str());
                ++failures;
                continue;
            }
            const ModelReport& r = report.value();
            std::printf("%-14s %s %s NPU ops %3d (%d differ)  CPU ops %3d  tasks %5zu  regcmd %8zu bytes  codegen %.1f ms%s",
                        name, pass.soc, fp16 ? "fp16" : "int8", r.npu_ops, r.differing_ops, r.cpu_ops, r.tasks,
                        r.regcmd_bytes, r.codegen_ms, mask > 1 ? "  (3 cores)" : "");
            if (fp16) std::printf("  largest difference %.1f ulp", r.worst_fp16_ulps);
            std::printf("\n");
            std::string npu_types;
            for (const auto& [type, count] : r.npu_by_type) npu_types += " " + type + " x" + std::to_string(count);
            std::printf("    NPU:%s\n", npu_types.c_str());
            for (const auto& [reason, count] : r.cpu_reasons) std::printf("    CPU x%-3d %s\n", count, reason.c_str());
            // int8 models must run their compute on the NPU; fp16 ones may fall back where the float pipeline cannot.
            if (r.differing_ops != 0 || (!fp16 && r.tasks == 0)) ++failures;
        }
    }
    return failures == 0 ? 0 : 1;
}
