// How the SIMD versions of the fused DPU pass pick their template instance
// for a plan: which BS steps run, and the shape of the chain after them. Each
// ISA file passes its own file-local row functions in a lambda, so no code
// compiled for one ISA is shared with another.
#pragma once

#include <type_traits>

#include "emulator/kernels/dpu_requant.h"

namespace rknn::emulator::detail {

// The shapes of the per-lane chain: the folded one (plan.folded), the same
// with OUT_CVT scale 1 (plan.unit_out_scale), the staged one with a clamping
// (or bypassed) EW stage, and the tensor add.
enum class Chain { kFolded, kFoldedUnit, kStaged, kAdd };

// fn(alu, mul): std::bool_constant values for the plan's BS ALU and multiplier.
template <typename Fn>
void with_bs_steps(const DpuRequantPlan& p, Fn&& fn) {
    if (p.bs_alu) {
        if (p.bs_mul) return fn(std::true_type{}, std::true_type{});
        return fn(std::true_type{}, std::false_type{});
    }
    if (p.bs_mul) return fn(std::false_type{}, std::true_type{});
    fn(std::false_type{}, std::false_type{});
}

// fn(alu, mul, chain), chain a std::integral_constant<Chain, ...>.
template <typename Fn>
void with_chain(const DpuRequantPlan& p, Fn&& fn) {
    with_bs_steps(p, [&](auto alu, auto mul) {
        if (p.ew == DpuRequantPlan::Ew::kAddInt8) return fn(alu, mul, std::integral_constant<Chain, Chain::kAdd>{});
        if (p.folded && p.unit_out_scale) return fn(alu, mul, std::integral_constant<Chain, Chain::kFoldedUnit>{});
        if (p.folded) return fn(alu, mul, std::integral_constant<Chain, Chain::kFolded>{});
        fn(alu, mul, std::integral_constant<Chain, Chain::kStaged>{});
    });
}

}  // namespace rknn::emulator::detail
