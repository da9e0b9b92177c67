#include "quant/calibrate.h"

#include <algorithm>
#include <cmath>

#include "cpu/convert.h"
#include "cpu/graph_executor.h"

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
Status for_each_tensor(const graph::Graph& g, const std::vector<std::vector<cpu::HostTensor>>& samples, Visit visit) {
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
    }
    return Status::ok();
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
    // Candidate thresholds every 16 bins keep the search linear in practice.
    for (int i = levels; i <= n; i += 16) {
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
    return Status(StatusCode::kInvalidArgument, "--calib must be normal, kl_divergence or mmse, not \"" + name + "\"");
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

StatusOr<std::vector<TensorRange>> calibrate(const graph::Graph& g,
                                             const std::vector<std::vector<cpu::HostTensor>>& samples,
                                             CalibMethod method) {
    if (samples.empty()) return Status(StatusCode::kInvalidArgument, "int8 calibration needs at least one sample");
    std::vector<TensorRange> ranges(g.tensors.size());
    RKNN_RETURN_IF_ERROR(for_each_tensor(g, samples, [&](int32_t t, const cpu::HostTensor& v) { update_minmax(v, &ranges[t]); }));
    if (method == CalibMethod::kMinMax) return ranges;
    std::vector<std::vector<double>> hist(g.tensors.size());
    for (size_t t = 0; t < ranges.size(); ++t) {
        if (ranges[t].valid) hist[t].assign(kBins, 0.0);
    }
    RKNN_RETURN_IF_ERROR(for_each_tensor(g, samples, [&](int32_t t, const cpu::HostTensor& v) {
        if (ranges[t].valid) add_to_histogram(v, ranges[t], &hist[t]);
    }));
    for (size_t t = 0; t < ranges.size(); ++t) {
        if (!ranges[t].valid) continue;
        ranges[t] = method == CalibMethod::kKlDivergence ? kl_range(hist[t], ranges[t].min, ranges[t].max)
                                                         : mmse_range(hist[t], ranges[t].min, ranges[t].max);
    }
    return ranges;
}

}  // namespace rknn::convert
