#include "emulator/plan_memo.h"

#include <cstdint>
#include <cstring>
#include <unordered_map>
#include <utility>

namespace rknn::emulator {

namespace {

// Beyond this the memo starts again (a model's plans take well under 1 MiB).
constexpr size_t kMemoBytes = size_t{16} << 20;

// Every field of DpuRequantPlan that fold_code_bounds and the kernels read
// as given, and set_float_windows, which the fold also follows.
bool same_inputs(const DpuRequantPlan& a, const DpuRequantPlan& b, bool windows_then) {
    return windows_then == float_windows_enabled() && a.channels == b.channels && a.int8_source == b.int8_source &&
           a.real_channels == b.real_channels && a.acc_stride == b.acc_stride && a.bs_alu == b.bs_alu &&
           a.bs_mul == b.bs_mul && a.bs_lo == b.bs_lo && a.bs_hi == b.bs_hi && a.ew == b.ew && a.ew_cvt == b.ew_cvt &&
           a.ew_offset == b.ew_offset && a.ew_scale == b.ew_scale && a.ew_lo == b.ew_lo && a.ew_hi == b.ew_hi &&
           a.ew_atom_bytes == b.ew_atom_bytes && a.ew_surf_stride == b.ew_surf_stride && a.out_scale == b.out_scale &&
           a.out_offset == b.out_offset && a.out_atom_bytes == b.out_atom_bytes &&
           a.out_surf_stride == b.out_surf_stride && a.bias == b.bias && a.scale == b.scale;
}

// A hash of the per-channel values and the sizes (equal plans hash equal;
// same_inputs decides).
uint64_t key_of(const DpuRequantPlan& p) {
    uint64_t h = static_cast<uint64_t>(p.channels) * 0x9e3779b97f4a7c15ull ^ static_cast<uint64_t>(p.out_surf_stride);
    for (const std::vector<double>* v : {&p.bias, &p.scale}) {
        for (double x : *v) {
            uint64_t w;
            std::memcpy(&w, &x, sizeof(w));
            h = (h ^ w) * 0x9e3779b97f4a7c15ull;
            h ^= h >> 29;
        }
    }
    return h;
}

size_t bytes_of(const DpuRequantPlan& p) {
    return (p.bias.size() + p.scale.size() + p.code_lo.size() + p.code_hi.size() + p.y_lo.size() + p.y_hi.size()) *
               sizeof(double) +
           (p.fscale.size() + p.fbase.size()) * sizeof(float) + sizeof(p);
}

struct Entry {
    bool windows = false;
    std::shared_ptr<const DpuRequantPlan> plan;
};

struct Memo {
    std::unordered_multimap<uint64_t, Entry> entries;
    size_t bytes = 0;
};

}  // namespace

std::shared_ptr<const DpuRequantPlan> memoised_plan(const DpuRequantPlan& candidate) {
    thread_local Memo memo;
    const uint64_t key = key_of(candidate);
    const auto [first, last] = memo.entries.equal_range(key);
    for (auto it = first; it != last; ++it) {
        if (same_inputs(*it->second.plan, candidate, it->second.windows)) return it->second.plan;
    }
    const bool windows = float_windows_enabled();
    auto plan = std::make_shared<DpuRequantPlan>(candidate);
    fold_code_bounds(plan.get());
    const size_t bytes = bytes_of(*plan);
    if (memo.bytes + bytes > kMemoBytes) {
        memo.entries.clear();  // plans handed out stay alive through their shared_ptr
        memo.bytes = 0;
    }
    memo.entries.emplace(key, Entry{windows, plan});
    memo.bytes += bytes;
    return plan;
}

std::shared_ptr<const DpuRequantPlan> folded_once(const DpuRequantPlan& candidate) {
    thread_local std::shared_ptr<DpuRequantPlan> scratch;
    if (scratch == nullptr || scratch.use_count() > 1) {
        scratch = std::make_shared<DpuRequantPlan>(candidate);
    } else {
        *scratch = candidate;  // the vectors keep their storage
    }
    fold_code_bounds(scratch.get());
    return scratch;
}

}  // namespace rknn::emulator
