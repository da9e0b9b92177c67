#include "quant/accuracy.h"

#include <cmath>
#include <cstdio>
#include <map>

#include "cpu/convert.h"
#include "cpu/graph_executor.h"
#include "util/progress.h"

namespace rknn::convert {
namespace {

std::vector<float> as_floats(const cpu::HostTensor& t) {
    const cpu::HostTensor f = cpu::to_float32(t);
    return std::vector<float>(f.data<float>(), f.data<float>() + f.numel());
}

}  // namespace

double cosine_similarity(const std::vector<float>& a, const std::vector<float>& b) {
    double dot = 0.0, na = 0.0, nb = 0.0;
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
        dot += static_cast<double>(a[i]) * b[i];
        na += static_cast<double>(a[i]) * a[i];
        nb += static_cast<double>(b[i]) * b[i];
    }
    if (na == 0.0 && nb == 0.0) return 1.0;
    if (na == 0.0 || nb == 0.0) return 0.0;
    return dot / std::sqrt(na * nb);
}

double euclidean_distance(const std::vector<float>& a, const std::vector<float>& b) {
    double sum = 0.0;
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) sum += (static_cast<double>(a[i]) - b[i]) * (a[i] - b[i]);
    return std::sqrt(sum);
}

StatusOr<std::vector<LayerAccuracy>> compare_layers(const graph::Graph& float_graph, const graph::Graph& converted,
                                                    const std::vector<cpu::HostTensor>& float_inputs,
                                                    Progress* progress) {
    std::map<std::string, std::vector<float>> reference;
    cpu::GraphExecutor::Options float_options;
    float_options.use_int8_kernels = false;
    float_options.skip_unsupported = true;
    RKNN_ASSIGN_OR_RETURN(auto float_exec, cpu::GraphExecutor::create(float_graph, float_options));
    std::vector<cpu::HostTensor> ignored;
    RKNN_RETURN_IF_ERROR(float_exec->run(float_inputs, &ignored, [&](int32_t op, const std::vector<const cpu::HostTensor*>& outs) {
        for (size_t k = 0; k < outs.size(); ++k) {
            if (graph::is_float(outs[k]->dtype())) reference[float_graph.tensors[float_graph.ops[op].outputs[k]].name] = as_floats(*outs[k]);
        }
        return Status::ok();
    }));

    std::vector<cpu::HostTensor> inputs;
    for (size_t i = 0; i < float_inputs.size(); ++i) {
        cpu::HostTensor in = cpu::make_tensor_like(converted.tensors[converted.inputs[i]], float_inputs[i].shape());
        RKNN_RETURN_IF_ERROR(cpu::from_float32(cpu::to_float32(float_inputs[i]), &in));
        inputs.push_back(std::move(in));
    }
    std::vector<LayerAccuracy> layers;
    cpu::GraphExecutor::Options options;
    options.skip_unsupported = true;
    RKNN_ASSIGN_OR_RETURN(auto exec, cpu::GraphExecutor::create(converted, options));
    size_t done = 0;
    RKNN_RETURN_IF_ERROR(exec->run(inputs, &ignored, [&](int32_t op, const std::vector<const cpu::HostTensor*>& outs) {
        if (progress != nullptr) progress->update(++done);
        for (size_t k = 0; k < outs.size(); ++k) {
            const std::string& name = converted.tensors[converted.ops[op].outputs[k]].name;
            auto it = reference.find(name);
            if (it == reference.end()) continue;
            const std::vector<float> values = as_floats(*outs[k]);
            layers.push_back({name, graph::op_type_name(converted.ops[op].type), cosine_similarity(it->second, values),
                              euclidean_distance(it->second, values)});
        }
        return Status::ok();
    }));
    return layers;
}

std::string format_accuracy_table(const std::vector<LayerAccuracy>& layers) {
    std::string text;
    char line[512];
    std::snprintf(line, sizeof(line), "%-48s %-18s %10s %14s\n", "layer (output tensor)", "op", "cos", "euclidean");
    text += line;
    for (const LayerAccuracy& l : layers) {
        std::snprintf(line, sizeof(line), "%-48.48s %-18s %10.5f %14.5g\n", l.tensor.c_str(), l.op_type.c_str(),
                      l.cosine, l.euclidean);
        text += line;
    }
    return text;
}

}  // namespace rknn::convert
