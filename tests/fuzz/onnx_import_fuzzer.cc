// libFuzzer target: arbitrary bytes as an ONNX file. Import must never crash;
// whatever imports without problems goes through the converter's graph
// passes (shape folding under concrete input shapes, canonical arithmetic,
// affine folding, the activation and LayerNorm patterns, fusions) up to, not
// including, calibration, and must leave a structurally valid graph or fail
// with a status.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "converter.h"
#include "graph/topology.h"
#include "onnx_import.h"

namespace {

// Bounds that keep one input fast: constant folding runs the CPU reference.
constexpr size_t kMaxOps = 256;
constexpr int64_t kMaxInputElements = int64_t{1} << 16;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    // No folder holds external data: a reference to one must fail cleanly.
    auto imported = rknn::convert::import_onnx_bytes(data, size, "/nonexistent-openrknn-fuzz", {});
    if (!imported.is_ok() || !imported.value().problems.empty()) return 0;
    rknn::graph::Graph& g = imported.value().graph;
    if (g.ops.size() > kMaxOps) return 0;
    // Symbolic dims become 2, as --input-shapes would make them.
    std::vector<rknn::graph::Shape> shapes;
    for (int32_t in : g.inputs) {
        rknn::graph::Shape s = g.tensors[static_cast<size_t>(in)].shape;
        for (int64_t& d : s) {
            if (d < 0) d = 2;
        }
        int64_t n = 0;
        if (!rknn::graph::checked_num_elements(s, &n) || n > kMaxInputElements) return 0;
        shapes.push_back(s);
    }
    // The importer lists dangling and doubly written values; what it accepts is
    // a well-formed graph, and the passes must keep it one.
    if (!rknn::graph::validate_structure(g).is_ok()) return 0;
    std::vector<std::string> log;
    if (!rknn::convert::run_graph_passes(&g, shapes, &log).is_ok()) return 0;
    if (!rknn::graph::validate_structure(g).is_ok()) std::abort();
    return 0;
}
