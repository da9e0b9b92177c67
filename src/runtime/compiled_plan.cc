#include "runtime/compiled_plan.h"

#include <algorithm>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/log.h"
#include "cpu/kernel_registry.h"
#include "hw/soc_profile.h"
#include "graph/shape_check.h"
#include "graph/topology.h"
#include "npu/activation_split.h"

namespace rknn::runtime {
namespace {

bool static_shapes(const graph::Graph& g) {
    for (const graph::Tensor& t : g.tensors)
        for (int64_t d : t.shape)
            if (d < 0) return false;
    return true;
}

// The runtime holds every tensor in memory: refuse what cannot be (a
// malformed or hostile model must not overflow a size computation).
constexpr int64_t kMaxTensorBytes = int64_t{1} << 31;

Status check_tensor_sizes(const graph::Graph& g) {
    for (const graph::Tensor& t : g.tensors) {
        int64_t elems = 0;
        if (!graph::checked_num_elements(t.shape, &elems) ||
            elems > kMaxTensorBytes / static_cast<int64_t>(std::max<size_t>(1, graph::dtype_size(t.dtype))))
            return make_status(StatusCode::kModelInvalid, "tensor %s of %s is larger than 2 GiB", t.name.c_str(),
                               graph::shape_to_string(t.shape).c_str());
    }
    return Status::ok();
}

// A driver that ends tasks on the DPU's interrupt only (mainline rocket)
// would never see a PPU task finish: pools run on the CPU there (and the
// aliases next to them may be left alone).
void keep_ppu_tasks_off(const driver::KernelDriver& kd, const graph::Graph& g, std::vector<npu::Placement>* placements) {
    if (kd.completes_ppu_tasks()) return;
    bool moved = false;
    for (size_t i = 0; i < placements->size(); ++i) {
        npu::Placement& p = (*placements)[i];
        if (p.target != npu::Target::kNpu || p.prepared == nullptr || !p.prepared->uses_ppu()) continue;
        p = npu::Placement{};
        p.reason = std::string("a PPU task, and the ") + kd.backend_name() + " driver waits for the DPU's interrupt only";
        RKNN_LOG_AT(3, "op %zu %s (%s): CPU, %s", i, g.ops[i].name.c_str(), graph::op_type_name(g.ops[i].type),
                    p.reason.c_str());
        moved = true;
    }
    if (moved) npu::keep_lone_aliases_on_cpu(g, placements);
}

// The plans of a dynamic model share the device buffers: each I/O buffer id
// must hold the same input or output in every set.
Status check_same_io_buffers(const CompiledPlan& first, const CompiledPlan& other) {
    if (first.memory.buffer_bytes.size() != other.memory.buffer_bytes.size())
        return make_status(StatusCode::kUnimplemented,
                           "the set needs %zu device buffers and the first set %zu: shape sets that lay out the "
                           "model's inputs and outputs differently are not implemented",
                           other.memory.buffer_bytes.size(), first.memory.buffer_bytes.size());
    for (const std::vector<int32_t>* list : {&first.graph.inputs, &first.graph.outputs})
        for (int32_t t : *list) {
            const DeviceHome& a = first.memory.homes[static_cast<size_t>(t)];
            const DeviceHome& b = other.memory.homes[static_cast<size_t>(t)];
            if (a.buffer != b.buffer || a.offset != b.offset || (a.packed_row_pixels > 0) != (b.packed_row_pixels > 0))
                return make_status(StatusCode::kUnimplemented,
                                   "tensor %s has another device home than in the first set: shape sets that lay out "
                                   "the model's inputs and outputs differently are not implemented",
                                   first.graph.tensors[static_cast<size_t>(t)].name.c_str());
        }
    return Status::ok();
}

size_t hash_of(const std::vector<uint8_t>& bytes) {
    return std::hash<std::string_view>{}(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

// One weight layout for all plans: each distinct constant (by its packed
// bytes) gets one place, and every plan's constant offsets point there.
void share_weight_layout(std::vector<std::shared_ptr<CompiledPlan>>* plans) {
    std::unordered_multimap<size_t, std::pair<uint64_t, const std::vector<uint8_t>*>> stored;
    uint64_t end = 0;
    for (auto& plan : *plans) {
        for (size_t i = 0; i < plan->placements.size(); ++i) {
            std::vector<uint64_t>& offsets = plan->memory.constant_offsets[i];
            if (offsets.empty()) continue;
            const auto& constants = plan->placements[i].prepared->constants();
            for (size_t k = 0; k < offsets.size(); ++k) {
                const std::vector<uint8_t>& bytes = constants[k];
                const size_t hash = hash_of(bytes);
                bool found = false;
                for (auto [it, last] = stored.equal_range(hash); it != last; ++it)
                    if (*it->second.second == bytes) {
                        offsets[k] = it->second.first;
                        found = true;
                        break;
                    }
                if (found) continue;
                offsets[k] = end;
                stored.emplace(hash, std::make_pair(end, &bytes));
                end += plan_aligned(bytes.size());
            }
        }
    }
    for (auto& plan : *plans) plan->memory.buffer_bytes[kWeightBuffer] = end;
}

}  // namespace

size_t LoweredSchedule::cube_requant_count() const {
    return static_cast<size_t>(std::count_if(cube_requants.begin(), cube_requants.end(),
                                             [](const std::optional<CubeRequant>& r) { return r.has_value(); }));
}

StatusOr<std::shared_ptr<const CompiledPlan>> CompiledPlan::compile(graph::Graph graph,
                                                                    std::shared_ptr<IoMemory> model_memory,
                                                                    const driver::OpenedDriver& driver,
                                                                    Options options) {
    RKNN_ASSIGN_OR_RETURN(std::shared_ptr<CompiledPlan> plan,
                          build(std::move(graph), std::move(model_memory), driver, options));
    if (options.stage_io_internally) place_io_in_internal(&plan->memory);
    return std::shared_ptr<const CompiledPlan>(std::move(plan));
}

StatusOr<std::shared_ptr<CompiledPlan>> CompiledPlan::build(graph::Graph graph, std::shared_ptr<IoMemory> model_memory,
                                                            const driver::OpenedDriver& driver, Options options) {
    std::shared_ptr<CompiledPlan> plan(new CompiledPlan());
    plan->graph = std::move(graph);
    plan->model_memory_ = std::move(model_memory);
    plan->soc_ = driver.soc;
    const graph::Graph& g = plan->graph;
    if (!static_shapes(g))
        return Status(StatusCode::kModelInvalid,
                      "the graph has dims left open (-1) and no shape set fixes them (rknn_convert --input-shapes)");
    RKNN_RETURN_IF_ERROR(check_tensor_sizes(g));
    const hw::SocProfile& soc = *driver.soc;
    if (!g.target_soc.empty() && !hw::runs_models_for(soc.name, g.target_soc))
        return make_status(StatusCode::kTargetMismatch, "the model was converted for %s, this NPU is %s",
                           g.target_soc.c_str(), soc.name);

    npu::split_activations_the_npu_lacks(&plan->graph, soc);
    RKNN_ASSIGN_OR_RETURN(plan->order, graph::topological_order(g));
    plan->producers = graph::producers(g);
    plan->placements = npu::place_graph(g, soc);
    keep_ppu_tasks_off(*driver.driver, g, &plan->placements);
    RKNN_ASSIGN_OR_RETURN(plan->memory, plan_memory(g, plan->order, &plan->placements, native_form(soc),
                                                    options.share_internal));
    for (int32_t op_index : plan->order) {
        const graph::Op& op = g.ops[static_cast<size_t>(op_index)];
        const npu::Placement& placement = plan->placements[static_cast<size_t>(op_index)];
        // Custom ops run the client's kernels (CustomOps), registered after rknn_init.
        if (placement.target == npu::Target::kCpu && op.type != graph::OpType::kCustom &&
            cpu::find_kernel(op.type) == nullptr)
            return make_status(StatusCode::kUnimplemented, "op %s (%s%s%s) runs on neither the NPU (%s) nor the CPU",
                               op.name.c_str(), graph::op_type_name(op.type), op.custom_type.empty() ? "" : " ",
                               op.custom_type.c_str(), placement.reason.c_str());
    }
    cpu::GraphExecutor::Options executor_options;
    executor_options.skip_unsupported = true;
    RKNN_ASSIGN_OR_RETURN(plan->executor, cpu::GraphExecutor::create(plan->graph, executor_options));
    return plan;
}

StatusOr<std::vector<std::shared_ptr<const CompiledPlan>>> CompiledPlan::compile_all(
    const graph::Graph& graph, std::shared_ptr<IoMemory> model_memory, const driver::OpenedDriver& driver,
    Options options) {
    std::vector<std::shared_ptr<const CompiledPlan>> done;
    if (graph.shape_sets.empty()) {
        RKNN_ASSIGN_OR_RETURN(std::shared_ptr<const CompiledPlan> plan, compile(graph, std::move(model_memory), driver, options));
        done.push_back(std::move(plan));
        return done;
    }
    std::vector<std::shared_ptr<CompiledPlan>> plans;
    for (size_t k = 0; k < graph.shape_sets.size(); ++k) {
        const std::vector<graph::Shape>& shapes = graph.shape_sets[k];
        const std::string named = "shape set " + std::to_string(k) + " (" + graph::shapes_to_string(shapes) + ")";
        graph::Graph set_graph = graph;  // constant bytes are shared, not copied
        for (size_t i = 0; i < shapes.size() && i < set_graph.inputs.size(); ++i) {
            const graph::Tensor& input = set_graph.tensors[static_cast<size_t>(set_graph.inputs[i])];
            if (shapes[i].size() != input.shape.size())
                return make_status(StatusCode::kModelInvalid, "%s: input %s has rank %zu", named.c_str(),
                                   input.name.c_str(), input.shape.size());
        }
        RKNN_RETURN_IF_ERROR(graph::reinfer_graph_shapes(&set_graph, shapes).with_context(named));
        RKNN_ASSIGN_OR_RETURN(std::shared_ptr<CompiledPlan> plan,
                              build(std::move(set_graph), model_memory, driver, options));
        if (!plans.empty()) RKNN_RETURN_IF_ERROR(check_same_io_buffers(*plans.front(), *plan).with_context(named));
        plans.push_back(std::move(plan));
    }
    share_weight_layout(&plans);
    if (options.stage_io_internally) {
        // Every set stages its I/O at the same offsets: switching sets moves nothing.
        std::vector<const MemoryPlan*> memories;
        for (const auto& plan : plans) memories.push_back(&plan->memory);
        uint64_t internal_bytes = 0;
        const std::vector<uint64_t> offsets = common_io_offsets(memories, &internal_bytes);
        for (auto& plan : plans)
            if (!place_io_in_internal_at(&plan->memory, offsets, internal_bytes))
                return RKNN_INTERNAL_ERROR("the common I/O staging layout does not hold a set");
    }
    for (auto& plan : plans) done.push_back(std::move(plan));
    return done;
}

StatusOr<std::shared_ptr<const CompiledPlan>> CompiledPlan::compile_at(
    const std::vector<graph::Shape>& shapes, const std::vector<std::shared_ptr<const CompiledPlan>>& laid_out,
    const driver::OpenedDriver& driver, Options options) {
    if (laid_out.empty()) return RKNN_INTERNAL_ERROR("compile_at: no plans to run beside");
    const CompiledPlan& base = *laid_out.front();
    graph::Graph graph = base.graph;  // constant bytes are shared, not copied
    RKNN_RETURN_IF_ERROR(graph::reinfer_graph_shapes(&graph, shapes));
    RKNN_ASSIGN_OR_RETURN(std::shared_ptr<CompiledPlan> plan, build(std::move(graph), base.model_memory_, driver, options));
    RKNN_RETURN_IF_ERROR(check_same_io_buffers(base, *plan));
    const char* op = find_constants_in(laid_out, plan.get());
    if (op != nullptr)
        return make_status(StatusCode::kUnimplemented,
                           "op %s packs its constants differently at these shapes than at every shape set "
                           "(not implemented: add these shapes as a set)",
                           op);
    if (options.stage_io_internally &&
        !place_io_in_internal_at(&plan->memory, base.memory.io_staging_offsets, base.memory.buffer_bytes[kInternalBuffer]))
        return make_status(StatusCode::kInputInvalid,
                           "the shapes need more internal memory than the largest shape set leaves before the staged "
                           "inputs and outputs (convert with these shapes as a set)");
    return std::shared_ptr<const CompiledPlan>(std::move(plan));
}

StatusOr<std::shared_ptr<const CompiledPlan>> CompiledPlan::compile_sharing(
    graph::Graph graph, std::shared_ptr<IoMemory> model_memory,
    const std::vector<std::shared_ptr<const CompiledPlan>>& master, const driver::OpenedDriver& driver,
    Options options) {
    if (master.empty()) return RKNN_INTERNAL_ERROR("compile_sharing: no master plans");
    RKNN_ASSIGN_OR_RETURN(std::shared_ptr<CompiledPlan> plan,
                          build(std::move(graph), std::move(model_memory), driver, options));
    const char* op = find_constants_in(master, plan.get());
    if (op != nullptr)
        return make_status(StatusCode::kModelInvalid,
                           "incompatible master: the packed weights of op %s are not in the master's weight memory "
                           "(convert the model with rknn_convert --remove-weights --master, from the master's ONNX "
                           "file, options and dataset)",
                           op);
    return std::shared_ptr<const CompiledPlan>(std::move(plan));
}

const char* CompiledPlan::find_constants_in(const std::vector<std::shared_ptr<const CompiledPlan>>& laid_out,
                                            CompiledPlan* plan) {
    // Every constant, by its packed bytes, where a laid-out plan put it.
    std::unordered_multimap<size_t, std::pair<uint64_t, const std::vector<uint8_t>*>> stored;
    for (const auto& other : laid_out)
        for (size_t i = 0; i < other->placements.size(); ++i) {
            const std::vector<uint64_t>& offsets = other->memory.constant_offsets[i];
            for (size_t k = 0; k < offsets.size(); ++k) {
                const std::vector<uint8_t>& bytes = other->placements[i].prepared->constants()[k];
                stored.emplace(hash_of(bytes), std::make_pair(offsets[k], &bytes));
            }
        }
    for (size_t i = 0; i < plan->placements.size(); ++i) {
        std::vector<uint64_t>& offsets = plan->memory.constant_offsets[i];
        for (size_t k = 0; k < offsets.size(); ++k) {
            const std::vector<uint8_t>& bytes = plan->placements[i].prepared->constants()[k];
            bool found = false;
            for (auto [it, last] = stored.equal_range(hash_of(bytes)); it != last && !found; ++it)
                if (*it->second.second == bytes) {
                    offsets[k] = it->second.first;
                    found = true;
                }
            if (!found) return plan->graph.ops[i].name.c_str();
        }
    }
    plan->memory.buffer_bytes[kWeightBuffer] = laid_out.front()->memory.buffer_bytes[kWeightBuffer];
    return nullptr;
}

uint64_t CompiledPlan::host_bytes() const {
    uint64_t bytes = graph.tensors.size() * sizeof(graph::Tensor) + graph.ops.size() * sizeof(graph::Op);
    for (const npu::Placement& p : placements)
        if (p.prepared != nullptr)
            for (const std::vector<uint8_t>& c : p.prepared->constants()) bytes += c.size();
    return bytes;
}

StatusOr<std::shared_ptr<const LoweredSchedule>> CompiledPlan::lowered(uint32_t core_mask, bool per_op) const {
    std::lock_guard<std::mutex> lock(lowered_mutex_);
    const auto key = std::make_pair(core_mask, per_op);
    if (auto found = lowered_.find(key); found != lowered_.end()) return found->second;
    auto result = std::make_shared<LoweredSchedule>();
    result->core_mask = core_mask;
    result->schedule = build_schedule(graph, order, placements, memory, per_op);
    RKNN_ASSIGN_OR_RETURN(result->programs,
                          lower_segments(graph, result->schedule, placements, memory, *soc_, core_mask));
    result->cube_requants.assign(graph.ops.size(), std::nullopt);
    for (const CpuStep& step : result->schedule.cpu_steps)
        result->cube_requants[static_cast<size_t>(step.op)] = plan_cube_requant(step);
    std::shared_ptr<const LoweredSchedule> done = std::move(result);
    lowered_.emplace(key, done);
    return done;
}

size_t CompiledPlan::npu_task_op_count() const {
    return static_cast<size_t>(std::count_if(placements.begin(), placements.end(), [](const npu::Placement& p) {
        return p.target == npu::Target::kNpu && p.form == npu::NpuForm::kTasks;
    }));
}

std::optional<CubeRequant> CompiledPlan::plan_cube_requant(const CpuStep& step) const {
    const graph::Graph& g = graph;
    const graph::Op& op = g.ops[static_cast<size_t>(step.op)];
    if (op.type != graph::OpType::kQuantizeLinear && op.type != graph::OpType::kDequantizeLinear) return std::nullopt;
    std::string why_not;
    std::optional<CubeRequant> plan = CubeRequant::plan(g, op, memory.form, &why_not);
    const auto on_npu = [&](int32_t o) { return o >= 0 && placements[static_cast<size_t>(o)].target == npu::Target::kNpu; };
    // Only the cubes hold the tensors: no CPU op, nor the client, reads them from host values.
    const auto only_npu_reads = [&](int32_t t) {
        for (const graph::Op& reader : g.ops) {
            const int32_t index = static_cast<int32_t>(&reader - g.ops.data());
            if (index != step.op && !on_npu(index) && std::find(reader.inputs.begin(), reader.inputs.end(), t) != reader.inputs.end())
                return false;
        }
        return std::find(g.outputs.begin(), g.outputs.end(), t) == g.outputs.end();
    };
    const auto plain_cube = [&](int32_t t, uint64_t bytes) {
        const DeviceHome& home = memory.homes[static_cast<size_t>(t)];
        return home.valid() && home.packed_row_pixels == 0 && home.bytes >= bytes;
    };
    if (plan) {
        const int32_t in = op.inputs[0], out = op.outputs[0];
        if (!on_npu(producers[static_cast<size_t>(in)]))
            why_not = "its input does not come from the NPU";
        else if (!plain_cube(in, plan->source_bytes()) || !plain_cube(out, plan->destination_bytes()))
            why_not = "a tensor has no plain cube in device memory (a CPU op alone reads it)";
        else if (!only_npu_reads(in) || !only_npu_reads(out))
            why_not = "a CPU op or the client reads one of its tensors";
        else
            return plan;
    }
    RKNN_LOG_AT(4, "CPU op %d (%s) converts through host tensors: %s", step.op, graph::op_type_name(op.type), why_not.c_str());
    return std::nullopt;
}

}  // namespace rknn::runtime
