#include "onnx_support.h"

#include <algorithm>
#include <map>
#include <set>

namespace rknn::convert {
namespace {

using graph::OpType;

struct AttributeRule {
    std::set<std::string> names;                                  // attributes understood
    std::map<std::string, std::set<std::string>> string_values;   // allowed values of string attributes
    std::map<std::string, int64_t> required_int;                  // int attributes that must have this value
};

const std::set<std::string> kAutoPad = {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"};

const std::map<OpType, AttributeRule>& rules() {
    static const std::map<OpType, AttributeRule> table = {
        {OpType::kConv, {{"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"}, {{"auto_pad", kAutoPad}}, {}}},
        {OpType::kConvTranspose,
         {{"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides", "output_padding", "output_shape"},
          {{"auto_pad", kAutoPad}},
          {}}},
        {OpType::kGemm, {{"alpha", "beta", "transA", "transB"}, {}, {}}},
        {OpType::kBatchNormalization, {{"epsilon", "momentum", "training_mode", "spatial"}, {}, {{"training_mode", 0}, {"spatial", 1}}}},
        {OpType::kClip, {{"min", "max"}, {}, {}}},
        {OpType::kLeakyRelu, {{"alpha"}, {}, {}}},
        {OpType::kElu, {{"alpha"}, {}, {}}},
        {OpType::kSelu, {{"alpha", "gamma"}, {}, {}}},
        {OpType::kHardSigmoid, {{"alpha", "beta"}, {}, {}}},
        {OpType::kGelu, {{"approximate"}, {{"approximate", {"none", "tanh"}}}, {}}},
        {OpType::kMaxPool,
         {{"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order", "strides"}, {{"auto_pad", kAutoPad}}, {}}},
        {OpType::kAveragePool,
         {{"auto_pad", "ceil_mode", "count_include_pad", "kernel_shape", "pads", "strides"}, {{"auto_pad", kAutoPad}}, {}}},
        {OpType::kInstanceNormalization, {{"epsilon"}, {}, {}}},
        {OpType::kLayerNormalization, {{"axis", "epsilon", "stash_type"}, {}, {{"stash_type", 1}}}},
        {OpType::kConcat, {{"axis"}, {}, {}}},
        {OpType::kSplit, {{"axis", "split", "num_outputs"}, {}, {}}},
        {OpType::kSlice, {{"starts", "ends", "axes"}, {}, {}}},
        {OpType::kReshape, {{"allowzero"}, {}, {}}},
        {OpType::kFlatten, {{"axis"}, {}, {}}},
        {OpType::kSqueeze, {{"axes"}, {}, {}}},
        {OpType::kUnsqueeze, {{"axes"}, {}, {}}},
        {OpType::kTranspose, {{"perm"}, {}, {}}},
        {OpType::kPad, {{"mode", "pads", "value"}, {{"mode", {"constant", "reflect", "edge"}}}, {}}},
        {OpType::kResize,
         {{"mode", "coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a", "exclude_outside",
           "extrapolation_value", "legacy_resize"},
          {{"mode", {"nearest", "linear", "cubic"}},
           {"coordinate_transformation_mode",
            {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"}},
           {"nearest_mode", {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}}},
          {}}},
        {OpType::kUpsample, {{"mode", "scales"}, {{"mode", {"nearest", "linear", "bilinear"}}}, {}}},
        {OpType::kSoftmax, {{"axis", "legacy_2d"}, {}, {}}},
        {OpType::kLogSoftmax, {{"axis", "legacy_2d"}, {}, {}}},
        {OpType::kReduceMean, {{"axes", "keepdims", "noop_with_empty_axes"}, {}, {}}},
        {OpType::kReduceSum, {{"axes", "keepdims", "noop_with_empty_axes"}, {}, {}}},
        {OpType::kReduceMax, {{"axes", "keepdims", "noop_with_empty_axes"}, {}, {}}},
        {OpType::kReduceMin, {{"axes", "keepdims", "noop_with_empty_axes"}, {}, {}}},
        {OpType::kArgMax, {{"axis", "keepdims", "select_last_index"}, {}, {}}},
        {OpType::kArgMin, {{"axis", "keepdims", "select_last_index"}, {}, {}}},
        {OpType::kGather, {{"axis"}, {}, {}}},
        {OpType::kDepthToSpace, {{"blocksize", "mode"}, {{"mode", {"DCR", "CRD"}}}, {}}},
        {OpType::kSpaceToDepth, {{"blocksize"}, {}, {}}},
        {OpType::kCast, {{"to"}, {}, {}}},
        {OpType::kDropout, {{"ratio", "seed"}, {}, {}}},
        {OpType::kShape, {{"start", "end"}, {}, {}}},
        {OpType::kConstantOfShape, {{"value", "value_dtype"}, {}, {}}},
        {OpType::kQuantizeLinear, {{"axis"}, {}, {}}},
        {OpType::kDequantizeLinear, {{"axis"}, {}, {}}},
    };
    return table;
}

}  // namespace

std::vector<std::string> check_attributes(const graph::Op& op) {
    std::vector<std::string> problems;
    if (op.type == OpType::kCustom) return problems;  // user ops keep whatever they carry
    static const AttributeRule kNone;
    const auto it = rules().find(op.type);
    const AttributeRule& rule = it == rules().end() ? kNone : it->second;
    for (const graph::Attribute& a : op.attrs.items()) {
        if (rule.names.count(a.name) == 0) {
            problems.push_back("attribute \"" + a.name + "\" is not supported");
            continue;
        }
        const auto allowed = rule.string_values.find(a.name);
        if (allowed != rule.string_values.end() && allowed->second.count(a.s) == 0) {
            problems.push_back("attribute " + a.name + "=\"" + a.s + "\" is not supported");
        }
        const auto required = rule.required_int.find(a.name);
        if (required != rule.required_int.end() && a.i != required->second) {
            problems.push_back("attribute " + a.name + "=" + std::to_string(a.i) + " is not supported (only " +
                               std::to_string(required->second) + ")");
        }
    }
    return problems;
}

}  // namespace rknn::convert
