// Cache maintenance of a context's device buffers around each submit.
//
// The CPU and the NPU share cacheable buffers. Syncing whole buffers is
// simple but costs a pass over all internal memory twice per segment (1.5 MB
// for mobilenet_v2), so only ranges are synced:
//   - before a submit, the ranges the CPU wrote (inputs, CPU steps' outputs);
//   - after it, the ranges the host reads next (tensors CPU steps unpack, the
//     model's outputs) that the segment's ops wrote.
// Cache maintenance works on whole lines, and a line the CPU wrote is written
// back whole, so a line the CPU shares with bytes the NPU wrote must be
// current before the CPU writes its part: begin_cpu_write invalidates such
// boundary lines first, unless the CPU already wrote to them since the last
// submit (then they are current). Lines the host never touches may stay
// stale in the cache: they are clean, so nothing writes them back, and
// nothing reads them.
#include <algorithm>

#include "base/log.h"
#include "runtime/context.h"

namespace rknn::runtime {
namespace {

// A cache line on the boards' CPUs (Cortex-A76/A55) and x86.
constexpr uint64_t kLine = 64;

uint64_t line_down(uint64_t v) { return v / kLine * kLine; }
uint64_t line_up(uint64_t v) { return (v + kLine - 1) / kLine * kLine; }

}  // namespace

void Context::plan_host_reads(PlanState& state) {
    state.host_reads.clear();
    const auto add = [&state](int32_t t, bool cpu_step) {
        const DeviceHome& home = state.plan->memory.homes[static_cast<size_t>(t)];
        if (!home.valid()) return;
        const uint64_t start = line_down(home.offset);
        state.host_reads.push_back({home.buffer, start, line_up(home.offset + home.bytes) - start, cpu_step});
    };
    const Schedule& schedule = state.lowered->schedule;
    for (const CpuStep& step : schedule.cpu_steps)
        for (int32_t t : step.unpack_before) add(t, true);
    for (int32_t t : state.plan->graph.outputs)
        if (t >= 0) add(t, false);
    // What each segment writes: its ops' outputs (in-place Concat parts and
    // aliases are slices of those bytes).
    const auto overlaps = [](const DeviceHome& home, const ByteRange& r) {
        return home.valid() && home.buffer == r.buffer && home.offset < r.offset + r.bytes &&
               r.offset < home.offset + home.bytes;
    };
    state.segment_host_reads.assign(schedule.segments.size(), {});
    for (size_t s = 0; s < schedule.segments.size(); ++s) {
        std::vector<const DeviceHome*> written;
        for (int32_t op : schedule.segments[s].ops)
            for (int32_t t : state.plan->graph.ops[static_cast<size_t>(op)].outputs)
                if (t >= 0) written.push_back(&state.plan->memory.homes[static_cast<size_t>(t)]);
        for (size_t i = 0; i < state.host_reads.size(); ++i)
            if (std::any_of(written.begin(), written.end(), [&](const DeviceHome* home) { return overlaps(*home, state.host_reads[i]); }))
                state.segment_host_reads[s].push_back(i);
    }
}

Status Context::begin_cpu_write(const DeviceHome& home) {
    if (!ranged_sync_) {
        cpu_wrote_ = true;
        return Status::ok();
    }
    const uint64_t start = home.offset, end = home.offset + home.bytes;
    // A line the write covers only in part, unless the CPU already wrote to it since the last submit.
    const auto make_current = [this, &home](uint64_t line) -> Status {
        for (const ByteRange& r : cpu_written_)
            if (r.buffer == home.buffer && line >= r.offset && line < r.offset + r.bytes) return Status::ok();
        return buffers_->invalidate(home.buffer, line, kLine);
    };
    if (start % kLine != 0) RKNN_RETURN_IF_ERROR(make_current(line_down(start)));
    if (end % kLine != 0 && (start % kLine == 0 || line_down(end) != line_down(start)))
        RKNN_RETURN_IF_ERROR(make_current(line_down(end)));
    const ByteRange range{home.buffer, line_down(start), line_up(end) - line_down(start)};
    for (const ByteRange& r : cpu_written_)
        if (r.buffer == range.buffer && r.offset == range.offset && r.bytes == range.bytes) return Status::ok();
    cpu_written_.push_back(range);
    return Status::ok();
}

Status Context::sync_before_submit() {
    if (ranged_sync_) {
        for (const ByteRange& r : cpu_written_) RKNN_RETURN_IF_ERROR(buffers_->flush(r.buffer, r.offset, r.bytes));
        cpu_written_.clear();
        return Status::ok();
    }
    if (!cpu_wrote_) return Status::ok();
    // Views are synced with the buffer they are part of; inputs read in place
    // were flushed at the start of the run (or are the client's to sync).
    for (int32_t id = kInternalBuffer; id < regcmd_buffer_; ++id)
        if (!buffers_->is_view(id) && !client_input_buffers_[static_cast<size_t>(id)])
            RKNN_RETURN_IF_ERROR(buffers_->flush(id));
    cpu_wrote_ = false;
    return Status::ok();
}

Status Context::sync_after_submit(int32_t segment, bool whole_buffers) {
    // Inputs read in place are not invalidated: that would drop what the
    // client wrote and has not synced yet (the NPU does not write them).
    // Ranged: outputs in the client's memory under DISABLE_FLUSH_OUTPUT_MEM_CACHE
    // are the client's to invalidate, unless a CPU step of the run reads them.
    if (ranged_sync_ && !whole_buffers) {
        const auto invalidate = [this](const ByteRange& r) -> Status {
            const auto id = static_cast<size_t>(r.buffer);
            if (!client_input_buffers_[id] && (r.cpu_step || !client_output_buffers_[id]))
                return buffers_->invalidate(r.buffer, r.offset, r.bytes);
            return Status::ok();
        };
        if (segment >= 0 && static_cast<size_t>(segment) < set_->segment_host_reads.size()) {
            for (size_t i : set_->segment_host_reads[static_cast<size_t>(segment)]) RKNN_RETURN_IF_ERROR(invalidate(set_->host_reads[i]));
        } else {
            for (const ByteRange& r : set_->host_reads) RKNN_RETURN_IF_ERROR(invalidate(r));
        }
        return Status::ok();
    }
    for (int32_t id = kInternalBuffer; id < regcmd_buffer_; ++id)
        if (!buffers_->is_view(id) && !client_input_buffers_[static_cast<size_t>(id)])
            RKNN_RETURN_IF_ERROR(buffers_->invalidate(id));
    return Status::ok();
}

}  // namespace rknn::runtime
