// The graph IR shared by the converter and the runtime: tensors, operators,
// constants, I/O, and the model-level metadata the model file carries.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/attributes.h"
#include "graph/op_type.h"
#include "graph/tensor.h"

namespace rknn::graph {

struct Op {
    OpType type = OpType::kUnknown;
    std::string name;
    std::string custom_type;        // the user's op type when type == kCustom
    std::vector<int32_t> inputs;    // tensor indices; -1 marks an omitted optional input
    std::vector<int32_t> outputs;
    Attributes attrs;
};

enum class Layout : uint8_t { kUndefined = 0, kNCHW, kNHWC };

// How the user feeds one input when it differs from the graph tensor: with
// mean/std the input is raw pixels in `user_layout`/`user_dtype`, and the
// runtime (or the NPU) normalises (x - mean[c]) / std[c], optionally after
// reversing the channel order.
struct InputPreprocess {
    std::vector<float> mean;
    std::vector<float> std;
    bool reverse_channels = false;
    Layout user_layout = Layout::kUndefined;
    DType user_dtype = DType::kUndefined;

    bool empty() const { return mean.empty() && std.empty() && !reverse_channels; }
};

struct CustomOpDecl {
    std::string type;
    Attributes attrs;
};

// The shapes an input takes beyond the shape sets (rknn_convert
// --dynamic-range): each dim d from min[d] to max[d] in steps of step[d].
struct ShapeRange {
    Shape min, max, step;
    bool contains(const Shape& shape) const;
};
// As --dynamic-range takes it: [1,3,48,32..1280:8].
std::string shape_range_to_string(const ShapeRange& range);

class Graph {
public:
    std::vector<Tensor> tensors;
    std::vector<Op> ops;
    std::vector<Buffer> buffers;
    std::vector<int32_t> inputs;
    std::vector<int32_t> outputs;
    std::vector<InputPreprocess> preprocess;   // empty, or one per input
    std::vector<std::vector<Shape>> shape_sets; // shape_sets[k][i]: shape of input i in set k
    std::vector<ShapeRange> input_ranges;       // empty, or one per input (with shape_sets)
    std::vector<CustomOpDecl> custom_ops;
    std::string target_soc;
    std::string converter_version;
    std::string custom_string;
    // Items one rknn_run takes (a multi-batch model); the graph describes one.
    uint32_t batch = 1;

    int32_t add_tensor(Tensor tensor);
    int32_t add_constant(const std::string& name, DType dtype, const Shape& shape, Buffer buffer);
    int32_t add_op(Op op);

    bool is_constant(int32_t tensor) const;
    const Buffer* constant_buffer(int32_t tensor) const;
    // -1 when no tensor has that name.
    int32_t find_tensor(const std::string& name) const;
    // A name not used by any tensor yet, derived from `base`.
    std::string unique_tensor_name(const std::string& base) const;
};

}  // namespace rknn::graph
