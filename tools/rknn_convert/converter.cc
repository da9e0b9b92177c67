#include "converter.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <unordered_map>
#include <set>

#include "base/content_hash.h"
#include "base/version.h"
#include "model/model_file.h"
#include "custom_op_plugin.h"
#include "data/dataset.h"
#include "graph/shape_check.h"
#include "graph/topology.h"
#include "onnx_import.h"
#include "passes/passes.h"
#include "quant/bias_correction.h"
#include "quant/calibrate.h"
#include "quant/hybrid.h"
#include "quant/quantize.h"
#include "shape_sets.h"
#include "util/progress.h"

namespace rknn::convert {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

int64_t total_elements(const std::vector<graph::Shape>& set) {
    int64_t total = 0;
    for (const graph::Shape& s : set) {
        int64_t n = 0;
        if (graph::checked_num_elements(s, &n)) total += n;
    }
    return total;
}

// --dynamic-range: the --input-shapes sets, each inside the ranges, and the
// ranges' largest shapes as a set (the runtime sizes its buffers by the sets).
StatusOr<std::vector<std::vector<graph::Shape>>> sets_with_range(const graph::Graph& g, const ConvertOptions& options) {
    const std::vector<graph::ShapeRange>& ranges = options.dynamic_range;
    if (ranges.size() != g.inputs.size())
        return make_status(StatusCode::kInvalidArgument, "--dynamic-range gives %zu ranges; the model has %zu inputs",
                           ranges.size(), g.inputs.size());
    std::vector<graph::Shape> largest;
    for (size_t i = 0; i < ranges.size(); ++i) {
        const graph::ShapeRange& r = ranges[i];
        const graph::Tensor& input = g.tensors[static_cast<size_t>(g.inputs[i])];
        if (r.min.size() != input.shape.size() || r.max.size() != r.min.size() || r.step.size() != r.min.size())
            return Status(StatusCode::kInvalidArgument, "--dynamic-range: wrong rank for input " + input.name);
        for (size_t d = 0; d < r.min.size(); ++d) {
            if (r.min[d] < 1 || r.max[d] < r.min[d] || r.max[d] >= (int64_t{1} << 31) || r.step[d] < 1)
                return Status(StatusCode::kInvalidArgument, "--dynamic-range " + graph::shape_range_to_string(r) +
                                                                ": each dim needs 1 <= min <= max < 2^31 and a step of 1 "
                                                                "or more");
            if ((r.max[d] - r.min[d]) % r.step[d] != 0)
                return Status(StatusCode::kInvalidArgument, "--dynamic-range " + graph::shape_range_to_string(r) +
                                                                ": each max must be min plus a whole number of steps");
        }
        largest.push_back(r.max);
    }
    std::vector<std::vector<graph::Shape>> sets = options.input_shapes;
    for (const std::vector<graph::Shape>& set : sets) {
        if (set.size() != ranges.size())
            return make_status(StatusCode::kInvalidArgument, "--input-shapes gives %zu shapes; the model has %zu inputs",
                               set.size(), ranges.size());
        for (size_t i = 0; i < set.size(); ++i)
            if (!ranges[i].contains(set[i]))
                return Status(StatusCode::kInvalidArgument, "--input-shapes " + graph::shapes_to_string(set) +
                                                                " is outside --dynamic-range for input " +
                                                                g.tensors[static_cast<size_t>(g.inputs[i])].name);
    }
    if (std::find(sets.begin(), sets.end(), largest) == sets.end()) sets.push_back(largest);
    return sets;
}

// Picks the shapes the graph is inferred and calibrated with: the given set
// with the most elements (as the vendor does), or the declared static shapes.
StatusOr<std::vector<graph::Shape>> main_shapes(graph::Graph* g, const ConvertOptions& options) {
    if (!options.dynamic_range.empty()) {
        RKNN_ASSIGN_OR_RETURN(std::vector<std::vector<graph::Shape>> sets, sets_with_range(*g, options));
        g->shape_sets = sets;
        g->input_ranges = options.dynamic_range;
        return *std::max_element(sets.begin(), sets.end(),
                                 [](const auto& a, const auto& b) { return total_elements(a) < total_elements(b); });
    }
    if (!options.input_shapes.empty()) {
        for (const auto& set : options.input_shapes) {
            if (set.size() != g->inputs.size()) {
                return make_status(StatusCode::kInvalidArgument, "--input-shapes gives %zu shapes; the model has %zu inputs",
                                   set.size(), g->inputs.size());
            }
            for (size_t i = 0; i < set.size(); ++i) {
                if (set[i].size() != g->tensors[g->inputs[i]].shape.size())
                    return Status(StatusCode::kInvalidArgument, "--input-shapes: wrong rank for input " +
                                                                    g->tensors[g->inputs[i]].name);
            }
        }
        if (options.input_shapes.size() > 1) g->shape_sets = options.input_shapes;
        return *std::max_element(options.input_shapes.begin(), options.input_shapes.end(),
                                 [](const auto& a, const auto& b) { return total_elements(a) < total_elements(b); });
    }
    std::vector<graph::Shape> shapes;
    for (int32_t in : g->inputs) {
        const graph::Tensor& t = g->tensors[in];
        for (int64_t d : t.shape) {
            if (d < 0) {
                return Status(StatusCode::kInvalidArgument, "input " + t.name + " " + graph::shape_to_string(t.shape) +
                                                                " has dynamic dims; give --input-shapes");
            }
        }
        shapes.push_back(t.shape);
    }
    return shapes;
}

// The shapes the graph is simplified and calibrated at: --calib-shapes, or
// the stored ones.
StatusOr<std::vector<graph::Shape>> calibration_shapes(const graph::Graph& g, const ConvertOptions& options,
                                                       const std::vector<graph::Shape>& stored) {
    if (options.calib_shapes.empty()) return stored;
    if (options.calib_shapes.size() != g.inputs.size())
        return make_status(StatusCode::kInvalidArgument, "--calib-shapes gives %zu shapes; the model has %zu inputs",
                           options.calib_shapes.size(), g.inputs.size());
    for (size_t i = 0; i < g.inputs.size(); ++i) {
        const graph::Shape& s = options.calib_shapes[i];
        if (s.size() != stored[i].size())
            return Status(StatusCode::kInvalidArgument,
                          "--calib-shapes: wrong rank for input " + g.tensors[static_cast<size_t>(g.inputs[i])].name);
        if (!g.input_ranges.empty() && !g.input_ranges[i].contains(s))
            return Status(StatusCode::kInvalidArgument, "--calib-shapes " + graph::shapes_to_string(options.calib_shapes) +
                                                            " is outside --dynamic-range");
    }
    return options.calib_shapes;
}

// Shape inference that tolerates ops whose shapes depend on run-time values.
Status infer_shapes(graph::Graph* g, const std::vector<graph::Shape>& shapes) {
    Status status = graph::infer_graph_shapes(g, shapes);
    if (status.code() == StatusCode::kFailedPrecondition) return Status::ok();
    return status;
}

}  // namespace

Status run_graph_passes(graph::Graph* g, const std::vector<graph::Shape>& shapes, std::vector<std::string>* log) {
    RKNN_ASSIGN_OR_RETURN(const int folded, fold_constants(g, &shapes));
    const int identities = remove_identities(g);
    const int canonical = canonicalize_arithmetic(g);
    RKNN_ASSIGN_OR_RETURN(const int bn, fold_batch_norm(g));
    RKNN_ASSIGN_OR_RETURN(const int bn_affine, batch_norms_to_affine(g));
    // Patterns first: a Conv's bias must not swallow the "+ 3" of a HardSigmoid.
    const int hard = fuse_hard_activations(g);
    const int silu = fuse_silu(g);
    const int gelu = fuse_gelu(g);
    const int layer_norm = fuse_layer_norms(g);
    int affine = fold_affine_into_producers(g);
    affine += fold_affine_into_activations(g);
    affine += fold_affine_into_consumers(g);
    const int depthwise = affine_to_depthwise(g);
    const int deconvolutions = deconvolutions_to_depth_to_space(g);
    const int residual = fuse_residual_adds(g);
    const int activations = fuse_activations(g);
    const int dead = remove_dead_code(g);
    RKNN_RETURN_IF_ERROR(infer_shapes(g, shapes));
    log->push_back("passes: " + std::to_string(folded) + " ops folded to constants, " + std::to_string(identities) +
                   " identities removed, " + std::to_string(canonical) + " arithmetic ops made canonical, " +
                   std::to_string(bn) + " BatchNorms folded (" + std::to_string(bn_affine) + " more made affine), " +
                   std::to_string(affine) + " constant Mul/Add folded into neighbours, " + std::to_string(depthwise) +
                   " made depthwise convolutions, " + std::to_string(deconvolutions) +
                   " transposed convolutions made 1x1 convolutions and DepthToSpace, " + std::to_string(hard) + " HardSigmoid/HardSwish, " +
                   std::to_string(silu) + " SiLU, " + std::to_string(gelu) + " GELU and " + std::to_string(layer_norm) +
                   " LayerNorm patterns fused, " + std::to_string(residual) + " residual adds and " +
                   std::to_string(activations) + " activations fused into convolutions, " + std::to_string(dead) +
                   " dead ops removed");
    return Status::ok();
}

namespace {

Status set_preprocess(graph::Graph* g, const ConvertOptions& options) {
    if (options.mean.empty() && options.std.empty()) return Status::ok();
    g->preprocess.assign(g->inputs.size(), graph::InputPreprocess{});
    size_t next = 0;
    for (size_t i = 0; i < g->inputs.size(); ++i) {
        const graph::Tensor& t = g->tensors[g->inputs[i]];
        if (t.shape.size() != 4 || !graph::is_float(t.dtype)) continue;  // pre-processing is for image inputs
        graph::InputPreprocess& p = g->preprocess[i];
        const size_t index_mean = std::min(next, options.mean.empty() ? 0 : options.mean.size() - 1);
        const size_t index_std = std::min(next, options.std.empty() ? 0 : options.std.size() - 1);
        if (!options.mean.empty()) p.mean = options.mean[index_mean];
        if (!options.std.empty()) p.std = options.std[index_std];
        for (const std::vector<float>* v : {&p.mean, &p.std}) {
            if (!v->empty() && v->size() != 1 && static_cast<int64_t>(v->size()) != t.shape[1]) {
                return Status(StatusCode::kInvalidArgument, "--mean/--std give " + std::to_string(v->size()) +
                                                                " values; input " + t.name + " has " +
                                                                std::to_string(t.shape[1]) + " channels");
            }
        }
        for (float s : p.std) {
            if (s == 0.0f) return Status(StatusCode::kInvalidArgument, "--std values must not be 0");
        }
        p.reverse_channels = options.rgb2bgr;
        p.user_layout = graph::Layout::kNHWC;
        p.user_dtype = graph::DType::kUInt8;
        ++next;
    }
    return Status::ok();
}

StatusOr<std::vector<std::vector<cpu::HostTensor>>> load_calibration(const graph::Graph& g, const ConvertOptions& o) {
    if (o.dataset.empty()) return Status(StatusCode::kInvalidArgument, "--dtype int8 needs --dataset");
    RKNN_ASSIGN_OR_RETURN(auto files, list_dataset(o.dataset, g.inputs.size()));
    if (o.max_calibration_samples > 0 && files.size() > o.max_calibration_samples) files.resize(o.max_calibration_samples);
    std::vector<std::vector<cpu::HostTensor>> samples;
    for (const auto& sample : files) {
        RKNN_ASSIGN_OR_RETURN(auto inputs, load_sample(sample, g));
        samples.push_back(std::move(inputs));
    }
    return samples;
}

// Empirical bias correction on the final int8 graph (quant/bias_correction.h).
Status correct_biases(const Calibration& calibration, const std::vector<std::vector<cpu::HostTensor>>& samples,
                      const ConvertOptions& options, ConvertResult* result) {
    if (!options.bias_correction || !options.empirical_bias_correction) return Status::ok();
    const auto start = Clock::now();
    // Every sample's live tensors are held at once: a bounded share of them.
    // (The means it compares with come from all samples; 64 estimate them well.)
    constexpr size_t kMaxSamples = 64;
    const std::vector<std::vector<cpu::HostTensor>> used(samples.begin(),
                                                         samples.begin() + static_cast<long>(std::min(samples.size(), kMaxSamples)));
    Progress progress("bias correction", result->graph.ops.size(), "ops", options.progress);
    RKNN_ASSIGN_OR_RETURN(const BiasCorrectionResult corrected,
                          correct_biases_empirically(&result->graph, calibration.channel_means, used, &progress));
    progress.finish();
    char line[300];
    std::snprintf(line, sizeof(line),
                  "int8: %d biases corrected for the mean shift of what their layers read in the int8 model "
                  "(%zu samples, largest %.2f output steps; %.1f s)",
                  corrected.layers_corrected, used.size(), corrected.largest_shift, seconds_since(start));
    result->log.push_back(line);
    if (!corrected.failed_ops.empty()) {
        result->log.push_back("int8: bias correction could not run " + std::to_string(corrected.failed_ops.size()) +
                              " op(s) on the CPU, so the layers after them keep the weight-rounding correction: " +
                              corrected.failed_ops.front());
    }
    return Status::ok();
}

// --hybrid output (quant/hybrid.h): the float16 layers that keep every
// output's cosine >= options.hybrid_output on up to kOutputProbeSamples
// calibration samples. Each candidate set is quantised from `unquantized`
// and run on the CPU reference.
StatusOr<std::set<std::string>> fp16_ops_for_outputs(const graph::Graph& float_graph, const graph::Graph& unquantized,
                                                     const std::vector<TensorRange>& ranges,
                                                     const QuantizeOptions& quantize,
                                                     const std::vector<std::vector<cpu::HostTensor>>& samples,
                                                     const std::vector<LayerError>& errors,
                                                     const ConvertOptions& options, std::vector<std::string>* log) {
    constexpr size_t kOutputProbeSamples = 32;
    const auto start = Clock::now();
    RKNN_ASSIGN_OR_RETURN(OutputProbe probe,
                          OutputProbe::create(float_graph, {samples.begin(), samples.begin() + static_cast<long>(std::min(
                                                                                 samples.size(), kOutputProbeSamples))}));
    const auto fp16_ops_of = [&](const std::vector<LayerError>& kept) {
        std::set<std::string> ops = quantize.fp16_ops;  // --fp16-layers
        const std::set<std::string> chosen = choose_fp16_ops(unquantized, kept, 2.0, 1.0, nullptr);
        ops.insert(chosen.begin(), chosen.end());
        return ops;
    };
    const KeptSetScore score = [&](const std::vector<LayerError>& kept, double stop_below) -> StatusOr<double> {
        QuantizeOptions trial_options = quantize;
        trial_options.fp16_ops = fp16_ops_of(kept);
        graph::Graph trial = unquantized;
        RKNN_RETURN_IF_ERROR(quantize_int8(&trial, ranges, trial_options));
        StatusOr<double> worst = probe.worst_cosine(trial, stop_below);
        if (!worst.is_ok())
            return Status(worst.status().code(), "--hybrid output: the CPU reference cannot run the model to measure its "
                                                 "outputs: " + worst.status().message());
        return worst;
    };
    Progress progress("hybrid output search", errors.size(), "layers", options.progress);
    RKNN_ASSIGN_OR_RETURN(const OutputSearch search,
                          fewest_fp16_layers_for_outputs(errors, options.hybrid_output, score, &progress));
    progress.finish();
    char head[400];
    std::snprintf(head, sizeof(head),
                  "hybrid output: %zu of %zu int8 layers kept in float16 (%zu layers with those feeding them) for an "
                  "output cosine >= %.4f on %zu samples; worst %.6f (every layer float16: %.6f); %zu models measured "
                  "in %.1f s",
                  search.kept.size(), errors.size(), fp16_ops_of(search.kept).size() - quantize.fp16_ops.size(),
                  options.hybrid_output, probe.samples(), search.worst, search.worst_all_fp16, search.evaluations,
                  seconds_since(start));
    std::string line = head;
    if (search.worst_all_fp16 < options.hybrid_output)
        line += "; even every layer in float16 stays under the floor, so every layer is kept";
    for (const LayerError& e : search.kept) line += "\n  " + e.op + " (" + e.op_type + ", single layer " + std::to_string(e.cosine) + ")";
    if (search.kept.empty()) {
        log->push_back(line);
        return std::set<std::string>{};
    }
    // The same model again, without the search (another shape, --calib-shapes):
    std::set<std::string> ops = fp16_ops_of(search.kept);
    line += "\n  to convert the same way without the search: --fp16-layers ";
    for (const std::string& op : ops) line += op + (op == *ops.rbegin() ? "" : ",");
    log->push_back(line);
    return ops;
}

// Calibration, int8 quantisation, and with --hybrid the layers kept in float16.
Status to_int8(const graph::Graph& float_graph, const ConvertOptions& options, ConvertResult* result) {
    graph::Graph& g = result->graph;
    CalibrationOptions calib;
    RKNN_ASSIGN_OR_RETURN(calib.method, parse_calib_method(options.calib_method));
    calib.percentile = options.calib_percentile;
    calib.progress = options.progress;
    const auto start = Clock::now();
    RKNN_ASSIGN_OR_RETURN(const auto samples, load_calibration(g, options));
    RKNN_ASSIGN_OR_RETURN(const Calibration calibration, calibrate(float_graph, samples, calib));
    result->calibration_seconds = seconds_since(start);
    result->calibration_samples = samples.size();
    // Fuse non-linear activations now that their inputs' ranges are known.
    std::map<std::string, std::pair<float, float>> by_name;
    for (size_t t = 0; t < calibration.ranges.size(); ++t) {
        const TensorRange& r = calibration.ranges[t];
        if (r.valid) by_name[float_graph.tensors[t].name] = {r.min, r.max};
    }
    const int lut = fuse_lut_activations(&g, &by_name);
    std::vector<TensorRange> ranges(g.tensors.size());
    for (size_t t = 0; t < g.tensors.size(); ++t) {
        const auto it = by_name.find(g.tensors[t].name);
        if (it != by_name.end()) ranges[t] = {true, it->second.first, it->second.second};
    }
    result->log.push_back(std::to_string(lut) + " non-linear activations fused into convolutions (int8 lookup tables)");
    QuantizeOptions quantize;
    quantize.fp16_ops.insert(options.fp16_layers.begin(), options.fp16_layers.end());
    for (const std::string& name : quantize.fp16_ops) {
        bool found = false;
        for (const graph::Op& op : g.ops) found = found || op.name == name;
        if (!found) return Status(StatusCode::kInvalidArgument, "--fp16-layers names no op called \"" + name + "\"");
    }
    if (options.bias_correction) quantize.channel_means = &calibration.channel_means;
    const graph::Graph unquantized = g;
    RKNN_RETURN_IF_ERROR(quantize_int8(&g, ranges, quantize));
    result->log.push_back("int8: calibrated (" + options.calib_method + ") on " + std::to_string(samples.size()) +
                          " samples in " + std::to_string(result->calibration_seconds) + " s" +
                          (options.bias_correction ? ", biases corrected for weight rounding" : ""));
    if (options.hybrid_threshold <= 0.0 && options.hybrid_output <= 0.0)
        return correct_biases(calibration, samples, options, result);

    // --hybrid: measure each int8 layer alone, then keep the worst in float16
    // (auto), or as few as the outputs need (output).
    const std::vector<std::vector<cpu::HostTensor>> probe(samples.begin(),
                                                          samples.begin() + static_cast<long>(std::min<size_t>(samples.size(), 4)));
    Progress progress("hybrid analysis", probe.size(), "samples", options.progress);
    RKNN_ASSIGN_OR_RETURN(const std::vector<LayerError> errors, single_layer_errors(float_graph, g, probe, &progress));
    progress.finish();
    std::set<std::string> fp16;
    if (options.hybrid_output > 0.0) {
        RKNN_ASSIGN_OR_RETURN(fp16, fp16_ops_for_outputs(float_graph, unquantized, ranges, quantize, samples, errors,
                                                         options, &result->log));
        if (fp16.empty()) return correct_biases(calibration, samples, options, result);
    } else {
        std::vector<LayerError> kept;
        fp16 = choose_fp16_ops(g, errors, options.hybrid_threshold, options.hybrid_max_share, &kept);
        size_t below = 0;
        for (const LayerError& e : errors) below += e.cosine < options.hybrid_threshold ? 1 : 0;
        std::string line = "hybrid: " + std::to_string(below) + " of " + std::to_string(errors.size()) +
                           " int8 layers below single-layer cosine " + std::to_string(options.hybrid_threshold);
        if (kept.empty()) {
            result->log.push_back(line + "; all stay int8");
            return correct_biases(calibration, samples, options, result);
        }
        line += "; kept in float16, worst first (at most " + std::to_string(kept.size()) +
                "), with the layers feeding them (" + std::to_string(fp16.size()) + " layers):";
        for (const LayerError& e : kept) line += "\n  " + e.op + " (" + e.op_type + ", " + std::to_string(e.cosine) + ")";
        result->log.push_back(line);
    }
    g = unquantized;
    quantize.fp16_ops.insert(fp16.begin(), fp16.end());
    result->hybrid_fp16_ops.assign(quantize.fp16_ops.begin(), quantize.fp16_ops.end());
    RKNN_RETURN_IF_ERROR(quantize_int8(&g, ranges, quantize));
    return correct_biases(calibration, samples, options, result);
}


// --batch: the graph stays one item's (calibration too); the runtime runs
// `batch` items per rknn_run, each as the graph says.
Status set_batch(uint32_t batch, graph::Graph* g, std::vector<std::string>* log) {
    if (batch == 1) return Status::ok();
    if (batch == 0 || batch > 256) return Status(StatusCode::kInvalidArgument, "--batch takes 1..256");
    if (!g->shape_sets.empty())
        return Status(StatusCode::kInvalidArgument, "--batch: a dynamic-shape model cannot also be multi-batch");
    for (const std::vector<int32_t>* list : {&g->inputs, &g->outputs}) {
        for (int32_t t : *list) {
            const graph::Tensor& tensor = g->tensors[static_cast<size_t>(t)];
            if (tensor.shape.empty() || tensor.shape[0] != 1)
                return Status(StatusCode::kInvalidArgument,
                              "--batch: '" + tensor.name + "' has shape " + graph::shape_to_string(tensor.shape) +
                                  "; every input and output needs a leading batch dim of 1");
        }
    }
    g->batch = batch;
    log->push_back("multi-batch: " + std::to_string(batch) + " items per run, each run as the batch-1 graph");
    return Status::ok();
}

// --remove-weights --master: the master's graph. An int8 slave is calibrated
// at the master's input shapes, unless --calib-shapes says otherwise.
StatusOr<std::optional<graph::Graph>> load_master(ConvertOptions* options) {
    if (!options->remove_weights) {
        if (!options->master_path.empty())
            return Status(StatusCode::kInvalidArgument, "--master goes with --remove-weights");
        return std::optional<graph::Graph>();
    }
    if (options->master_path.empty())
        return Status(StatusCode::kInvalidArgument, "--remove-weights needs --master MASTER.rknn");
    StatusOr<graph::Graph> loaded = model::load_model_from_file(options->master_path);
    if (!loaded.is_ok()) return loaded.status().with_context("--master " + options->master_path);
    graph::Graph master = std::move(loaded.value());
    if (master.target_soc != options->target_soc)
        return Status(StatusCode::kInvalidArgument, "--master was converted for " + master.target_soc + ", not " +
                                                        options->target_soc);
    if (!master.shape_sets.empty() || master.batch != 1)
        return Status(StatusCode::kInvalidArgument, "--master is a dynamic-shape or multi-batch model");
    if (options->dtype == TargetDType::kInt8 && options->calib_shapes.empty())
        for (int32_t t : master.inputs) options->calib_shapes.push_back(master.tensors[static_cast<size_t>(t)].shape);
    return std::optional<graph::Graph>(std::move(master));
}

// Every constant the master holds byte for byte (same name, type and shape)
// is left to it: the file keeps its content hash instead of its bytes.
Status remove_master_weights(const graph::Graph& master, graph::Graph* g, std::vector<std::string>* log) {
    if (!g->shape_sets.empty() || g->batch != 1)
        return Status(StatusCode::kInvalidArgument,
                      "--remove-weights: a slave cannot be a dynamic-shape or multi-batch model (the runtime refuses it)");
    std::unordered_map<std::string, int32_t> by_name;
    for (size_t i = 0; i < master.tensors.size(); ++i) by_name.emplace(master.tensors[i].name, static_cast<int32_t>(i));
    std::vector<std::string> kept_names;  // constants the master does not hold as they are
    size_t removed = 0;
    uint64_t removed_bytes = 0;
    for (graph::Tensor& t : g->tensors) {
        if (t.buffer < 0) continue;
        const graph::Buffer& mine = g->buffers[static_cast<size_t>(t.buffer)];
        const auto found = by_name.find(t.name);
        const graph::Buffer* theirs = found == by_name.end() ? nullptr : master.constant_buffer(found->second);
        const graph::Tensor* same = theirs == nullptr ? nullptr : &master.tensors[static_cast<size_t>(found->second)];
        if (same == nullptr || theirs->size != mine.size || same->dtype != t.dtype || same->shape != t.shape ||
            !(same->quant == t.quant) || (mine.size > 0 && std::memcmp(theirs->data, mine.data, mine.size) != 0)) {
            kept_names.push_back(t.name);
            continue;
        }
        t.master_hash = content_hash(mine.data, mine.size);
        if (t.master_hash == 0) t.master_hash = 1;  // 0 means "not removed"; a zero hash cannot match then
        t.buffer = -1;
        ++removed;
        removed_bytes += mine.size;
    }
    if (removed == 0)
        return Status(StatusCode::kInvalidArgument,
                      "--remove-weights: no constant is the master's (convert both from the same ONNX file with the "
                      "same options and dataset)");
    // The buffers still used, in order.
    std::vector<graph::Buffer> kept;
    std::vector<int32_t> renumbered(g->buffers.size(), -1);
    uint64_t kept_bytes = 0;
    for (graph::Tensor& t : g->tensors) {
        if (t.buffer < 0) continue;
        int32_t& slot = renumbered[static_cast<size_t>(t.buffer)];
        if (slot < 0) {
            slot = static_cast<int32_t>(kept.size());
            kept.push_back(g->buffers[static_cast<size_t>(t.buffer)]);
            kept_bytes += kept.back().size;
        }
        t.buffer = slot;
    }
    g->buffers = std::move(kept);
    log->push_back("--remove-weights: " + std::to_string(removed) + " constants (" + std::to_string(removed_bytes) +
                   " bytes) left to the master; " + std::to_string(g->buffers.size()) + " kept (" +
                   std::to_string(kept_bytes) + " bytes)");
    // A kept constant that an NPU op packs makes the runtime refuse the
    // slave on this master; name them, so that a mismatch is found here.
    if (!kept_names.empty()) {
        std::string names;
        for (size_t i = 0; i < kept_names.size() && i < 8; ++i) names += (i ? ", " : "") + kept_names[i];
        if (kept_names.size() > 8) names += ", ...";
        log->push_back("--remove-weights: kept, as the master's differ (the runtime refuses the slave if an NPU op "
                       "packs one of them): " + names);
    }
    return Status::ok();
}

}  // namespace

std::string converter_version() { return std::string("rknn_convert ") + version::openrknn_version(); }

StatusOr<ConvertResult> convert_onnx(const ConvertOptions& given) {
    ConvertOptions options = given;
    for (const std::string& plugin : given.custom_op_plugins) {
        RKNN_ASSIGN_OR_RETURN(std::string type, load_custom_op_plugin(plugin));
        if (std::find(options.custom_ops.begin(), options.custom_ops.end(), type) == options.custom_ops.end())
            options.custom_ops.push_back(type);
    }
    if (std::find(std::begin(kSupportedTargets), std::end(kSupportedTargets), options.target_soc) ==
        std::end(kSupportedTargets)) {
        return Status(StatusCode::kInvalidArgument, "unknown --target " + options.target_soc +
                                                        " (rk3588, rk3568, rk3566, rk3576, rk3562)");
    }
    if (options.custom_string.size() > 1023) {
        return Status(StatusCode::kInvalidArgument, "--custom-string is longer than 1023 bytes");
    }
    RKNN_ASSIGN_OR_RETURN(const std::optional<graph::Graph> master, load_master(&options));
    ImportOptions import_options;
    import_options.custom_op_types = options.custom_ops;
    RKNN_ASSIGN_OR_RETURN(ImportResult imported, import_onnx_file(options.onnx_path, import_options));
    if (!imported.problems.empty()) {
        std::string text = "the model uses what rknn_convert does not support:";
        for (const std::string& p : imported.problems) text += "\n  " + p;
        return Status(StatusCode::kModelInvalid, text);
    }
    ConvertResult result;
    result.graph = std::move(imported.graph);
    graph::Graph& g = result.graph;
    result.log.push_back("imported " + options.onnx_path + ": opset " + std::to_string(imported.opset) + ", " +
                         std::to_string(g.ops.size()) + " ops, " + std::to_string(g.tensors.size()) + " tensors");
    RKNN_ASSIGN_OR_RETURN(const std::vector<graph::Shape> shapes, main_shapes(&g, options));
    RKNN_ASSIGN_OR_RETURN(const std::vector<graph::Shape> work_shapes, calibration_shapes(g, options, shapes));
    const bool respecialise = work_shapes != shapes;
    if (respecialise)
        result.log.push_back("--calib-shapes: simplified and calibrated at " + graph::shapes_to_string(work_shapes) +
                             ", stored at " + graph::shapes_to_string(shapes));
    else if (!g.shape_sets.empty())
        result.log.push_back("dynamic shapes: inferred (and calibrated, for int8) and stored at the largest set, " +
                             graph::shapes_to_string(shapes));
    RKNN_RETURN_IF_ERROR(run_graph_passes(&g, work_shapes, &result.log));
    RKNN_RETURN_IF_ERROR(set_preprocess(&g, options));

    const graph::Graph float_graph = g;  // kept for calibration and the accuracy analysis
    if (options.dtype == TargetDType::kInt8) {
        RKNN_RETURN_IF_ERROR(to_int8(float_graph, options, &result));
    } else {
        fuse_lut_activations(&g, nullptr);
    }
    if (options.dtype == TargetDType::kFloat16) {
        RKNN_RETURN_IF_ERROR(convert_to_fp16(&g));
        result.log.push_back("fp16: weights and activations converted to float16");
    }
    if (const int moved = fold_fp16_activation_bias_into_readers(&g); moved > 0)
        result.log.push_back(std::to_string(moved) +
                             " float16 HardSwish biases moved into the convolutions reading them (one DPU pass each)");
    if (!options.accuracy_input.empty()) {
        if (float_graph.inputs.size() != 1)
            return Status(StatusCode::kInvalidArgument, "--accuracy-analysis works for one-input models");
        std::vector<cpu::HostTensor> inputs;
        RKNN_ASSIGN_OR_RETURN(cpu::HostTensor input, load_input(options.accuracy_input, float_graph, 0));
        inputs.push_back(std::move(input));
        Progress progress("accuracy analysis", g.ops.size(), "layers", options.progress);
        RKNN_ASSIGN_OR_RETURN(result.accuracy, compare_layers(float_graph, g, inputs, &progress));
    }
    g.target_soc = options.target_soc;
    g.converter_version = converter_version();
    g.custom_string = options.custom_string;
    RKNN_RETURN_IF_ERROR(graph::validate_structure(g));
    RKNN_RETURN_IF_ERROR(graph::check_graph_shapes(g));
    if (!g.shape_sets.empty() || respecialise) {
        std::vector<ShapeProbe> probes = shape_probes(g);
        if (g.shape_sets.empty()) probes.insert(probes.begin(), {shapes, "--input-shapes " + graph::shapes_to_string(shapes)});
        if (respecialise && std::none_of(probes.begin(), probes.end(), [&](const ShapeProbe& p) { return p.shapes == work_shapes; }))
            probes.push_back({work_shapes, "--calib-shapes " + graph::shapes_to_string(work_shapes)});
        RKNN_ASSIGN_OR_RETURN(const std::vector<graph::Graph> sources, source_graphs_at(options, probes));
        RKNN_RETURN_IF_ERROR(generalise_reshape_targets(&g, sources, &result.log));
        if (respecialise) {
            const Status stored = graph::reinfer_graph_shapes(&g, shapes);
            if (!stored.is_ok())
                return Status(StatusCode::kInvalidArgument, "--calib-shapes: the graph made at " +
                                                                graph::shapes_to_string(work_shapes) + " cannot take " +
                                                                graph::shapes_to_string(shapes) + " (" +
                                                                stored.message() + ")");
            RKNN_RETURN_IF_ERROR(graph::check_graph_shapes(g));
        }
        RKNN_RETURN_IF_ERROR(check_shape_sets(g, probes, sources, &result.log));
    }
    RKNN_RETURN_IF_ERROR(set_batch(options.batch, &g, &result.log));
    if (master) RKNN_RETURN_IF_ERROR(remove_master_weights(*master, &g, &result.log));
    return result;
}

}  // namespace rknn::convert
