#include "quant/hybrid.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "cpu/convert.h"
#include "cpu/graph_executor.h"
#include "passes/graph_edit.h"
#include "util/progress.h"

namespace rknn::convert {
namespace {

struct Sums {
    double dot = 0.0, a = 0.0, b = 0.0;
    void add(const cpu::HostTensor& x, const cpu::HostTensor& y) {
        for (int64_t i = 0; i < x.numel() && i < y.numel(); ++i) {
            const double u = x.data<float>()[i], v = y.data<float>()[i];
            dot += u * v;
            a += u * u;
            b += v * v;
        }
    }
    double cosine() const {
        if (a == 0.0 && b == 0.0) return 1.0;
        return a == 0.0 || b == 0.0 ? 0.0 : dot / std::sqrt(a * b);
    }
};

// The float model's value of every tensor it computes, by name.
StatusOr<std::map<std::string, cpu::HostTensor>> float_values(const graph::Graph& g, const std::vector<cpu::HostTensor>& inputs) {
    std::map<std::string, cpu::HostTensor> values;
    for (size_t i = 0; i < inputs.size() && i < g.inputs.size(); ++i) values[g.tensors[g.inputs[i]].name] = cpu::to_float32(inputs[i]);
    cpu::GraphExecutor::Options options;
    options.use_int8_kernels = false;
    options.skip_unsupported = true;
    RKNN_ASSIGN_OR_RETURN(auto exec, cpu::GraphExecutor::create(g, options));
    std::vector<cpu::HostTensor> outputs;
    RKNN_RETURN_IF_ERROR(exec->run(inputs, &outputs, [&](int32_t op, const std::vector<const cpu::HostTensor*>& outs) {
        for (size_t k = 0; k < outs.size(); ++k) {
            if (outs[k] != nullptr && graph::is_float(outs[k]->dtype()))
                values[g.tensors[g.ops[op].outputs[k]].name] = cpu::to_float32(*outs[k]);
        }
        return Status::ok();
    }));
    return values;
}

bool has_int8_output(const graph::Graph& g, const graph::Op& op) {
    for (int32_t t : op.outputs) {
        if (g.tensors[t].dtype == graph::DType::kInt8 && g.tensors[t].quant.is_quantized()) return true;
    }
    return false;
}

}  // namespace

StatusOr<std::vector<LayerError>> single_layer_errors(const graph::Graph& float_graph, const graph::Graph& quantized,
                                                      const std::vector<std::vector<cpu::HostTensor>>& samples,
                                                      Progress* progress) {
    RKNN_ASSIGN_OR_RETURN(auto exec, cpu::GraphExecutor::create(quantized));
    std::vector<Sums> sums(quantized.ops.size());
    std::vector<bool> measured(quantized.ops.size(), false);
    size_t done = 0;
    for (const auto& sample : samples) {
        RKNN_ASSIGN_OR_RETURN(const auto reference, float_values(float_graph, sample));
        for (int32_t index : exec->order()) {
            const graph::Op& op = quantized.ops[index];
            if (!has_int8_output(quantized, op)) continue;
            // The op's inputs as the int8 model holds them, made from the float values.
            std::vector<cpu::HostTensor> values(quantized.tensors.size());
            bool complete = true;
            for (int32_t in : op.inputs) {
                if (in < 0 || quantized.is_constant(in)) continue;
                const auto it = reference.find(quantized.tensors[in].name);
                if (it == reference.end()) {
                    complete = false;
                    break;
                }
                values[in] = cpu::make_tensor_like(quantized.tensors[in], it->second.shape());
                RKNN_RETURN_IF_ERROR(cpu::from_float32(it->second, &values[in]));
            }
            const auto expected = complete ? reference.find(quantized.tensors[op.outputs[0]].name) : reference.end();
            if (expected == reference.end()) continue;
            const Status ran = exec->run_op(index, values);
            if (!ran.is_ok()) continue;  // e.g. an op the CPU reference skips; it keeps no score
            sums[index].add(expected->second, cpu::to_float32(values[op.outputs[0]]));
            measured[index] = true;
        }
        if (progress != nullptr) progress->update(++done);
    }
    std::vector<LayerError> errors;
    for (int32_t index : exec->order()) {
        if (!measured[index]) continue;
        const graph::Op& op = quantized.ops[index];
        errors.push_back({op.name, graph::op_type_name(op.type), sums[index].cosine()});
    }
    return errors;
}

std::set<std::string> choose_fp16_ops(const graph::Graph& quantized, const std::vector<LayerError>& errors,
                                      double threshold, double max_share, std::vector<LayerError>* kept) {
    std::vector<LayerError> below;
    for (const LayerError& e : errors) {
        if (e.cosine < threshold) below.push_back(e);
    }
    std::sort(below.begin(), below.end(), [](const LayerError& a, const LayerError& b) { return a.cosine < b.cosine; });
    // At least one layer when any is below, however small the model.
    const size_t limit = max_share <= 0.0 ? 0
                                          : std::max<size_t>(1, static_cast<size_t>(std::ceil(
                                                                    max_share * static_cast<double>(errors.size()))));
    if (below.size() > limit) below.resize(limit);
    std::set<std::string> names;
    for (const LayerError& e : below) names.insert(e.op);
    // Feed the kept layers float16 too: their producers' outputs stay float16.
    const GraphIndex index(quantized);
    std::set<std::string> producers;
    for (const graph::Op& op : quantized.ops) {
        if (!names.count(op.name)) continue;
        for (int32_t in : op.inputs) {
            if (in < 0 || quantized.is_constant(in) || index.producer[in] < 0) continue;
            producers.insert(quantized.ops[index.producer[in]].name);
        }
    }
    if (kept != nullptr) *kept = below;
    names.insert(producers.begin(), producers.end());
    return names;
}

StatusOr<OutputProbe> OutputProbe::create(const graph::Graph& float_graph,
                                          std::vector<std::vector<cpu::HostTensor>> samples) {
    OutputProbe probe;
    cpu::GraphExecutor::Options options;
    options.use_int8_kernels = false;
    RKNN_ASSIGN_OR_RETURN(auto exec, cpu::GraphExecutor::create(float_graph, options));
    for (const auto& sample : samples) {
        std::vector<cpu::HostTensor> outputs;
        RKNN_RETURN_IF_ERROR(exec->run(sample, &outputs));
        for (cpu::HostTensor& t : outputs) t = cpu::to_float32(t);
        probe.expected_.push_back(std::move(outputs));
    }
    probe.samples_ = std::move(samples);
    for (size_t s = 0; s < probe.samples_.size(); ++s) probe.order_.push_back(s);
    return probe;
}

StatusOr<double> OutputProbe::worst_cosine(const graph::Graph& converted, double stop_below) {
    RKNN_ASSIGN_OR_RETURN(auto exec, cpu::GraphExecutor::create(converted));
    double worst = 1.0;
    for (size_t k = 0; k < order_.size(); ++k) {
        const size_t s = order_[k];
        std::vector<cpu::HostTensor> inputs;
        for (size_t i = 0; i < samples_[s].size() && i < converted.inputs.size(); ++i) {
            cpu::HostTensor in = cpu::make_tensor_like(converted.tensors[converted.inputs[i]], samples_[s][i].shape());
            RKNN_RETURN_IF_ERROR(cpu::from_float32(cpu::to_float32(samples_[s][i]), &in));
            inputs.push_back(std::move(in));
        }
        std::vector<cpu::HostTensor> outputs;
        RKNN_RETURN_IF_ERROR(exec->run(inputs, &outputs));
        for (size_t o = 0; o < outputs.size() && o < expected_[s].size(); ++o) {
            Sums sums;
            sums.add(expected_[s][o], cpu::to_float32(outputs[o]));
            worst = std::min(worst, sums.cosine());
        }
        if (worst < stop_below) {
            std::rotate(order_.begin(), order_.begin() + static_cast<long>(k), order_.begin() + static_cast<long>(k) + 1);
            break;
        }
    }
    return worst;
}

namespace {

// --hybrid output's search state: layers in `order` (worst single layer
// first), each kept in float16 until a measurement shows the outputs hold
// without it.
class BlockSearch {
public:
    BlockSearch(std::vector<LayerError> order, double floor, const KeptSetScore& score, Progress* progress,
                OutputSearch* search)
        : order_(std::move(order)), kept_(order_.size(), true), floor_(floor), score_(score), progress_(progress),
          search_(search) {}

    // Blocks of layers go back to int8 from the most accurate end. A block
    // whose measurement keeps the floor goes back whole: one measurement for
    // many layers (and a passing one runs every sample, so this is where the
    // time goes). A block that does not is halved until each layer the
    // outputs need is found alone. The next block is twice as long after a
    // block that went back whole, half as long otherwise.
    Status run() {
        size_t block = kFirstBlock;
        for (size_t end = order_.size(); end > 0;) {
            const size_t begin = end - std::min(block, end);
            RKNN_ASSIGN_OR_RETURN(const bool whole, give_back(begin, end, false));
            block = whole ? block * 2 : std::max<size_t>(1, block / 2);
            end = begin;
        }
        search_->kept = kept_layers(order_.size(), order_.size());
        return Status::ok();
    }

private:
    static constexpr size_t kFirstBlock = 4;

    // The kept layers, less those in [begin, end) of the order.
    std::vector<LayerError> kept_layers(size_t begin, size_t end) const {
        std::vector<LayerError> kept;
        for (size_t i = 0; i < order_.size(); ++i) {
            if (kept_[i] && (i < begin || i >= end)) kept.push_back(order_[i]);
        }
        return kept;
    }

    // Tries to give back [begin, end); returns whether all of it went back.
    // `known_to_fail`: this exact trial was measured under the floor already.
    StatusOr<bool> give_back(size_t begin, size_t end, bool known_to_fail) {
        if (!known_to_fail) {
            RKNN_ASSIGN_OR_RETURN(const double worst, score_(kept_layers(begin, end), floor_));
            ++search_->evaluations;
            if (worst >= floor_) {
                for (size_t i = begin; i < end; ++i) kept_[i] = false;
                search_->worst = worst;
                decided(end - begin);
                return true;
            }
        }
        if (end - begin == 1) {
            decided(1);
            return false;
        }
        const size_t mid = begin + (end - begin) / 2;
        RKNN_ASSIGN_OR_RETURN(const bool upper_went_back, give_back(mid, end, false));
        // With the whole upper half back, giving back the lower half is the
        // trial that just failed.
        RKNN_RETURN_IF_ERROR(give_back(begin, mid, upper_went_back).status());
        return false;
    }

    void decided(size_t layers) {
        decided_ += layers;
        if (progress_ != nullptr) progress_->update(decided_);
    }

    const std::vector<LayerError> order_;
    std::vector<bool> kept_;
    const double floor_;
    const KeptSetScore& score_;
    Progress* progress_;
    OutputSearch* search_;
    size_t decided_ = 0;
};

}  // namespace

StatusOr<OutputSearch> fewest_fp16_layers_for_outputs(std::vector<LayerError> errors, double floor,
                                                      const KeptSetScore& score, Progress* progress) {
    std::stable_sort(errors.begin(), errors.end(), [](const LayerError& a, const LayerError& b) { return a.cosine < b.cosine; });
    OutputSearch search;
    search.kept = errors;
    RKNN_ASSIGN_OR_RETURN(search.worst_all_fp16, score(search.kept, 0.0));
    search.worst = search.worst_all_fp16;
    search.evaluations = 1;
    if (search.worst_all_fp16 < floor) return search;
    BlockSearch blocks(std::move(errors), floor, score, progress, &search);
    RKNN_RETURN_IF_ERROR(blocks.run());
    return search;
}

}  // namespace rknn::convert
