// Tensors of the graph IR: metadata, quantisation parameters, and for
// constants a view of their bytes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "graph/dtype.h"

namespace rknn::graph {

using Shape = std::vector<int64_t>;

// Upper bound on elements of one tensor; larger shapes are rejected as malformed
// instead of overflowing size arithmetic.
constexpr int64_t kMaxTensorElements = int64_t{1} << 40;

// Product of dims; false if a dim is negative or the product exceeds kMaxTensorElements.
bool checked_num_elements(const Shape& shape, int64_t* out);
int64_t num_elements(const Shape& shape);  // assumes a valid, non-negative shape
std::string shape_to_string(const Shape& shape);
// One per input, space-separated: "[1,3,48,80] [1,10]".
std::string shapes_to_string(const std::vector<Shape>& shapes);

// Affine quantisation: real = (q - zero_point) * scale. One entry per tensor,
// or one per slice along `axis` (per-channel).
struct QuantParams {
    std::vector<float> scales;
    std::vector<int32_t> zero_points;
    int32_t axis = -1;

    bool is_quantized() const { return !scales.empty(); }
    bool per_channel() const { return scales.size() > 1; }
    float scale(size_t channel = 0) const { return scales.size() > 1 ? scales[channel] : scales[0]; }
    int32_t zero_point(size_t channel = 0) const {
        if (zero_points.empty()) return 0;
        return zero_points.size() > 1 ? zero_points[channel] : zero_points[0];
    }
    bool operator==(const QuantParams& other) const {
        return scales == other.scales && zero_points == other.zero_points && axis == other.axis;
    }
};

// Bytes of a constant. Either owned (converter-made) or a view into a loaded
// model file that `keep_alive` keeps mapped: weights are used in place.
struct Buffer {
    const uint8_t* data = nullptr;
    size_t size = 0;
    std::shared_ptr<const void> keep_alive;

    static Buffer copy_of(const void* bytes, size_t size);
};

struct Tensor {
    std::string name;
    DType dtype = DType::kFloat32;
    Shape shape;                         // -1 marks a dynamic dimension
    std::vector<std::string> dim_params; // symbolic names of dynamic dims ("" when static)
    QuantParams quant;
    int32_t buffer = -1;                 // index into Graph::buffers for constants
    // In a model file: nonzero for a constant whose bytes the master model
    // holds (rknn_convert --remove-weights), their content_hash.
    uint64_t master_hash = 0;
};

}  // namespace rknn::graph
