// Whole models through the public C API on the mock device: mobilenet_v2,
// resnet18 and the YOLOv5s-like detector (tests/models/export_models.py),
// converted to int8 and fp16, loaded with rknn_init (from the file and from
// memory), fed the exporter's raw NHWC uint8 pixels with rknn_inputs_set,
// run, and read back with rknn_outputs_get.
//
// Checks: int8 outputs (raw, and dequantised with want_float) are
// bit-identical to the CPU int8 reference of the same graph (the NPU ops run
// on the emulator, the rest on the CPU kernels);
// fp16 outputs agree with the reference (cosine >= 0.99999; the reference
// splits fp16 activations off their convolutions as the runtime does,
// npu/activation_split.h); both agree with
// PyTorch on the same pixels (int8 cosine >= 0.98, fp16 >= 0.999). Prints
// the figures with init and run times.
//
// usage: api_models MODELS_DIR
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include <unistd.h>

#include "api/context_handle.h"
#include "base/npy.h"
#include "converter.h"
#include "cpu/convert.h"
#include "cpu/graph_executor.h"
#include "exported_models.h"
#include "hw/soc_profile.h"
#include "npu/activation_split.h"
#include "layout/preprocess.h"
#include "common/mock_soc.h"
#include "model/model_file.h"
#include "quant/accuracy.h"
#include "rknn_api.h"
#include "runtime/context.h"

namespace {

namespace fs = std::filesystem;
using rknn::Status;
using rknn::StatusCode;
using rknn::StatusOr;
using rknn::cpu::HostTensor;
using Clock = std::chrono::steady_clock;

struct ModelCase {
    const char* name;
    int outputs;
};
constexpr ModelCase kModels[] = {{"mobilenet_v2", 1}, {"resnet18", 1}, {"yolov5s_like", 3}};
constexpr double kFp16Threshold = 0.999;
constexpr double kInt8Threshold = 0.98;
constexpr double kFp16ReferenceThreshold = 0.99999;
constexpr int kTimedRuns = 3;

double ms_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

Status api(int code, const char* call) {
    return code == RKNN_SUCC ? Status::ok() : rknn::make_status(StatusCode::kInternal, "%s returned %d", call, code);
}

std::vector<float> floats_of(const void* data, size_t count) {
    std::vector<float> v(count);
    std::memcpy(v.data(), data, count * sizeof(float));
    return v;
}

// The CPU int8/fp16 reference on the same pixels, pre-processed as the runtime does.
StatusOr<std::vector<HostTensor>> reference_outputs(const rknn::graph::Graph& g, const rknn::npy::Array& pixels) {
    HostTensor raw(rknn::graph::DType::kUInt8, pixels.shape);
    std::memcpy(raw.raw(), pixels.data.data(), pixels.data.size());
    const rknn::graph::Tensor& input = g.tensors[static_cast<size_t>(g.inputs[0])];
    RKNN_ASSIGN_OR_RETURN(const HostTensor normalised, rknn::layout::apply_preprocess(raw, g.preprocess[0], input.shape));
    HostTensor fed = rknn::cpu::make_tensor_like(input, input.shape);
    RKNN_RETURN_IF_ERROR(rknn::cpu::from_float32(normalised, &fed));
    RKNN_ASSIGN_OR_RETURN(auto exec, rknn::cpu::GraphExecutor::create(g));
    std::vector<HostTensor> outputs;
    RKNN_RETURN_IF_ERROR(exec->run({fed}, &outputs));
    return outputs;
}

struct Result {
    double worst_torch = 1.0, worst_reference = 1.0;
    bool bit_exact = true;
    double init_ms = 0, run_ms = 0;
    size_t npu_ops = 0, ops = 0;
};

StatusOr<Result> evaluate(const fs::path& dir, const ModelCase& m, rknn::convert::TargetDType dtype,
                          const fs::path& work, const char* soc = "rk3588") {
    const bool int8 = dtype == rknn::convert::TargetDType::kInt8;
    rknn::convert::ConvertOptions options = rknn::testing::exported_model_options(dir, m.name, dtype);
    options.target_soc = soc;
    const rknn::testing::MockSoc mock(soc);
    RKNN_ASSIGN_OR_RETURN(rknn::convert::ConvertResult converted, rknn::convert::convert_onnx(options));
    const fs::path model_path = work / (std::string(m.name) + (int8 ? "_int8_" : "_fp16_") + soc + ".rknn");
    RKNN_RETURN_IF_ERROR(rknn::model::write_model_file(converted.graph, model_path.string()));
    RKNN_ASSIGN_OR_RETURN(const rknn::npy::Array pixels,
                          rknn::npy::read_file((dir / (std::string(m.name) + "_input.npy")).string()));
    // The reference computes what the runtime runs: fp16 activations the
    // float pipeline lacks split off their convolutions (one more rounding).
    rknn::graph::Graph reference_graph = converted.graph;
    if (const rknn::hw::SocProfile* profile = rknn::hw::find_soc(soc); profile != nullptr)
        rknn::npu::split_activations_the_npu_lacks(&reference_graph, *profile);
    RKNN_ASSIGN_OR_RETURN(const std::vector<HostTensor> reference, reference_outputs(reference_graph, pixels));

    Result result;
    rknn_context ctx = 0;
    const Clock::time_point init_start = Clock::now();
    RKNN_RETURN_IF_ERROR(api(rknn_init(&ctx, const_cast<char*>(model_path.c_str()), 0, 0, nullptr), "rknn_init"));
    result.init_ms = ms_since(init_start);
    if (auto context = rknn::api::runtime_context(ctx); context.is_ok()) {
        result.npu_ops = context.value()->npu_task_op_count();
        result.ops = context.value()->graph().ops.size();
    }
    rknn_input_output_num io{};
    Status status = api(rknn_query(ctx, RKNN_QUERY_IN_OUT_NUM, &io, sizeof(io)), "rknn_query(IN_OUT_NUM)");
    if (status.is_ok() && (io.n_input != 1 || io.n_output != static_cast<uint32_t>(m.outputs)))
        status = Status(StatusCode::kInternal, "unexpected input/output counts");
    rknn_input input{};
    input.index = 0;
    input.buf = const_cast<uint8_t*>(pixels.data.data());
    input.size = static_cast<uint32_t>(pixels.data.size());
    input.type = RKNN_TENSOR_UINT8;
    input.fmt = RKNN_TENSOR_NHWC;
    if (status.is_ok()) status = api(rknn_inputs_set(ctx, 1, &input), "rknn_inputs_set");
    for (int r = 0; r < kTimedRuns && status.is_ok(); ++r) {
        const Clock::time_point run_start = Clock::now();
        status = api(rknn_run(ctx, nullptr), "rknn_run");
        result.run_ms += ms_since(run_start) / kTimedRuns;
    }
    std::vector<rknn_output> as_float(static_cast<size_t>(m.outputs)), raw(static_cast<size_t>(m.outputs));
    for (auto& o : as_float) o.want_float = 1;
    if (status.is_ok()) status = api(rknn_outputs_get(ctx, io.n_output, as_float.data(), nullptr), "rknn_outputs_get");
    if (status.is_ok()) status = api(rknn_outputs_get(ctx, io.n_output, raw.data(), nullptr), "rknn_outputs_get(raw)");
    for (int k = 0; k < m.outputs && status.is_ok(); ++k) {
        const HostTensor& ref = reference[static_cast<size_t>(k)];
        if (raw[static_cast<size_t>(k)].size != ref.byte_size()) {
            status = Status(StatusCode::kInternal, "raw output size differs from the reference");
            break;
        }
        result.bit_exact = result.bit_exact && std::memcmp(raw[static_cast<size_t>(k)].buf, ref.raw(), ref.byte_size()) == 0;
        const HostTensor ref_float = rknn::cpu::to_float32(ref);
        const std::vector<float> ours = floats_of(as_float[static_cast<size_t>(k)].buf, static_cast<size_t>(ref.numel()));
        // want_float gives the reference's dequantised values bit for bit too.
        result.bit_exact = result.bit_exact && std::memcmp(ours.data(), ref_float.raw(), ref_float.byte_size()) == 0;
        result.worst_reference = std::min(result.worst_reference, rknn::convert::cosine_similarity(
            ours, std::vector<float>(ref_float.data<float>(), ref_float.data<float>() + ref_float.numel())));
        auto torch = rknn::npy::read_file((dir / (std::string(m.name) + "_output" + std::to_string(k) + ".npy")).string());
        if (!torch.is_ok()) {
            status = torch.status();
            break;
        }
        result.worst_torch = std::min(result.worst_torch,
                                      rknn::convert::cosine_similarity(ours, floats_of(torch.value().data.data(), ours.size())));
    }
    if (as_float[0].buf != nullptr) (void)rknn_outputs_release(ctx, io.n_output, as_float.data());
    if (raw[0].buf != nullptr) (void)rknn_outputs_release(ctx, io.n_output, raw.data());
    (void)rknn_destroy(ctx);
    RKNN_RETURN_IF_ERROR(status);

    // The same model from memory gives the same bytes.
    std::vector<uint8_t> file_bytes;
    RKNN_ASSIGN_OR_RETURN(file_bytes, rknn::model::serialize_model(converted.graph));
    RKNN_RETURN_IF_ERROR(api(rknn_init(&ctx, file_bytes.data(), static_cast<uint32_t>(file_bytes.size()), 0, nullptr),
                             "rknn_init(buffer)"));
    file_bytes.clear();  // clients free the buffer right after rknn_init
    file_bytes.shrink_to_fit();
    status = api(rknn_inputs_set(ctx, 1, &input), "rknn_inputs_set");
    if (status.is_ok()) status = api(rknn_run(ctx, nullptr), "rknn_run");
    std::vector<rknn_output> again(static_cast<size_t>(m.outputs));
    if (status.is_ok()) status = api(rknn_outputs_get(ctx, io.n_output, again.data(), nullptr), "rknn_outputs_get");
    for (int k = 0; k < m.outputs && status.is_ok(); ++k)
        if (std::memcmp(again[static_cast<size_t>(k)].buf, reference[static_cast<size_t>(k)].raw(),
                        reference[static_cast<size_t>(k)].byte_size()) != 0 && int8)
            status = Status(StatusCode::kInternal, "the context made from memory gives other bytes");
    if (again[0].buf != nullptr) (void)rknn_outputs_release(ctx, io.n_output, again.data());
    (void)rknn_destroy(ctx);
    RKNN_RETURN_IF_ERROR(status);
    return result;
}

}  // namespace

int main(int argc, char** argv) {
    fs::path dir;
    if (const int code = rknn::testing::exported_models_dir(argc, argv, &dir); code != 0) return code;
    const fs::path work = fs::temp_directory_path() / ("api_models_" + std::to_string(::getpid()));
    fs::create_directories(work);
    int failures = 0;
    std::printf("%-14s %-6s %-5s %-12s %-13s %-10s %9s %9s %9s\n", "model", "soc", "dtype", "vs PyTorch",
                "vs reference", "bytes", "NPU tasks", "init ms", "run ms");
    struct Pass {
        const char* soc;
        rknn::convert::TargetDType dtype;
    };
    // RK3568: int8 only (its fp16 path is not built; the ops run on the CPU).
    const Pass passes[] = {{"rk3588", rknn::convert::TargetDType::kInt8},
                           {"rk3588", rknn::convert::TargetDType::kFloat16},
                           {"rk3568", rknn::convert::TargetDType::kInt8}};
    for (const ModelCase& m : kModels) {
        for (const Pass& pass : passes) {
            const bool int8 = pass.dtype == rknn::convert::TargetDType::kInt8;
            auto result = evaluate(dir, m, pass.dtype, work, pass.soc);
            if (!result.is_ok()) {
                std::printf("%-14s %-6s %-5s FAILED: %s\n", m.name, pass.soc, int8 ? "int8" : "fp16",
                            result.status().message().c_str());
                ++failures;
                continue;
            }
            const Result& r = result.value();
            const bool ok = r.worst_torch >= (int8 ? kInt8Threshold : kFp16Threshold) &&
                            (int8 ? r.bit_exact : r.worst_reference >= kFp16ReferenceThreshold) && r.npu_ops > 0;
            failures += ok ? 0 : 1;
            char placed[32];
            std::snprintf(placed, sizeof(placed), "%zu/%zu", r.npu_ops, r.ops);
            std::printf("%-14s %-6s %-5s %-12.5f %-13.6f %-10s %9s %9.1f %9.1f %s\n", m.name, pass.soc,
                        int8 ? "int8" : "fp16", r.worst_torch, r.worst_reference, r.bit_exact ? "identical" : "differ",
                        placed, r.init_ms, r.run_ms, ok ? "ok" : "FAILED");
        }
    }
    fs::remove_all(work);
    return failures == 0 ? 0 : 1;
}
