#include "runtime/schedule.h"

#include "graph/topology.h"

namespace rknn::runtime {

Schedule build_schedule(const graph::Graph& g, const std::vector<int32_t>& order,
                        const std::vector<npu::Placement>& placements, const MemoryPlan& memory, bool op_per_segment) {
    const std::vector<int32_t> producer = graph::producers(g);
    const auto on_npu = [&](int32_t op) { return op >= 0 && placements[static_cast<size_t>(op)].target == npu::Target::kNpu; };
    const auto has_home = [&](int32_t t) { return memory.homes[static_cast<size_t>(t)].valid(); };

    Schedule s;
    std::vector<bool> unpacked(g.tensors.size(), false);
    bool open_segment = false;
    for (int32_t op_index : order) {
        const npu::Placement& p = placements[static_cast<size_t>(op_index)];
        const graph::Op& op = g.ops[static_cast<size_t>(op_index)];
        if (p.target == npu::Target::kNpu) {
            if (p.form != npu::NpuForm::kTasks) continue;
            if (!open_segment || op_per_segment) {
                s.segments.emplace_back();
                s.steps.push_back({true, static_cast<int32_t>(s.segments.size() - 1)});
                open_segment = true;
            }
            s.segments.back().ops.push_back(op_index);
            continue;
        }
        open_segment = false;
        CpuStep step;
        step.op = op_index;
        for (int32_t t : op.inputs) {
            if (t < 0 || g.is_constant(t) || unpacked[static_cast<size_t>(t)]) continue;
            if (on_npu(producer[static_cast<size_t>(t)]) && has_home(t)) {
                step.unpack_before.push_back(t);
                unpacked[static_cast<size_t>(t)] = true;
            }
        }
        for (int32_t t : op.outputs)
            if (t >= 0 && has_home(t)) step.pack_after.push_back(t);
        s.cpu_steps.push_back(step);
        s.steps.push_back({false, static_cast<int32_t>(s.cpu_steps.size() - 1)});
    }
    // A graph output that is also an input lives in its device home too.
    for (int32_t t : g.outputs) {
        const int32_t p = producer[static_cast<size_t>(t)];
        s.output_on_device.push_back(has_home(t) && !g.is_constant(t) && (p < 0 || on_npu(p)));
    }
    for (int32_t t : g.inputs) s.input_on_device.push_back(has_home(t));
    return s;
}

}  // namespace rknn::runtime
