#include "quant/calibrate.h"

#include <algorithm>
#include <cmath>

#include "cpu/convert.h"
#include "cpu/graph_executor.h"
#include "util/progress.h"

namespace rknn::convert {
namespace {

constexpr int kBins = 2048;

bool is_float_tensor(const cpu::HostTensor& t) { return graph::is_float(t.dtype()); }

void update_minmax(const cpu::HostTensor& t, TensorRange* r) {
    const cpu::HostTensor f = t.dtype() == graph::DType::kFloat32 ? t : cpu::to_float32(t);
    for (int64_t i = 0; i < f.numel(); ++i) {
        const float v = f.data<float>()[i];
        if (!std::isfinite(v)) continue;
        if (!r->valid) {
            r->min = r->max = v;
            r->valid = true;
        } else {
            r->min = std::min(r->min, v);
            r->max = std::max(r->max, v);
        }
    }
}

void add_to_histogram(const cpu::HostTensor& t, const TensorRange& r, std::vector<double>* hist) {
    const cpu::HostTensor f = t.dtype() == graph::DType::kFloat32 ? t : cpu::to_float32(t);
    const double width = (static_cast<double>(r.max) - r.min) / kBins;
    if (width <= 0.0) return;
    for (int64_t i = 0; i < f.numel(); ++i) {
        const float v = f.data<float>()[i];
        if (!std::isfinite(v)) continue;
        const int bin = std::clamp(static_cast<int>((v - r.min) / width), 0, kBins - 1);
        (*hist)[bin] += 1.0;
    }
}

// Runs every sample through the float graph and hands each computed tensor to `visit`.
template <typename Visit>
Status for_each_tensor(const graph::Graph& g, const std::vector<std::vector<cpu::HostTensor>>& samples,
                       Progress* progress, size_t* done, Visit visit) {
    cpu::GraphExecutor::Options options;
    options.use_int8_kernels = false;
    options.skip_unsupported = true;
    RKNN_ASSIGN_OR_RETURN(auto exec, cpu::GraphExecutor::create(g, options));
    for (const auto& inputs : samples) {
        for (size_t i = 0; i < inputs.size(); ++i) {
            if (is_float_tensor(inputs[i])) visit(g.inputs[i], inputs[i]);
        }
        std::vector<cpu::HostTensor> outputs;
        RKNN_RETURN_IF_ERROR(exec->run(inputs, &outputs, [&](int32_t op, const std::vector<const cpu::HostTensor*>& outs) {
            for (size_t k = 0; k < outs.size(); ++k) {
                if (outs[k] != nullptr && is_float_tensor(*outs[k])) visit(g.ops[op].outputs[k], *outs[k]);
            }
            return Status::ok();
        }));
        progress->update(++*done);
    }
    return Status::ok();
}

// The channel axis whose means bias correction needs, for tensors read as
// the data input of a Conv (axis 1) or a Gemm / MatMul with constant weights
// (the last axis); -1 for other tensors.
std::vector<int> mean_axes(const graph::Graph& g) {
    std::vector<int> axis(g.tensors.size(), -1);
    for (const graph::Op& op : g.ops) {
        if (op.inputs.size() < 2 || op.inputs[0] < 0 || op.inputs[1] < 0 || !g.is_constant(op.inputs[1])) continue;
        const size_t rank = g.tensors[op.inputs[0]].shape.size();
        int wanted = -1;
        if (op.type == graph::OpType::kConv && rank >= 3) wanted = 1;
        const bool product = op.type == graph::OpType::kMatMul ||
                             (op.type == graph::OpType::kGemm && op.attrs.get_int("transA", 0) == 0);
        if (product && rank >= 1) wanted = static_cast<int>(rank) - 1;
        if (wanted < 0) continue;
        int& a = axis[op.inputs[0]];
        a = a == -1 || a == wanted ? wanted : -2;  // read along two axes: no means (no correction)
    }
    for (int& a : axis) a = a < 0 ? -1 : a;
    return axis;
}

// Adds each channel's sum along `axis` to `sums` (sized on first use).
void add_channel_sums(const cpu::HostTensor& t, int axis, std::vector<double>* sums, int64_t* count) {
    const cpu::HostTensor f = t.dtype() == graph::DType::kFloat32 ? t : cpu::to_float32(t);
    const graph::Shape& s = f.shape();
    const int64_t channels = s[static_cast<size_t>(axis)];
    if (channels <= 0) return;
    int64_t inner = 1;
    for (size_t d = static_cast<size_t>(axis) + 1; d < s.size(); ++d) inner *= s[d];
    if (sums->empty()) sums->assign(static_cast<size_t>(channels), 0.0);
    if (static_cast<int64_t>(sums->size()) != channels) return;
    const float* v = f.data<float>();
    for (int64_t i = 0; i < f.numel(); ++i) (*sums)[static_cast<size_t>((i / inner) % channels)] += v[i];
    *count += f.numel() / channels;
}

// Expected squared quantisation error of the histogram for 256 levels over [lo, hi].
double quantization_error(const std::vector<double>& counts, double hist_lo, double width, double lo, double hi) {
    const double scale = (hi - lo) / 255.0;
    double error = 0.0;
    for (size_t b = 0; b < counts.size(); ++b) {
        if (counts[b] == 0.0) continue;
        const double v = hist_lo + (static_cast<double>(b) + 0.5) * width;
        const double q = std::clamp(std::nearbyint((v - lo) / scale), 0.0, 255.0) * scale + lo;
        error += counts[b] * (v - q) * (v - q);
    }
    return error;
}

double kl_divergence(const std::vector<double>& p, const std::vector<double>& q) {
    double sum_p = 0.0, sum_q = 0.0;
    for (size_t i = 0; i < p.size(); ++i) {
        sum_p += p[i];
        sum_q += q[i];
    }
    if (sum_p == 0.0 || sum_q == 0.0) return INFINITY;
    double kl = 0.0;
    for (size_t i = 0; i < p.size(); ++i) {
        if (p[i] == 0.0) continue;
        if (q[i] == 0.0) return INFINITY;
        kl += (p[i] / sum_p) * std::log((p[i] / sum_p) / (q[i] / sum_q));
    }
    return kl;
}

// Best number of leading bins of a one-sided histogram to keep with `levels` levels.
int kl_threshold_bins(const std::vector<double>& hist, int levels) {
    const int n = static_cast<int>(hist.size());
    int best = n;
    double best_kl = INFINITY;
    // Every threshold from `levels` bins up (TensorRT's search).
    for (int i = levels; i <= n; ++i) {
        std::vector<double> p(hist.begin(), hist.begin() + i);
        for (int j = i; j < n; ++j) p[i - 1] += hist[j];  // clipped mass lands in the last kept bin
        // Merge the i bins into `levels` levels, then spread each back evenly over its non-empty bins.
        std::vector<double> q(static_cast<size_t>(i), 0.0);
        for (int level = 0; level < levels; ++level) {
            const int start = level * i / levels;
            const int end = (level + 1) * i / levels;
            double mass = 0.0;
            int nonzero = 0;
            for (int j = start; j < end; ++j) {
                mass += hist[j];
                nonzero += hist[j] != 0.0;
            }
            for (int j = start; j < end; ++j) q[j] = hist[j] != 0.0 ? mass / nonzero : 0.0;
        }
        const double kl = kl_divergence(p, q);
        if (kl < best_kl) {
            best_kl = kl;
            best = i;
        }
    }
    return best;
}

}  // namespace

StatusOr<CalibMethod> parse_calib_method(const std::string& name) {
    if (name == "normal" || name.empty()) return CalibMethod::kMinMax;
    if (name == "kl_divergence") return CalibMethod::kKlDivergence;
    if (name == "mmse") return CalibMethod::kMmse;
    if (name == "percentile") return CalibMethod::kPercentile;
    return Status(StatusCode::kInvalidArgument,
                  "--calib must be normal, percentile, kl_divergence or mmse, not \"" + name + "\"");
}

TensorRange kl_range(const std::vector<double>& counts, float lo, float hi) {
    TensorRange r{true, lo, hi};
    const int n = static_cast<int>(counts.size());
    const double width = (static_cast<double>(hi) - lo) / n;
    if (width <= 0.0) return r;
    if (lo >= 0.0f) {
        r.max = lo + static_cast<float>(kl_threshold_bins(counts, 256) * width);
        return r;
    }
    // Signed data: fold onto |x| and search one threshold for both sides.
    const double extent = std::max(std::fabs(lo), std::fabs(hi));
    const double abs_width = extent / n;
    std::vector<double> folded(static_cast<size_t>(n), 0.0);
    for (int b = 0; b < n; ++b) {
        const double center = lo + (b + 0.5) * width;
        folded[std::min(n - 1, static_cast<int>(std::fabs(center) / abs_width))] += counts[b];
    }
    const double threshold = kl_threshold_bins(folded, 128) * abs_width;
    r.min = static_cast<float>(std::max<double>(lo, -threshold));
    r.max = static_cast<float>(std::min<double>(hi, threshold));
    return r;
}

TensorRange mmse_range(const std::vector<double>& counts, float lo, float hi) {
    TensorRange best{true, lo, hi};
    const double width = (static_cast<double>(hi) - lo) / static_cast<double>(counts.size());
    if (width <= 0.0) return best;
    double best_error = INFINITY;
    // Shrink both ends toward zero by the same ratio.
    for (int step = 0; step < 100; ++step) {
        const double ratio = 1.0 - step * 0.008;
        const double l = std::min(0.0, lo * ratio);
        const double h = std::max(0.0, hi * ratio);
        if (h - l <= 0.0) break;
        const double error = quantization_error(counts, lo, width, l, h);
        if (error < best_error) {
            best_error = error;
            best.min = static_cast<float>(l);
            best.max = static_cast<float>(h);
        }
    }
    return best;
}

TensorRange percentile_range(const std::vector<double>& counts, float lo, float hi, double percentile) {
    TensorRange r{true, lo, hi};
    const size_t n = counts.size();
    const double width = (static_cast<double>(hi) - lo) / static_cast<double>(n);
    double total = 0.0;
    for (double c : counts) total += c;
    if (width <= 0.0 || total <= 0.0 || n == 0) return r;
    // One-sided data loses its share at the top; signed data half at each end.
    const double cut = total * std::clamp(100.0 - percentile, 0.0, 100.0) / 100.0;
    const double top_cut = lo >= 0.0f ? cut : cut / 2.0;
    double mass = 0.0;
    size_t top = n;
    while (top > 1 && mass + counts[top - 1] <= top_cut) mass += counts[--top];
    r.max = std::max(0.0f, static_cast<float>(lo + width * static_cast<double>(top)));
    if (lo < 0.0f) {
        mass = 0.0;
        size_t bottom = 0;
        while (bottom + 1 < top && mass + counts[bottom] <= cut / 2.0) mass += counts[bottom++];
        r.min = std::min(0.0f, static_cast<float>(lo + width * static_cast<double>(bottom)));
    }
    return r;
}

StatusOr<Calibration> calibrate(const graph::Graph& g, const std::vector<std::vector<cpu::HostTensor>>& samples,
                                const CalibrationOptions& options) {
    if (samples.empty()) return Status(StatusCode::kInvalidArgument, "int8 calibration needs at least one sample");
    const bool histogram = options.method != CalibMethod::kMinMax;
    Progress progress("calibration", samples.size() * (histogram ? 2 : 1), "passes over samples", options.progress);
    size_t done = 0;
    Calibration result;
    std::vector<TensorRange>& ranges = result.ranges;
    ranges.assign(g.tensors.size(), TensorRange{});
    const std::vector<int> axes = mean_axes(g);
    std::vector<std::vector<double>> sums(g.tensors.size());
    std::vector<int64_t> counts(g.tensors.size(), 0);
    RKNN_RETURN_IF_ERROR(for_each_tensor(g, samples, &progress, &done, [&](int32_t t, const cpu::HostTensor& v) {
        update_minmax(v, &ranges[t]);
        if (axes[t] >= 0 && static_cast<size_t>(axes[t]) < v.shape().size()) add_channel_sums(v, axes[t], &sums[t], &counts[t]);
    }));
    for (size_t t = 0; t < g.tensors.size(); ++t) {
        if (counts[t] == 0) continue;
        std::vector<double> means = sums[t];
        for (double& m : means) m /= static_cast<double>(counts[t]);
        result.channel_means[g.tensors[t].name] = std::move(means);
    }
    if (!histogram) return result;
    std::vector<std::vector<double>> hist(g.tensors.size());
    for (size_t t = 0; t < ranges.size(); ++t) {
        if (ranges[t].valid) hist[t].assign(kBins, 0.0);
    }
    RKNN_RETURN_IF_ERROR(for_each_tensor(g, samples, &progress, &done, [&](int32_t t, const cpu::HostTensor& v) {
        if (ranges[t].valid) add_to_histogram(v, ranges[t], &hist[t]);
    }));
    for (size_t t = 0; t < ranges.size(); ++t) {
        if (!ranges[t].valid) continue;
        switch (options.method) {
        case CalibMethod::kKlDivergence: ranges[t] = kl_range(hist[t], ranges[t].min, ranges[t].max); break;
        case CalibMethod::kMmse: ranges[t] = mmse_range(hist[t], ranges[t].min, ranges[t].max); break;
        case CalibMethod::kPercentile:
            ranges[t] = percentile_range(hist[t], ranges[t].min, ranges[t].max, options.percentile);
            break;
        case CalibMethod::kMinMax: break;
        }
    }
    return result;
}

}  // namespace rknn::convert
