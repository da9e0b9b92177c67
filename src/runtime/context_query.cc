// rknn_query and the per-layer performance table of a Context.
#include <algorithm>
#include <array>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "base/version.h"
#include "graph/op_cost.h"
#include "runtime/context.h"
#include "runtime/batch_fanout.h"
#include "runtime/tensor_attrs.h"

namespace rknn::runtime {
namespace {

Status expect_size(uint32_t size, size_t wanted, const char* what) {
    if (size == wanted) return Status::ok();
    return make_status(StatusCode::kInvalidArgument, "size %u does not match sizeof(%s) = %zu", size, what, wanted);
}

// The vendor's WorkLoad(0/1/2) cell: each core's share of a step's tasks,
// "-" for an NPU step whose core the driver did not report.
std::string workload_of(const std::array<uint32_t, driver::kMaxCores>& tasks, int cores, bool npu) {
    uint64_t total = 0;
    for (int c = 0; c < cores; ++c) total += tasks[static_cast<size_t>(c)];
    if (npu && total == 0) return "-";
    std::string text;
    for (int c = 0; c < cores; ++c) {
        char share[16];
        std::snprintf(share, sizeof(share), "%s%.1f%%", c > 0 ? "/" : "",
                      total > 0 ? 100.0 * tasks[static_cast<size_t>(c)] / static_cast<double>(total) : 0.0);
        text += share;
    }
    return text;
}

std::string shapes_of(const graph::Graph& g, const std::vector<int32_t>& tensors) {
    std::string text;
    for (int32_t t : tensors) {
        if (t < 0 || g.is_constant(t)) continue;
        if (!text.empty()) text += ",";
        text += graph::shape_to_string(g.tensors[static_cast<size_t>(t)].shape);
    }
    return text.empty() ? "-" : text;
}

}  // namespace

Status Context::query_tensor_attr(int cmd, rknn_tensor_attr* attr) {
    // The CURRENT_* queries answer for the shape set chosen; the others for
    // the model's declared (largest) shapes.
    const bool current = cmd >= RKNN_QUERY_CURRENT_INPUT_ATTR && cmd <= RKNN_QUERY_CURRENT_NATIVE_OUTPUT_ATTR;
    if (current) {
        const bool native = cmd == RKNN_QUERY_CURRENT_NATIVE_INPUT_ATTR || cmd == RKNN_QUERY_CURRENT_NATIVE_OUTPUT_ATTR;
        if (native && !dynamic_)
            return Status(StatusCode::kFailedPrecondition,
                          "CURRENT_NATIVE_*_ATTR: the model has static input shapes (NATIVE_*_ATTR describes them)");
        if (dynamic_ && !shape_chosen_)
            return Status(StatusCode::kFailedPrecondition,
                          "CURRENT_*_ATTR: no shape set chosen yet; call rknn_set_input_shapes first");
    }
    if (cmd == RKNN_QUERY_NATIVE_NHWC_OUTPUT_ATTR && dynamic_)
        return Status(StatusCode::kFailedPrecondition, "NATIVE_NHWC_OUTPUT_ATTR: not offered for dynamic-shape models");
    const PlanState& state = current ? *set_ : *main_set_;
    const bool input = cmd == RKNN_QUERY_INPUT_ATTR || cmd == RKNN_QUERY_NATIVE_INPUT_ATTR ||
                       cmd == RKNN_QUERY_NATIVE_NHWC_INPUT_ATTR || cmd == RKNN_QUERY_CURRENT_INPUT_ATTR ||
                       cmd == RKNN_QUERY_CURRENT_NATIVE_INPUT_ATTR;
    const graph::Graph& g = state.plan->graph;
    const std::vector<int32_t>& list = input ? g.inputs : g.outputs;
    if (attr->index >= list.size())
        return make_status(StatusCode::kInvalidArgument, "index %u: the model has %zu %s", attr->index, list.size(),
                           input ? "input(s)" : "output(s)");
    AttrKind kind = AttrKind::kUser;
    if (cmd == RKNN_QUERY_NATIVE_INPUT_ATTR || cmd == RKNN_QUERY_NATIVE_OUTPUT_ATTR ||
        cmd == RKNN_QUERY_CURRENT_NATIVE_INPUT_ATTR || cmd == RKNN_QUERY_CURRENT_NATIVE_OUTPUT_ATTR)
        kind = AttrKind::kNative;
    if (cmd == RKNN_QUERY_NATIVE_NHWC_INPUT_ATTR || cmd == RKNN_QUERY_NATIVE_NHWC_OUTPUT_ATTR) kind = AttrKind::kNativeNhwc;
    const Schedule& schedule = state.lowered->schedule;
    const bool on_device = input ? schedule.input_on_device[attr->index] : schedule.output_on_device[attr->index];
    const int32_t t = list[attr->index];
    fill_tensor_attr(g.tensors[static_cast<size_t>(t)], input, kind, on_device,
                     state.plan->memory.homes[static_cast<size_t>(t)].packed_row_pixels, state.plan->memory.form, attr);
    return Status::ok();
}

Status Context::query(int cmd, void* info, uint32_t size) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (batch_) return batch_->query(cmd, info, size);
    if (is_tensor_attr_query(cmd)) {
        RKNN_RETURN_IF_ERROR(expect_size(size, sizeof(rknn_tensor_attr), "rknn_tensor_attr"));
        return query_tensor_attr(cmd, static_cast<rknn_tensor_attr*>(info));
    }
    switch (cmd) {
        case RKNN_QUERY_IN_OUT_NUM: {
            RKNN_RETURN_IF_ERROR(expect_size(size, sizeof(rknn_input_output_num), "rknn_input_output_num"));
            auto* num = static_cast<rknn_input_output_num*>(info);
            num->n_input = static_cast<uint32_t>(main_set_->plan->graph.inputs.size());
            num->n_output = static_cast<uint32_t>(main_set_->plan->graph.outputs.size());
            return Status::ok();
        }
        case RKNN_QUERY_INPUT_DYNAMIC_RANGE:
            RKNN_RETURN_IF_ERROR(expect_size(size, sizeof(rknn_input_range), "rknn_input_range"));
            return query_dynamic_range(static_cast<rknn_input_range*>(info));
        case RKNN_QUERY_OPENRKNN_INPUT_SHAPE_RANGE:
            RKNN_RETURN_IF_ERROR(
                expect_size(size, sizeof(rknn_openrknn_shape_range), "rknn_openrknn_shape_range"));
            return query_shape_range(static_cast<rknn_openrknn_shape_range*>(info));
        case RKNN_QUERY_SDK_VERSION: {
            RKNN_RETURN_IF_ERROR(expect_size(size, sizeof(rknn_sdk_version), "rknn_sdk_version"));
            auto* version = static_cast<rknn_sdk_version*>(info);
            std::memset(version, 0, sizeof(*version));
            std::snprintf(version->api_version, sizeof(version->api_version), "%s", version::api_version());
            auto identity = driver_->driver->identify();
            std::snprintf(version->drv_version, sizeof(version->drv_version), "%s",
                          identity.is_ok() ? identity.value().version.c_str() : "unknown");
            return Status::ok();
        }
        case RKNN_QUERY_MEM_SIZE: {
            RKNN_RETURN_IF_ERROR(expect_size(size, sizeof(rknn_mem_size), "rknn_mem_size"));
            auto* mem = static_cast<rknn_mem_size*>(info);
            std::memset(mem, 0, sizeof(*mem));
            mem->total_weight_size = static_cast<uint32_t>(buffer_bytes_[kWeightBuffer]);
            mem->total_internal_size = static_cast<uint32_t>(buffer_bytes_[kInternalBuffer]);
            mem->total_dma_allocated_size = buffers_->total_allocated();
            if (master_plan_ != nullptr) {  // the master's weights: counted by the master
                mem->total_weight_size = 0;
                mem->total_dma_allocated_size -= buffers_->allocated(kWeightBuffer);
            }
            if (uses_sram_) {  // 0 when SRAM is off or absent
                mem->total_sram_size = static_cast<uint32_t>(sram_total());
                auto free_sram = driver_->driver->action(driver::Action::kGetFreeSramSize);
                mem->free_sram_size = free_sram.is_ok() ? free_sram.value() : 0;
            }
            return Status::ok();
        }
        case RKNN_QUERY_CUSTOM_STRING: {
            RKNN_RETURN_IF_ERROR(expect_size(size, sizeof(rknn_custom_string), "rknn_custom_string"));
            auto* custom = static_cast<rknn_custom_string*>(info);
            std::memset(custom, 0, sizeof(*custom));
            std::snprintf(custom->string, sizeof(custom->string), "%s", set_->plan->graph.custom_string.c_str());
            return Status::ok();
        }
        case RKNN_QUERY_PERF_RUN: {
            RKNN_RETURN_IF_ERROR(expect_size(size, sizeof(rknn_perf_run), "rknn_perf_run"));
            if (runs_ == 0) return Status(StatusCode::kFailedPrecondition, "PERF_RUN needs a finished rknn_run");
            static_cast<rknn_perf_run*>(info)->run_duration = last_run_us_;
            return Status::ok();
        }
        case RKNN_QUERY_PERF_DETAIL: {
            RKNN_RETURN_IF_ERROR(expect_size(size, sizeof(rknn_perf_detail), "rknn_perf_detail"));
            if (runs_ == 0) return Status(StatusCode::kFailedPrecondition, "PERF_DETAIL needs a finished rknn_run");
            auto* detail = static_cast<rknn_perf_detail*>(info);
            perf_text_ = perf_table();  // made on demand: runs do not pay for it
            detail->perf_data = perf_text_.data();
            detail->data_len = perf_text_.size();
            return Status::ok();
        }
        default:
            return make_status(StatusCode::kUnimplemented, "query %d: not implemented", cmd);
    }
}

// Device buffers, then every tensor with a device home, then totals.
std::string Context::memory_table() const {
    std::string text = "memory plan (device buffers):\n";
    char line[512];
    std::snprintf(line, sizeof(line), "  %-10s %12s\n", "buffer", "bytes");
    text += line;
    const char* fixed[] = {"weights", "internal"};
    for (int32_t id = 0; id < regcmd_buffer_; ++id) {
        const std::string name = id < kFirstIoBuffer ? fixed[id] : "io" + std::to_string(id - kFirstIoBuffer);
        std::snprintf(line, sizeof(line), "  %-10s %12llu\n", name.c_str(),
                      static_cast<unsigned long long>(buffers_->size(id)));
        text += line;
    }
    std::snprintf(line, sizeof(line), "  %-10s %12llu\n", "regcmd", static_cast<unsigned long long>(buffers_->size(regcmd_buffer_)));
    text += line;
    std::snprintf(line, sizeof(line), "  %-6s %-10s %10s %10s  %s\n", "tensor", "buffer", "offset", "bytes", "name");
    text += line;
    for (size_t t = 0; t < set_->plan->memory.homes.size(); ++t) {
        const DeviceHome& home = set_->plan->memory.homes[t];
        if (!home.valid()) continue;
        const std::string buffer = home.buffer < kFirstIoBuffer ? fixed[home.buffer]
                                                                : "io" + std::to_string(home.buffer - kFirstIoBuffer);
        std::snprintf(line, sizeof(line), "  %-6zu %-10s %10llu %10llu  %s\n", t, buffer.c_str(),
                      static_cast<unsigned long long>(home.offset), static_cast<unsigned long long>(home.bytes),
                      set_->plan->graph.tensors[t].name.c_str());
        text += line;
    }
    std::snprintf(line, sizeof(line),
                  "total: weights %llu, internal %llu (tensors %llu before sharing, scratch %llu), allocated %llu bytes\n",
                  static_cast<unsigned long long>(buffer_bytes_[kWeightBuffer]),
                  static_cast<unsigned long long>(buffer_bytes_[kInternalBuffer]),
                  static_cast<unsigned long long>(set_->plan->memory.internal_tensor_bytes),
                  static_cast<unsigned long long>(set_->plan->memory.scratch_bytes),
                  static_cast<unsigned long long>(buffers_->total_allocated()));
    text += line;
    return text;
}

// One row per op in run order. Ops sharing a segment share its time, shown
// on the segment's first op (RKNN_FLAG_COLLECT_PERF_MASK or
// RKNN_LOG_LEVEL >= 4 give every NPU op a segment of its own). NPU(us) is
// the part the kernel driver reports as NPU time (on the mock: the emulated
// tasks and the mock kernel's dispatch), the rest of Time(us) the runtime's.
// A custom op that ran its callbacks gets an exDataConvert row before and
// after it (its inputs into the callbacks' float32, its outputs back), and
// its own row the callbacks' time, on the GPU for a GPU op. On multi-core
// SoCs WorkLoad(0/1/2) gives each core's share of the segment's tasks, from
// the core mask the driver reports back (the kernel's choice under AUTO).
std::string Context::perf_table() const {
    const size_t n_ops = set_->plan->graph.ops.size();
    std::vector<int64_t> op_us(n_ops, -1), op_npu_ns(n_ops, -1);
    std::vector<std::array<uint32_t, driver::kMaxCores>> op_core_tasks(n_ops);
    for (size_t i = 0; i < set_->lowered->schedule.steps.size(); ++i) {
        const Step& step = set_->lowered->schedule.steps[i];
        const int32_t first = step.npu ? set_->lowered->schedule.segments[static_cast<size_t>(step.index)].ops.front()
                                       : set_->lowered->schedule.cpu_steps[static_cast<size_t>(step.index)].op;
        op_us[static_cast<size_t>(first)] = set_->step_us[i];
        op_npu_ns[static_cast<size_t>(first)] = set_->step_npu_ns[i];
        op_core_tasks[static_cast<size_t>(first)] = set_->step_core_tasks[i];
    }
    // Multi-core SoCs get the vendor's WorkLoad column: which cores ran each step.
    const int cores = std::min(driver_->soc->num_cores, driver::kMaxCores);
    std::string workload_title;
    for (int c = 0; c < cores && cores > 1; ++c) workload_title += (c > 0 ? "/" : "WorkLoad(") + std::to_string(c);
    if (!workload_title.empty()) workload_title += ")";
    const auto column = [&](const std::string& value) {
        if (workload_title.empty()) return std::string();
        char cell[48];
        std::snprintf(cell, sizeof(cell), " %-20s", value.c_str());
        return std::string(cell);
    };
    std::string text;
    char line[512];
    std::snprintf(line, sizeof(line), "%-5s %-18s %-8s %-6s %-28s %-20s %10s %8s%s  %s\n", "ID", "OpType", "DataType",
                  "Target", "InputShape", "OutputShape", "Time(us)", "NPU(us)", column(workload_title).c_str(),
                  "FullName");
    text += line;
    int64_t total = 0;
    int id = 1;
    uint64_t all_macs = 0, npu_macs = 0;
    std::string cpu_macs;  // a line per op that multiplies off the NPU
    // A custom op's conversions, as the vendor's exDataConvert rows: `us`
    // of the step's time, for the op's inputs or outputs.
    const auto convert_row = [&](const graph::Op& op, const std::vector<int32_t>& tensors, const char* side, int64_t us) {
        std::snprintf(line, sizeof(line), "%-5d %-18s %-8s %-6s %-28s %-20s %10" PRId64 " %8s%s  %s\n", id++,
                      "exDataConvert", "-", "CPU", shapes_of(set_->plan->graph, tensors).c_str(),
                      shapes_of(set_->plan->graph, tensors).c_str(), us, "-",
                      column(workload_of({}, cores, false)).c_str(), (op.name + " (" + side + ")").c_str());
        text += line;
    };
    for (int32_t op_index : set_->plan->order) {
        const graph::Op& op = set_->plan->graph.ops[static_cast<size_t>(op_index)];
        const npu::Placement& p = set_->plan->placements[static_cast<size_t>(op_index)];
        const char* target = p.target == npu::Target::kCpu ? "CPU" : "NPU";
        int64_t us = op_us[static_cast<size_t>(op_index)];
        const CustomOps::Timing& timing = set_->custom_timing[static_cast<size_t>(op_index)];
        int64_t out_us = -1;
        if (us >= 0 && (timing.convert_in_ns > 0 || timing.callbacks_ns > 0)) {
            // The step's time in three rows that add up to it: inputs in,
            // callbacks, outputs back (with what the runtime did around them).
            const int64_t in_us = std::min(us, timing.convert_in_ns / 1000);
            const int64_t call_us = std::min(us - in_us, timing.callbacks_ns / 1000);
            out_us = us - in_us - call_us;
            convert_row(op, op.inputs, "inputs", in_us);
            total += in_us;
            us = call_us;
            if (timing.on_gpu) target = "GPU";
        }
        char time[32] = "-", npu[32] = "-";
        if (us >= 0) {
            std::snprintf(time, sizeof(time), "%" PRId64, us);
            total += us;
        }
        const int64_t npu_ns = op_npu_ns[static_cast<size_t>(op_index)];
        if (npu_ns >= 0) std::snprintf(npu, sizeof(npu), "%" PRId64, npu_ns / 1000);
        const uint64_t macs = graph::multiply_accumulates(set_->plan->graph, op);
        all_macs += macs;
        if (p.target != npu::Target::kCpu) {
            npu_macs += macs;
        } else if (macs > 0) {
            std::snprintf(line, sizeof(line), "  %-18s %12.3f MMACs  %s: %s\n",
                          op.type == graph::OpType::kCustom ? op.custom_type.c_str() : graph::op_type_name(op.type),
                          static_cast<double>(macs) / 1e6, op.name.c_str(), p.reason.c_str());
            cpu_macs += line;
        }
        const graph::DType dtype = op.outputs.empty() ? graph::DType::kUndefined
                                                      : set_->plan->graph.tensors[static_cast<size_t>(op.outputs[0])].dtype;
        const std::string workload =
            column(workload_of(op_core_tasks[static_cast<size_t>(op_index)], cores, p.target != npu::Target::kCpu));
        std::snprintf(line, sizeof(line), "%-5d %-18s %-8s %-6s %-28s %-20s %10s %8s%s  %s\n", id++,
                      op.type == graph::OpType::kCustom ? op.custom_type.c_str() : graph::op_type_name(op.type),
                      graph::dtype_name(dtype), target,
                      shapes_of(set_->plan->graph, op.inputs).c_str(), shapes_of(set_->plan->graph, op.outputs).c_str(), time, npu,
                      workload.c_str(), op.name.c_str());
        text += line;
        if (out_us >= 0) {
            convert_row(op, op.outputs, "outputs", out_us);
            total += out_us;
        }
    }
    std::snprintf(line, sizeof(line), "Total Operator Elapsed Per Frame Time(us): %" PRId64 "\n", total);
    text += line;
    std::snprintf(line, sizeof(line), "Total Run Time(us): %" PRId64 "\n", last_run_us_);
    text += line;
    std::snprintf(line, sizeof(line), "Total NPU Time(us), driver-reported: %" PRId64 "\n", last_run_npu_ns_ / 1000);
    text += line;
    // The share of the network's multiply-accumulates the NPU does (Conv,
    // ConvTranspose, Gemm, MatMul), and each op that does them elsewhere.
    std::snprintf(line, sizeof(line), "Total MACs: %.3f M, on the NPU: %.3f M (%.2f%%)\n", static_cast<double>(all_macs) / 1e6,
                  static_cast<double>(npu_macs) / 1e6,
                  all_macs > 0 ? 100.0 * static_cast<double>(npu_macs) / static_cast<double>(all_macs) : 100.0);
    text += line;
    if (!cpu_macs.empty()) text += "MACs off the NPU:\n" + cpu_macs;
    return text;
}

}  // namespace rknn::runtime
