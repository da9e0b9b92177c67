#include "runtime/npu_segments.h"

#include <cstring>

namespace rknn::runtime {
namespace {

constexpr uint64_t kStreamAlignment = 128;

npu::BufferRef ref(const DeviceHome& home) { return npu::BufferRef(home.buffer, home.offset); }

}  // namespace

StatusOr<std::vector<SegmentProgram>> lower_segments(const graph::Graph& g, const Schedule& schedule,
                                                     const std::vector<npu::Placement>& placements,
                                                     const MemoryPlan& memory, const hw::SocProfile& soc,
                                                     uint32_t core_mask) {
    std::vector<SegmentProgram> out;
    uint64_t offset = 0;
    for (const NpuSegment& segment : schedule.segments) {
        npu::ProgramBuilder builder(soc);
        for (int32_t op_index : segment.ops) {
            const graph::Op& op = g.ops[static_cast<size_t>(op_index)];
            const npu::PreparedOp& prepared = *placements[static_cast<size_t>(op_index)].prepared;
            npu::OpBuffers buffers;
            for (int index : prepared.feature_inputs()) {
                const DeviceHome& home = memory.homes[static_cast<size_t>(op.inputs[static_cast<size_t>(index)])];
                if (home.packed_row_pixels > 0) {
                    if (!buffers.features.empty() || !prepared.reads_packed_input())
                        return RKNN_INTERNAL_ERROR("op \"%s\" cannot read its packed input", op.name.c_str());
                    buffers.packed_row_pixels = static_cast<int>(home.packed_row_pixels);
                }
                buffers.features.push_back(ref(home));
            }
            for (uint64_t constant : memory.constant_offsets[static_cast<size_t>(op_index)])
                buffers.constants.push_back(npu::BufferRef(kWeightBuffer, constant));
            buffers.output = ref(memory.homes[static_cast<size_t>(op.outputs[0])]);
            buffers.scratch = npu::BufferRef(kInternalBuffer, memory.scratch_offset);
            RKNN_RETURN_IF_ERROR(prepared.lower(buffers, soc, core_mask, &builder)
                                     .with_context(std::string(graph::op_type_name(op.type)) + " \"" + op.name + "\""));
        }
        SegmentProgram program;
        program.program = builder.finish();
        program.regcmd_offset = offset;
        offset += (program.program.bytes() + kStreamAlignment - 1) / kStreamAlignment * kStreamAlignment;
        out.push_back(std::move(program));
    }
    return out;
}

uint64_t regcmd_bytes(const std::vector<SegmentProgram>& segments) {
    if (segments.empty()) return 0;
    return segments.back().regcmd_offset + segments.back().program.bytes();
}

Status write_constants(const std::vector<npu::Placement>& placements, const MemoryPlan& memory,
                       const DeviceBuffers& buffers) {
    for (size_t i = 0; i < placements.size(); ++i) {
        const npu::Placement& p = placements[i];
        if (p.target != npu::Target::kNpu || p.prepared == nullptr) continue;
        const auto& constants = p.prepared->constants();
        for (size_t k = 0; k < constants.size(); ++k)
            std::memcpy(buffers.host(kWeightBuffer) + memory.constant_offsets[i][k], constants[k].data(),
                        constants[k].size());
    }
    return buffers.flush(kWeightBuffer);
}

StatusOr<std::vector<driver::SubmitRequest>> link_segments(const std::vector<SegmentProgram>& segments,
                                                          const std::vector<uint64_t>& bases, uint64_t stream_base,
                                                          uint8_t* stream_host, uint32_t timeout_ms) {
    std::vector<driver::SubmitRequest> submits;
    submits.reserve(segments.size());
    for (const SegmentProgram& segment : segments) {
        const uint64_t stream = stream_base + segment.regcmd_offset;
        RKNN_ASSIGN_OR_RETURN(std::vector<uint64_t> words, segment.program.link(stream, bases));
        std::memcpy(stream_host + segment.regcmd_offset, words.data(), words.size() * sizeof(uint64_t));
        submits.push_back(make_submit(segment.program, stream, timeout_ms));
    }
    return submits;
}

driver::SubmitRequest make_submit(const npu::Program& program, uint64_t stream, uint32_t timeout_ms) {
    driver::SubmitRequest submit;
    submit.tasks.reserve(program.tasks.size());
    for (const npu::ProgramTask& t : program.tasks) {
        driver::Task task;
        task.regcmd_addr = stream + uint64_t{t.first_word} * sizeof(uint64_t);
        task.regcmd_words = t.body_words + hw::kTailWords;
        task.enable_mask = t.enable_mask;
        task.int_mask = t.int_mask;
        submit.tasks.push_back(task);
    }
    submit.core_mask = program.core_mask;
    submit.flags = driver::submit_flag::kPingPong;
    submit.timeout_ms = timeout_ms;
    if (__builtin_popcount(program.core_mask) > 1) {
        for (size_t c = 0; c < npu::kMaxProgramCores; ++c)
            submit.core_tasks[c] = {program.cores[c].start, program.cores[c].count};
    }
    return submit;
}

StatusOr<SegmentRun> submit_segment(driver::KernelDriver* driver, const SegmentProgram& segment,
                                    const driver::SubmitRequest& submit) {
    const npu::Program& program = segment.program;
    RKNN_ASSIGN_OR_RETURN(driver::SubmitResult result, driver->submit(submit));
    if (result.task_counter != program.tasks.size())
        return make_status(StatusCode::kInternal, "the NPU completed %u of %zu tasks", result.task_counter,
                           program.tasks.size());
    SegmentRun run;
    run.npu_ns = result.hw_elapse_ns;
    // Only the cores the driver reports (rocket reports none: it places jobs
    // itself); a job split over them runs each core's range of tasks.
    const uint32_t ran = result.core_mask;
    bool split = false;
    for (int core = 0; core < driver::kMaxCores; ++core) {
        if (!(ran & submit.core_mask & (1u << core))) continue;
        run.core_tasks[static_cast<size_t>(core)] = submit.core_tasks[static_cast<size_t>(core)].count;
        split = split || submit.core_tasks[static_cast<size_t>(core)].count > 0;
    }
    if (!split) {
        run.core_tasks = {};
        const bool one_core = ran != 0 && (ran & (ran - 1)) == 0;
        for (int core = 0; one_core && core < driver::kMaxCores; ++core)
            if (ran == (1u << core)) run.core_tasks[static_cast<size_t>(core)] = result.task_counter;
    }
    return run;
}

}  // namespace rknn::runtime
