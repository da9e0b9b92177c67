#include "npu/prepared_op.h"

#include <cstring>

#include "cpu/kernels/scalar_math.h"
#include "npu/graph_conv.h"

namespace rknn::npu {

namespace {

using graph::OpType;

// A convolution: the input (and a fused residual) as features, the packed
// weights and BS records as constants.
class ConvOp : public PreparedOp {
public:
    explicit ConvOp(std::unique_ptr<PreparedConv> conv) : conv_(std::move(conv)) {
        feature_inputs_ = {0};
        if (conv_->residual_input >= 0) feature_inputs_.push_back(conv_->residual_input);
        std::vector<uint8_t> weights(conv_->weights.size());
        if (!weights.empty()) std::memcpy(weights.data(), conv_->weights.data(), weights.size());
        constants_ = {std::move(weights), conv_->records};
        if (!conv_->bn_records.empty()) {
            prelu_records_ = static_cast<int>(constants_.size());
            constants_.push_back(conv_->bn_records);
        }
        // RK356x weights for an ARGB input have rows of their own; both forms
        // are kept, since the input's form is decided after this.
        if (!conv_->image_weights.empty()) {
            image_weights_ = static_cast<int>(constants_.size());
            const auto* w = reinterpret_cast<const uint8_t*>(conv_->image_weights.data());
            constants_.emplace_back(w, w + conv_->image_weights.size());
        }
    }

    Status lower(const OpBuffers& buffers, const hw::SocProfile& soc, uint32_t core_mask,
                 ProgramBuilder* program) const override {
        if (buffers.features.size() != feature_inputs_.size() || buffers.constants.size() != constants_.size())
            return RKNN_INVALID_ARGUMENT("convolution bound to %zu features and %zu constants", buffers.features.size(),
                                         buffers.constants.size());
        Int8ConvLayer layer = conv_->layer;
        layer.geometry.packed_row_pixels = buffers.packed_row_pixels;
        layer.addresses = {buffers.features[0], buffers.constants[0], buffers.constants[1], buffers.output};
        if (prelu_records_ >= 0) layer.epilogue.prelu_records = buffers.constants[static_cast<size_t>(prelu_records_)];
        if (buffers.packed_row_pixels > 0 && image_weights_ >= 0)
            layer.addresses.weights = buffers.constants[static_cast<size_t>(image_weights_)];
        if (conv_->residual_input >= 0) layer.epilogue.residual_addr = buffers.features[1];
        return lower_conv_int8(layer, soc, core_mask, program);
    }

    // RK356x: where the image weights were packed (only for a layer that can read an image, never a Gemm).
    bool reads_packed_input() const override {
        return conv_->arch == hw::NpuArch::kRk356x ? image_weights_ >= 0
                                                   : can_read_packed_input(conv_->geometry, conv_->arch);
    }

    std::string describe(const hw::SocProfile& soc, uint32_t core_mask) const override {
        auto plan = plan_conv(conv_->geometry, soc, core_mask);
        const size_t tasks = plan.is_ok() ? plan.value().task_count() : 0;
        const ConvGeometry& g = conv_->geometry;
        const char* kind = g.depthwise ? "depthwise convolution" : (g.in_h == 1 && g.in_w == 1 ? "1x1 convolution" : "convolution");
        return std::string(kind) + " in " + std::to_string(tasks) + " task(s)";
    }

    const ConvGeometry& geometry() const { return conv_->geometry; }

private:
    std::unique_ptr<PreparedConv> conv_;
    int prelu_records_ = -1;  // indices in constants_, -1 when absent
    int image_weights_ = -1;
};

}  // namespace

bool cube_of_shape(const graph::Shape& shape, CubeShape* cube) {
    for (int64_t d : shape)
        if (d <= 0 || d > (int64_t{1} << 24)) return false;
    if (shape.size() == 4 && shape[0] == 1) {
        *cube = {static_cast<int>(shape[1]), static_cast<int>(shape[2]), static_cast<int>(shape[3])};
        return true;
    }
    if (is_matrix(shape)) {
        const size_t rows = shape.size() - 2;
        *cube = {static_cast<int>(shape[rows + 1]), static_cast<int>(shape[rows]), 1};
        return true;
    }
    return false;
}

bool is_matrix(const graph::Shape& shape) { return shape.size() == 2 || (shape.size() == 3 && shape[0] == 1); }

int64_t matrix_rows(const graph::Shape& shape) {
    const int64_t rows = is_matrix(shape) ? shape[shape.size() - 2] : 0;
    return rows > 1 ? rows : 0;
}

namespace {

// [rows][cols] -> [cols][rows] of `elem`-byte values.
std::vector<uint8_t> transposed(const void* data, int64_t rows, int64_t cols, size_t elem) {
    const auto* src = static_cast<const uint8_t*>(data);
    std::vector<uint8_t> out(static_cast<size_t>(rows * cols) * elem);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c)
            std::memcpy(&out[static_cast<size_t>(c * rows + r) * elem], src + static_cast<size_t>(r * cols + c) * elem, elem);
    return out;
}

}  // namespace

std::vector<uint8_t> to_cube_order(const void* data, const graph::Shape& shape, size_t elem_bytes) {
    if (const int64_t rows = matrix_rows(shape)) return transposed(data, rows, shape.back(), elem_bytes);
    const auto* src = static_cast<const uint8_t*>(data);
    return std::vector<uint8_t>(src, src + static_cast<size_t>(graph::num_elements(shape)) * elem_bytes);
}

std::vector<uint8_t> from_cube_order(const void* data, const graph::Shape& shape, size_t elem_bytes) {
    if (const int64_t rows = matrix_rows(shape)) return transposed(data, shape.back(), rows, elem_bytes);
    const auto* src = static_cast<const uint8_t*>(data);
    return std::vector<uint8_t>(src, src + static_cast<size_t>(graph::num_elements(shape)) * elem_bytes);
}

StatusOr<std::unique_ptr<PreparedOp>> prepare_conv_op(const graph::Graph& g, const graph::Op& op,
                                                      const hw::SocProfile& soc) {
    RKNN_ASSIGN_OR_RETURN(std::unique_ptr<PreparedConv> conv,
                          op.type == OpType::kConv ? prepare_int8_conv(g, op, soc) : prepare_int8_gemm(g, op, soc));
    return std::unique_ptr<PreparedOp>(std::make_unique<ConvOp>(std::move(conv)));
}

StatusOr<std::unique_ptr<PreparedOp>> prepare_op(const graph::Graph& g, const graph::Op& op,
                                                 const hw::SocProfile& soc) {
    const bool product = op.type == OpType::kConv || op.type == OpType::kGemm || op.type == OpType::kMatMul;
    const bool fp16 = !op.inputs.empty() && op.inputs[0] >= 0 && static_cast<size_t>(op.inputs[0]) < g.tensors.size() &&
                      g.tensors[static_cast<size_t>(op.inputs[0])].dtype == graph::DType::kFloat16;
    const bool pool = op.type == OpType::kMaxPool || op.type == OpType::kAveragePool ||
                      op.type == OpType::kGlobalAveragePool || op.type == OpType::kGlobalMaxPool;
    if (soc.arch == hw::NpuArch::kRk356x && (!(product || pool) || fp16))
        return Status(StatusCode::kUnimplemented, std::string(fp16 ? "fp16 " : "") + graph::op_type_name(op.type) +
                                                      " is not lowered for " + soc.name +
                                                      " yet (int8 convolutions and pools are)");
    switch (op.type) {
    case OpType::kConv:
    case OpType::kGemm:
    case OpType::kMatMul: {
        if (!fp16) return prepare_conv_op(g, op, soc);
        return op.type == OpType::kConv ? prepare_fp16_conv_op(g, op) : prepare_fp16_gemm_op(g, op);
    }
    case OpType::kAdd:
    case OpType::kSub:
    case OpType::kMul:
    case OpType::kMax:
    case OpType::kMin:
    case OpType::kPRelu:
        return prepare_dpu_op(g, op);
    case OpType::kMaxPool:
    case OpType::kAveragePool:
    case OpType::kGlobalAveragePool:
    case OpType::kGlobalMaxPool:
        return prepare_pool_op(g, op);
    case OpType::kCustom:
        return Status(StatusCode::kUnimplemented, "a custom op runs in its registered callbacks");
    default:
        // Activations: the DPU's LUT holds the reference's results.
        if (op.type != OpType::kIdentity && cpu::kernels::is_activation(op.type)) return prepare_dpu_op(g, op);
        return Status(StatusCode::kUnimplemented,
                      std::string(graph::op_type_name(op.type)) + " is not lowered to the NPU yet");
    }
}

}  // namespace rknn::npu
