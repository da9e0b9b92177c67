#include "shape_sets.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "graph/shape_check.h"
#include "onnx_import.h"

namespace rknn::convert {
namespace {

std::string set_name(size_t k, const std::vector<graph::Shape>& shapes) {
    return "--input-shapes set " + std::to_string(k) + " (" + graph::shapes_to_string(shapes) + ")";
}

// The values of a constant int64 or int32 tensor; false for anything else.
bool constant_ints(const graph::Graph& g, int32_t t, std::vector<int64_t>* values) {
    const graph::Buffer* buffer = g.constant_buffer(t);
    if (buffer == nullptr) return false;
    const graph::DType dtype = g.tensors[static_cast<size_t>(t)].dtype;
    const size_t size = dtype == graph::DType::kInt64 ? 8 : dtype == graph::DType::kInt32 ? 4 : 0;
    if (size == 0 || buffer->size % size != 0) return false;
    values->resize(buffer->size / size);
    for (size_t i = 0; i < values->size(); ++i) {
        if (size == 8) {
            std::memcpy(&(*values)[i], buffer->data + i * 8, 8);
        } else {
            int32_t v = 0;
            std::memcpy(&v, buffer->data + i * 4, 4);
            (*values)[i] = v;
        }
    }
    return true;
}

// Per op name: the Reshape ops of a graph.
std::map<std::string, const graph::Op*> reshapes_by_name(const graph::Graph& g) {
    std::map<std::string, const graph::Op*> found;
    for (const graph::Op& op : g.ops)
        if (op.type == graph::OpType::kReshape && op.inputs.size() >= 2) found[op.name] = &op;
    return found;
}

// What a Reshape does at one set: its input and output shapes.
struct ReshapeAtSet {
    graph::Shape in, out;
};

// A target that gives `uses[k].out` from `uses[k].in` at every set, made of
// the entries that never change, 0 where the output copies the input's dim
// at every set, and one -1; empty when there is none.
std::vector<int64_t> general_target(const std::vector<int64_t>& target, const std::vector<ReshapeAtSet>& uses) {
    const size_t rank = target.size();
    std::vector<int64_t> general(rank);
    std::vector<size_t> open;
    for (size_t d = 0; d < rank; ++d) {
        bool fixed = true, copies = true;
        for (const ReshapeAtSet& u : uses) {
            if (u.out.size() != rank) return {};
            fixed = fixed && u.out[d] == uses.front().out[d];
            copies = copies && d < u.in.size() && u.out[d] == u.in[d];
        }
        if (fixed) {
            general[d] = uses.front().out[d];
        } else if (copies) {
            general[d] = 0;
        } else {
            open.push_back(d);
        }
    }
    if (open.size() > 1) return {};
    if (open.size() == 1) {
        general[open[0]] = -1;
    } else {
        // Every dim is fixed or copied; keep a -1 the target had, so that
        // an entry the product decides stays decided by it.
        for (size_t d = 0; d < rank; ++d)
            if (target[d] == -1 && general[d] != 0) general[d] = -1;
    }
    return general;
}

void add_probe(std::vector<ShapeProbe>* probes, std::vector<graph::Shape> shapes) {
    const bool known = std::any_of(probes->begin(), probes->end(), [&](const ShapeProbe& p) { return p.shapes == shapes; });
    if (!known) {
        std::string name = "--dynamic-range shapes (" + graph::shapes_to_string(shapes) + ")";
        probes->push_back({std::move(shapes), std::move(name)});
    }
}

}  // namespace

std::vector<ShapeProbe> shape_probes(const graph::Graph& g) {
    std::vector<ShapeProbe> probes;
    for (size_t k = 0; k < g.shape_sets.size(); ++k) probes.push_back({g.shape_sets[k], set_name(k, g.shape_sets[k])});
    if (g.input_ranges.empty()) return probes;
    // Per ranged dim: the smallest, one step above it, and the middle.
    for (int which = 0; which < 3; ++which) {
        std::vector<graph::Shape> shapes;
        for (const graph::ShapeRange& r : g.input_ranges) {
            graph::Shape shape = r.min;
            for (size_t d = 0; d < shape.size(); ++d) {
                const int64_t steps = (r.max[d] - r.min[d]) / r.step[d];
                const int64_t taken = which == 0 ? 0 : which == 1 ? std::min<int64_t>(1, steps) : steps / 2;
                shape[d] = r.min[d] + taken * r.step[d];
            }
            shapes.push_back(std::move(shape));
        }
        add_probe(&probes, std::move(shapes));
    }
    // Where several dim positions range: each at its smallest (in every
    // input that ranges there, as inputs that meet in an op share dims) with
    // the others at their largest, so that no dim is only seen moving with
    // the rest.
    std::vector<size_t> positions;
    for (const graph::ShapeRange& r : g.input_ranges)
        for (size_t d = 0; d < r.min.size(); ++d)
            if (r.min[d] != r.max[d] && std::find(positions.begin(), positions.end(), d) == positions.end())
                positions.push_back(d);
    if (positions.size() < 2) return probes;
    for (size_t d : positions) {
        std::vector<graph::Shape> shapes;
        for (const graph::ShapeRange& r : g.input_ranges) {
            shapes.push_back(r.max);
            if (d < r.min.size()) shapes.back()[d] = r.min[d];
        }
        add_probe(&probes, std::move(shapes));
    }
    return probes;
}

StatusOr<std::vector<graph::Graph>> source_graphs_at(const ConvertOptions& options, const std::vector<ShapeProbe>& probes) {
    std::vector<graph::Graph> sources;
    for (const ShapeProbe& probe : probes) {
        ImportOptions import_options;
        import_options.custom_op_types = options.custom_ops;
        RKNN_ASSIGN_OR_RETURN(ImportResult imported, import_onnx_file(options.onnx_path, import_options));
        std::vector<std::string> ignored;
        RKNN_RETURN_IF_ERROR(run_graph_passes(&imported.graph, probe.shapes, &ignored).with_context(probe.name));
        sources.push_back(std::move(imported.graph));
    }
    return sources;
}

Status generalise_reshape_targets(graph::Graph* g, const std::vector<graph::Graph>& sources,
                                  std::vector<std::string>* log) {
    std::vector<std::map<std::string, const graph::Op*>> source_reshapes;
    for (const graph::Graph& s : sources) source_reshapes.push_back(reshapes_by_name(s));
    int rewritten = 0;
    for (graph::Op& op : g->ops) {
        if (op.type != graph::OpType::kReshape || op.inputs.size() < 2) continue;
        std::vector<int64_t> target;
        if (!constant_ints(*g, op.inputs[1], &target)) continue;
        std::vector<ReshapeAtSet> uses;
        for (size_t k = 0; k < sources.size(); ++k) {
            const auto found = source_reshapes[k].find(op.name);
            if (found == source_reshapes[k].end()) break;
            const graph::Op& at_set = *found->second;
            uses.push_back({sources[k].tensors[static_cast<size_t>(at_set.inputs[0])].shape,
                            sources[k].tensors[static_cast<size_t>(at_set.outputs[0])].shape});
        }
        if (uses.size() != sources.size()) continue;  // not in every source graph: the check decides
        bool changes = false;
        for (const ReshapeAtSet& u : uses) changes = changes || u.out != uses.front().out;
        if (!changes) continue;
        if (op.attrs.get_int("allowzero", 0) != 0)
            return Status(StatusCode::kInvalidArgument,
                          "Reshape \"" + op.name + "\": its target changes with the input shapes, and allowzero=1 "
                          "leaves no way to copy a dim; convert each shape set on its own");
        const std::vector<int64_t> general = general_target(target, uses);
        if (general.empty())
            return Status(StatusCode::kInvalidArgument,
                          "Reshape \"" + op.name + "\": its target changes with the input shapes in more than one "
                          "dim that is not a copy of the input's; convert each shape set on its own");
        const int32_t constant =
            g->add_constant(g->unique_tensor_name(op.name + "_general_shape"), graph::DType::kInt64,
                            {static_cast<int64_t>(general.size())},
                            graph::Buffer::copy_of(general.data(), general.size() * sizeof(int64_t)));
        op.inputs[1] = constant;
        ++rewritten;
    }
    if (rewritten > 0)
        log->push_back("dynamic shapes: " + std::to_string(rewritten) +
                       " Reshape targets that change with the shape set written with 0 / -1");
    return Status::ok();
}

Status check_shape_sets(const graph::Graph& g, const std::vector<ShapeProbe>& probes,
                        const std::vector<graph::Graph>& sources, std::vector<std::string>* log) {
    for (size_t k = 0; k < probes.size() && k < sources.size(); ++k) {
        const std::vector<graph::Shape>& shapes = probes[k].shapes;
        const std::string& named = probes[k].name;
        graph::Graph at_set = g;
        const Status status = graph::reinfer_graph_shapes(&at_set, shapes);
        if (!status.is_ok())
            return Status(StatusCode::kInvalidArgument,
                          named + ": the converted graph cannot take these shapes (" + status.message() +
                              "); a shape it computed was fixed at the largest set");
        const graph::Graph& source = sources[k];
        for (size_t o = 0; o < g.outputs.size() && o < source.outputs.size(); ++o) {
            const graph::Tensor& got = at_set.tensors[static_cast<size_t>(at_set.outputs[o])];
            const graph::Tensor& want = source.tensors[static_cast<size_t>(source.outputs[o])];
            if (got.shape != want.shape)
                return Status(StatusCode::kInvalidArgument,
                              named + ": output " + got.name + " would be " + graph::shape_to_string(got.shape) +
                                  ", but the ONNX graph gives " + graph::shape_to_string(want.shape) +
                                  " at these shapes; a shape it computed was fixed at the largest set");
        }
    }
    const size_t others = probes.size() - std::min(probes.size(), g.shape_sets.size());
    std::string checked = g.shape_sets.empty() ? std::string() : std::to_string(g.shape_sets.size()) + " shape sets";
    if (others > 0)
        checked += (checked.empty() ? "" : " and ") + std::to_string(others) +
                   (g.input_ranges.empty() ? " other shapes" : " shapes inside the ranges");
    log->push_back("shapes: " + checked + ", each checked against the ONNX graph at its shapes");
    return Status::ok();
}

}  // namespace rknn::convert
