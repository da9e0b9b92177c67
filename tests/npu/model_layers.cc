// Whole models, layer by layer, on the emulated NPU: mobilenet_v2, resnet18
// and the YOLOv5s-like detector (exported by tests/models/export_models.py)
// are converted to int8; the CPU reference runs each graph once and keeps
// every intermediate tensor; then every op the placement puts on the NPU is
// lowered, run through the rknpu back-end on the mock kernel with the
// reference's own input tensors, and its output compared bit for bit with
// the reference's. Prints the placement, the code-generation time, the
// regcmd bytes and task counts per model.
//
// usage: npu_model_layers MODELS_DIR
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>

#include "converter.h"
#include "exported_models.h"
#include "cpu/graph_executor.h"
#include "hw/soc_profile.h"
#include "npu/conv_lowering.h"
#include "npu/graph_conv.h"
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
    std::map<std::string, int> cpu_reasons;  // "Type: reason" -> count
};

// Runs one NPU-placed convolution and compares it with the reference's output.
Status check_conv(const rknn::graph::Graph& g, const rknn::graph::Op& op, const std::map<int32_t, HostTensor>& values,
                  uint32_t core_mask, ModelReport* report, bool* same) {
    const auto start = std::chrono::steady_clock::now();
    RKNN_ASSIGN_OR_RETURN(std::unique_ptr<npu::PreparedConv> conv, npu::prepare_int8_conv(g, op));
    npu::testing::NpuRunner runner;
    const npu::ConvGeometry& geo = conv->geometry;
    enum : int32_t { kIn, kWeights, kRecords, kOut, kResidual };
    conv->layer.addresses = {npu::BufferRef(kIn, 0), npu::BufferRef(kWeights, 0), npu::BufferRef(kRecords, 0),
                             npu::BufferRef(kOut, 0)};
    conv->layer.epilogue.residual_addr = npu::BufferRef(kResidual, 0);
    npu::ProgramBuilder builder(runner.soc());
    RKNN_RETURN_IF_ERROR(npu::lower_conv_int8(conv->layer, runner.soc(), core_mask, &builder));
    const npu::Program program = builder.finish();
    report->codegen_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    report->tasks += program.tasks.size();
    report->regcmd_bytes += program.bytes();

    const HostTensor& x = values.at(op.inputs[0]);
    const int c_aligned = npu::align_up(geo.in_c, 16), oc_aligned = npu::align_up(geo.out_c, 16);
    const int oh = geo.out_h(), ow = geo.out_w();
    const auto cube = npu::pack_int8_cube(x.data<int8_t>(), geo.in_c, geo.in_h, geo.in_w, c_aligned, 0);
    const size_t out_bytes = static_cast<size_t>(oc_aligned) * oh * ow;
    std::vector<uint8_t> residual(16, 0);
    if (conv->residual_input >= 0) {
        const HostTensor& r = values.at(op.inputs[static_cast<size_t>(conv->residual_input)]);
        residual = npu::pack_int8_cube(r.data<int8_t>(), geo.out_c, oh, ow, oc_aligned, 0);
    }
    if (runner.add(cube.data(), cube.size()) != kIn ||
        runner.add(conv->weights.data(), conv->weights.size()) != kWeights ||
        runner.add(conv->records.data(), conv->records.size()) != kRecords || runner.zeros(out_bytes) != kOut ||
        runner.add(residual.data(), residual.size()) != kResidual)
        return RKNN_INTERNAL_ERROR("buffer creation failed");
    RKNN_RETURN_IF_ERROR(runner.run(program));
    const auto got = npu::unpack_int8_cube(runner.data(kOut), geo.out_c, oh, ow, static_cast<uint64_t>(oh) * ow * 16);
    const HostTensor& ref = values.at(op.outputs[0]);
    *same = std::memcmp(got.data(), ref.raw(), got.size()) == 0;
    return Status::ok();
}

StatusOr<ModelReport> run_model(const fs::path& dir, const char* name, uint32_t core_mask) {
    const rknn::convert::ConvertOptions options =
        rknn::testing::exported_model_options(dir, name, rknn::convert::TargetDType::kInt8);
    RKNN_ASSIGN_OR_RETURN(rknn::convert::ConvertResult converted, rknn::convert::convert_onnx(options));
    const rknn::graph::Graph& g = converted.graph;

    // Any int8 input exercises every layer with the activations it produces.
    std::vector<HostTensor> inputs;
    std::mt19937 rng(7);
    for (int32_t id : g.inputs) {
        HostTensor t = rknn::cpu::make_tensor_like(g.tensors[static_cast<size_t>(id)], g.tensors[static_cast<size_t>(id)].shape);
        for (int64_t i = 0; i < t.numel(); ++i) t.data<int8_t>()[i] = static_cast<int8_t>(static_cast<int>(rng() % 200) - 100);
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
    const auto placements = npu::place_graph(g, rknn::hw::default_soc(), core_mask);
    for (size_t i = 0; i < g.ops.size(); ++i) {
        const auto& op = g.ops[i];
        if (placements[i].target != npu::Target::kNpu) {
            ++report.cpu_ops;
            ++report.cpu_reasons[std::string(rknn::graph::op_type_name(op.type)) + ": " + placements[i].reason];
            continue;
        }
        ++report.npu_ops;
        bool same = false;
        const Status checked = check_conv(g, op, values, core_mask, &report, &same);
        if (!checked.is_ok()) return checked.with_context("op " + std::to_string(i) + " " + op.name);
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
    for (const char* name : kModels) {
        // Single core for two models, all three cores for the detector.
        const uint32_t mask = std::strcmp(name, "yolov5s_like") == 0 ? 0x7u : 0u;
        auto report = run_model(dir, name, mask);
        if (!report.is_ok()) {
            std::printf("%-14s FAILED: %s\n", name, report.status().message().c_str());
            ++failures;
            continue;
        }
        const ModelReport& r = report.value();
        std::printf("%-14s NPU ops %3d (%d differ)  CPU ops %3d  tasks %5zu  regcmd %8zu bytes  codegen %.1f ms%s\n",
                    name, r.npu_ops, r.differing_ops, r.cpu_ops, r.tasks, r.regcmd_bytes, r.codegen_ms,
                    mask > 1 ? "  (3 cores)" : "");
        for (const auto& [reason, count] : r.cpu_reasons) std::printf("    CPU x%-3d %s\n", count, reason.c_str());
        if (r.differing_ops != 0 || r.npu_ops == 0) ++failures;
    }
    return failures == 0 ? 0 : 1;
}
