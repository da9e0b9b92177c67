#include "model/summary.h"

#include <cstdio>
#include <map>

namespace rknn::model {
namespace {

std::string describe_tensor(const graph::Tensor& t) {
    std::string text = "\"" + t.name + "\" " + graph::dtype_name(t.dtype) + " " + graph::shape_to_string(t.shape);
    if (t.quant.is_quantized()) {
        char q[96];
        if (t.quant.per_channel()) {
            std::snprintf(q, sizeof(q), " per-channel(%zu) axis %d", t.quant.scales.size(), t.quant.axis);
        } else {
            std::snprintf(q, sizeof(q), " scale %.6g zp %d", t.quant.scale(), t.quant.zero_point());
        }
        text += q;
    }
    return text;
}

std::string join_floats(const std::vector<float>& v) {
    std::string text;
    for (size_t i = 0; i < v.size(); ++i) {
        char item[32];
        std::snprintf(item, sizeof(item), "%s%g", i ? "," : "", v[i]);
        text += item;
    }
    return text;
}

}  // namespace

std::string summarize(const graph::Graph& g) {
    std::string text;
    text += "target: " + (g.target_soc.empty() ? std::string("(any)") : g.target_soc) + "\n";
    if (!g.converter_version.empty()) text += "made by: " + g.converter_version + "\n";
    if (!g.custom_string.empty()) text += "custom string: " + g.custom_string + "\n";
    if (g.batch > 1) text += "batch: " + std::to_string(g.batch) + " items per run\n";
    size_t left_to_master = 0;
    for (const graph::Tensor& t : g.tensors) left_to_master += t.master_hash != 0 ? 1 : 0;
    if (left_to_master > 0)
        text += "weights left to the master: " + std::to_string(left_to_master) +
                " constants (run it with RKNN_FLAG_SHARE_WEIGHT_MEM)\n";
    for (size_t i = 0; i < g.inputs.size(); ++i) {
        text += "input " + std::to_string(i) + ": " + describe_tensor(g.tensors[g.inputs[i]]) + "\n";
        if (i < g.preprocess.size() && !g.preprocess[i].empty()) {
            const graph::InputPreprocess& p = g.preprocess[i];
            text += "  fed as " + std::string(p.user_layout == graph::Layout::kNHWC ? "NHWC " : "NCHW ") +
                    graph::dtype_name(p.user_dtype) + ", mean [" + join_floats(p.mean) + "], std [" + join_floats(p.std) +
                    "]" + (p.reverse_channels ? ", calibrated with RGB<->BGR swapped" : "") + "\n";
        }
    }
    for (size_t i = 0; i < g.outputs.size(); ++i)
        text += "output " + std::to_string(i) + ": " + describe_tensor(g.tensors[g.outputs[i]]) + "\n";
    for (size_t k = 0; k < g.shape_sets.size(); ++k) {
        text += "shape set " + std::to_string(k) + ":";
        for (const graph::Shape& s : g.shape_sets[k]) text += " " + graph::shape_to_string(s);
        text += "\n";
    }
    for (size_t i = 0; i < g.input_ranges.size(); ++i) {
        const graph::ShapeRange& r = g.input_ranges[i];
        text += "input " + std::to_string(i) + " range: " + graph::shape_range_to_string(r) + "\n";
    }
    std::map<std::string, int> counts;
    for (const graph::Op& op : g.ops) {
        ++counts[op.type == graph::OpType::kCustom ? "Custom:" + op.custom_type : graph::op_type_name(op.type)];
    }
    text += "ops: " + std::to_string(g.ops.size()) + " (";
    bool first = true;
    for (const auto& [name, count] : counts) {
        text += (first ? "" : ", ") + name + " " + std::to_string(count);
        first = false;
    }
    text += ")\n";
    size_t bytes = 0;
    for (const graph::Buffer& b : g.buffers) bytes += b.size;
    char line[96];
    std::snprintf(line, sizeof(line), "constants: %zu tensors, %.2f MiB\n", g.buffers.size(), bytes / 1048576.0);
    text += line;
    return text;
}

}  // namespace rknn::model
