#include "runtime/memory_plan.h"

#include <algorithm>
#include <numeric>
#include <set>

#include "graph/topology.h"
#include "npu/concat_plan.h"
#include "runtime/native_tensor.h"

namespace rknn::runtime {
namespace {

// A tensor stored inside another one's bytes.
struct Link {
    int32_t parent = -1;
    uint64_t offset = 0;
};

int32_t root_of(const std::vector<Link>& links, int32_t t, uint64_t* offset) {
    *offset = 0;
    while (links[static_cast<size_t>(t)].parent >= 0) {
        *offset += links[static_cast<size_t>(t)].offset;
        t = links[static_cast<size_t>(t)].parent;
    }
    return t;
}

void move_to_cpu(npu::Placement* p, const std::string& why) {
    p->target = npu::Target::kCpu;
    p->form = npu::NpuForm::kTasks;
    p->prepared.reset();
    p->reason = why;
}

// Links the tensors of in-place ops; an op whose tensors are taken goes to the CPU.
void bind_in_place(const graph::Graph& g, const std::vector<int32_t>& order, std::vector<npu::Placement>* placements,
                   const NativeForm& form, std::vector<Link>* links) {
    const hw::NpuArch arch = form.rk356x ? hw::NpuArch::kRk356x : hw::NpuArch::kRk3588;
    for (int32_t op_index : order) {
        npu::Placement& p = (*placements)[static_cast<size_t>(op_index)];
        if (p.target != npu::Target::kNpu || p.form == npu::NpuForm::kTasks) continue;
        const graph::Op& op = g.ops[static_cast<size_t>(op_index)];
        if (p.form == npu::NpuForm::kAlias) {
            (*links)[static_cast<size_t>(op.outputs[0])] = {op.inputs[0], 0};
            continue;
        }
        if (p.form == npu::NpuForm::kSplitInPlace) {
            auto plan = npu::plan_split_in_place(g, op, arch);
            bool free = plan.is_ok();
            for (int32_t y : op.outputs) free = free && (*links)[static_cast<size_t>(y)].parent < 0;
            if (!free) {
                move_to_cpu(&p, plan.is_ok() ? "an output is already placed inside another tensor" : plan.status().message());
                continue;
            }
            for (size_t i = 0; i < op.outputs.size(); ++i)
                (*links)[static_cast<size_t>(op.outputs[i])] = {op.inputs[0], plan.value().output_offsets[i]};
            continue;
        }
        auto plan = npu::plan_concat_in_place(g, op, arch);
        std::set<int32_t> seen;
        bool free = plan.is_ok();
        for (int32_t x : op.inputs) {
            if (!free) break;
            free = x >= 0 && !g.is_constant(x) && (*links)[static_cast<size_t>(x)].parent < 0 && seen.insert(x).second;
        }
        if (!free) {
            move_to_cpu(&p, plan.is_ok() ? "an input is constant, repeated or already placed inside another tensor"
                                         : plan.status().message());
            continue;
        }
        for (size_t i = 0; i < op.inputs.size(); ++i)
            (*links)[static_cast<size_t>(op.inputs[i])] = {op.outputs[0], plan.value().input_offsets[i]};
    }
}

// The tensors each NPU op reads or writes in device memory.
std::vector<bool> device_tensors(const graph::Graph& g, std::vector<npu::Placement>* placements) {
    std::vector<bool> on_device(g.tensors.size(), false);
    for (size_t i = 0; i < g.ops.size(); ++i) {
        npu::Placement& p = (*placements)[i];
        if (p.target != npu::Target::kNpu) continue;
        const graph::Op& op = g.ops[i];
        std::vector<int32_t> touched(op.outputs.begin(), op.outputs.begin() + 1);
        if (p.form == npu::NpuForm::kTasks) {
            for (int index : p.prepared->feature_inputs()) touched.push_back(op.inputs[static_cast<size_t>(index)]);
        } else if (p.form == npu::NpuForm::kSplitInPlace) {
            touched.assign(op.outputs.begin(), op.outputs.end());
            touched.push_back(op.inputs[0]);  // the split sizes: a constant, not a feature
        } else if (p.form == npu::NpuForm::kAlias) {
            touched.push_back(op.inputs[0]);  // Reshape's shape, (Un)Squeeze's axes: constants, not features
        } else {
            touched.insert(touched.end(), op.inputs.begin(), op.inputs.end());
        }
        const bool cubes = std::all_of(touched.begin(), touched.end(), [&](int32_t t) {
            return t >= 0 && !g.is_constant(t) && has_native_cube(g.tensors[static_cast<size_t>(t)]);
        });
        if (!cubes) {
            move_to_cpu(&p, "a feature tensor has no native cube");
            continue;
        }
        for (int32_t t : touched) on_device[static_cast<size_t>(t)] = true;
    }
    return on_device;
}

// Whether graph input `t`, alone in its region, can stay a channel-packed
// image: every op reading it is an NPU convolution taking it as its main
// input and able to read it that way.
bool packable_input(const graph::Graph& g, int32_t t, const std::vector<npu::Placement>& placements,
                    const NativeForm& form) {
    if (packed_image_row_pixels(g.tensors[static_cast<size_t>(t)], form) == 0) return false;
    if (std::find(g.outputs.begin(), g.outputs.end(), t) != g.outputs.end()) return false;
    for (size_t i = 0; i < g.ops.size(); ++i) {
        const graph::Op& op = g.ops[i];
        const int reads = static_cast<int>(std::count(op.inputs.begin(), op.inputs.end(), t));
        if (reads == 0) continue;
        const npu::Placement& p = placements[i];
        if (p.target != npu::Target::kNpu || p.form != npu::NpuForm::kTasks || !p.prepared->reads_packed_input() ||
            reads != 1 || op.inputs[static_cast<size_t>(p.prepared->feature_inputs()[0])] != t)
            return false;
    }
    return true;
}

struct Region {
    int32_t root = -1;
    uint64_t bytes = 0;
    int32_t first = 0, last = 0;  // positions in the order, inclusive
    bool io = false;
    int32_t buffer = -1;
    uint64_t offset = 0;
};

// Lowest offsets in the shared buffer for regions with overlapping lifetimes
// kept apart: largest first, each into the first gap that fits.
uint64_t place_internal(std::vector<Region*> regions) {
    std::stable_sort(regions.begin(), regions.end(), [](const Region* a, const Region* b) { return a->bytes > b->bytes; });
    std::vector<const Region*> placed;
    uint64_t end = 0;
    for (Region* r : regions) {
        std::vector<const Region*> live;
        for (const Region* q : placed)
            if (q->first <= r->last && r->first <= q->last) live.push_back(q);
        std::sort(live.begin(), live.end(), [](const Region* a, const Region* b) { return a->offset < b->offset; });
        uint64_t offset = 0;
        for (const Region* q : live) {
            if (offset + plan_aligned(r->bytes) <= q->offset) break;
            offset = std::max(offset, q->offset + plan_aligned(q->bytes));
        }
        r->offset = offset;
        r->buffer = kInternalBuffer;
        end = std::max(end, offset + plan_aligned(r->bytes));
        placed.push_back(r);
    }
    return end;
}

}  // namespace

StatusOr<MemoryPlan> plan_memory(const graph::Graph& g, const std::vector<int32_t>& order,
                                 std::vector<npu::Placement>* placements, const NativeForm& form, bool share_internal) {
    std::vector<Link> links(g.tensors.size());
    bind_in_place(g, order, placements, form, &links);
    std::vector<bool> on_device = device_tensors(g, placements);
    // A tensor that left the device with its op may still be linked: drop
    // links of tensors no NPU op touches (their op went to the CPU).
    for (size_t t = 0; t < links.size(); ++t)
        if (!on_device[t]) links[t] = {};
    for (size_t t = 0; t < links.size(); ++t)
        if (links[t].parent >= 0 && !on_device[static_cast<size_t>(links[t].parent)]) links[t] = {};

    const std::vector<graph::TensorLifetime> life = graph::tensor_lifetimes(g, order);
    std::vector<bool> is_io(g.tensors.size(), false);
    for (int32_t t : g.inputs) is_io[static_cast<size_t>(t)] = true;
    for (int32_t t : g.outputs) is_io[static_cast<size_t>(t)] = true;

    std::vector<int32_t> region_of_root(g.tensors.size(), -1);
    std::vector<Region> regions;
    MemoryPlan plan;
    plan.form = form;
    plan.homes.resize(g.tensors.size());
    for (size_t t = 0; t < g.tensors.size(); ++t) {
        if (!on_device[t]) continue;
        uint64_t offset = 0;
        const int32_t root = root_of(links, static_cast<int32_t>(t), &offset);
        int32_t& index = region_of_root[static_cast<size_t>(root)];
        if (index < 0) {
            index = static_cast<int32_t>(regions.size());
            Region r;
            r.root = root;
            r.bytes = native_cube_bytes(g.tensors[static_cast<size_t>(root)], form);
            r.first = static_cast<int32_t>(order.size());
            r.last = -1;
            regions.push_back(r);
        }
        Region& r = regions[static_cast<size_t>(index)];
        r.first = std::min(r.first, life[t].first);
        r.last = std::max({r.last, life[t].last, life[t].first});
        r.io = r.io || is_io[t];
        plan.homes[t] = {index, offset, native_cube_bytes(g.tensors[t], form)};  // region index for now
    }

    std::vector<int> members(regions.size(), 0);
    for (const DeviceHome& home : plan.homes)
        if (home.valid()) ++members[static_cast<size_t>(home.buffer)];
    for (int32_t t : g.inputs) {
        DeviceHome& home = plan.homes[static_cast<size_t>(t)];
        if (!home.valid() || members[static_cast<size_t>(home.buffer)] != 1 || !packable_input(g, t, *placements, form))
            continue;
        const graph::Tensor& tensor = g.tensors[static_cast<size_t>(t)];
        home.packed_row_pixels = packed_image_row_pixels(tensor, form);
        home.bytes = packed_image_bytes(tensor, form);
        regions[static_cast<size_t>(home.buffer)].bytes = home.bytes;
    }

    plan.buffer_bytes.assign(kFirstIoBuffer, 0);
    std::vector<Region*> internal;
    for (Region& r : regions) {
        if (r.io) {
            r.buffer = static_cast<int32_t>(plan.buffer_bytes.size());
            plan.buffer_bytes.push_back(plan_aligned(r.bytes));
        } else {
            internal.push_back(&r);
            plan.internal_tensor_bytes += plan_aligned(r.bytes);
        }
    }
    if (!share_internal) {
        for (Region* r : internal) r->first = 0, r->last = static_cast<int32_t>(order.size());
    }
    plan.scratch_offset = place_internal(internal);
    for (const npu::Placement& p : *placements)
        if (p.prepared != nullptr) plan.scratch_bytes = std::max<uint64_t>(plan.scratch_bytes, p.prepared->scratch_bytes());
    plan.buffer_bytes[kInternalBuffer] = plan.scratch_offset + plan_aligned(plan.scratch_bytes);

    for (DeviceHome& home : plan.homes) {
        if (!home.valid()) continue;
        const Region& r = regions[static_cast<size_t>(home.buffer)];
        home.buffer = r.buffer;
        home.offset += r.offset;
    }

    plan.constant_offsets.resize(g.ops.size());
    uint64_t weights = 0;
    for (size_t i = 0; i < g.ops.size(); ++i) {
        const npu::Placement& p = (*placements)[i];
        if (p.target != npu::Target::kNpu || p.prepared == nullptr) continue;
        for (const auto& bytes : p.prepared->constants()) {
            plan.constant_offsets[i].push_back(weights);
            weights += plan_aligned(bytes.size());
        }
    }
    plan.buffer_bytes[kWeightBuffer] = weights;
    return plan;
}

void place_io_in_internal(MemoryPlan* plan) {
    uint64_t internal_bytes = 0;
    const std::vector<uint64_t> offsets = common_io_offsets({plan}, &internal_bytes);
    place_io_in_internal_at(plan, offsets, internal_bytes);
}

std::vector<uint64_t> common_io_offsets(const std::vector<const MemoryPlan*>& plans, uint64_t* internal_bytes) {
    uint64_t end = 0;
    size_t ids = 0;
    for (const MemoryPlan* p : plans) {
        end = std::max(end, plan_aligned(p->buffer_bytes[kInternalBuffer]));
        ids = std::max(ids, p->buffer_bytes.size());
    }
    std::vector<uint64_t> offsets(ids, 0);
    for (size_t id = kFirstIoBuffer; id < ids; ++id) {
        offsets[id] = end;
        uint64_t region = 0;
        for (const MemoryPlan* p : plans)
            if (id < p->buffer_bytes.size()) region = std::max(region, p->buffer_bytes[id]);
        end += plan_aligned(region);
    }
    *internal_bytes = end;
    return offsets;
}

bool place_io_in_internal_at(MemoryPlan* plan, const std::vector<uint64_t>& offsets, uint64_t internal_bytes) {
    const size_t ids = plan->buffer_bytes.size();
    if (offsets.size() != ids) return false;
    for (size_t id = kInternalBuffer; id < ids; ++id) {
        const uint64_t start = id == kInternalBuffer ? 0 : offsets[id];
        const uint64_t limit = id + 1 < ids ? offsets[id + 1] : internal_bytes;
        if (start + plan->buffer_bytes[id] > limit) return false;
    }
    plan->io_staging_offsets = offsets;
    plan->buffer_bytes[kInternalBuffer] = internal_bytes;
    return true;
}

}  // namespace rknn::runtime
