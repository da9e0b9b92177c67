// Dynamic shape sets (--input-shapes given more than once). The model file
// stores one graph, inferred and quantised at the largest set; the runtime
// infers every other set's shapes from it (runtime/compiled_plan.h). Shapes
// the ONNX graph computes (Shape -> Gather -> Concat into a Reshape) were
// folded into constants at the largest set, so before writing:
//   - Reshape targets whose entries change from set to set are rewritten
//     with 0 (copy the input's dim) or -1 (the rest), when one form holds
//     for every set;
//   - every set is checked: the stored graph must take its shapes and give
//     the outputs the ONNX graph gives at them.
// With --dynamic-range, a few shapes inside the ranges (the smallest, one
// step above it and the middle; with several ranged dim positions, also
// each position at its smallest and the others at their largest) are
// probed the same way as
// the sets, so that a target generalised from the sets alone is not taken
// on trust.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "converter.h"
#include "graph/graph.h"

namespace rknn::convert {

// Input shapes the converted graph is checked at, and what to call them.
struct ShapeProbe {
    std::vector<graph::Shape> shapes;
    std::string name;
};
// The shape sets of `g`, then the probes inside its input ranges that are
// not sets.
std::vector<ShapeProbe> shape_probes(const graph::Graph& g);

// The ONNX graph after the graph passes, once per probe.
StatusOr<std::vector<graph::Graph>> source_graphs_at(const ConvertOptions& options, const std::vector<ShapeProbe>& probes);

// Rewrites the shape-dependent Reshape targets of `g` (see above); the count
// goes into `log`. Refuses, naming the op, a target no 0/-1 form generalises.
Status generalise_reshape_targets(graph::Graph* g, const std::vector<graph::Graph>& sources,
                                  std::vector<std::string>* log);

// `sources[k]`: the ONNX graph at probe k. Names the first probe `g` cannot take.
Status check_shape_sets(const graph::Graph& g, const std::vector<ShapeProbe>& probes,
                        const std::vector<graph::Graph>& sources, std::vector<std::string>* log);

}  // namespace rknn::convert
