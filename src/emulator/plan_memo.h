// The fused DPU pass's plans, kept across tasks and runs. Folding a plan
// (fold_code_bounds) costs about 20 ns a channel, and a model's tasks bring
// the same plans back on every run: a plan whose every input field equals
// one seen before on this host thread is that one, already folded.
#pragma once

#include <memory>

#include "emulator/kernels/dpu_requant.h"

namespace rknn::emulator {

// `candidate` with its input fields set (not folded): the folded plan.
std::shared_ptr<const DpuRequantPlan> memoised_plan(const DpuRequantPlan& candidate);

// The same for a plan whose values change from run to run (multipliers read
// from a tensor, as a squeeze-and-excitation gate's): folded into this host
// thread's scratch plan when no task holds that any more, and not memoised,
// which would fill the memo with plans never met again (and clear it of the
// ones that come back).
std::shared_ptr<const DpuRequantPlan> folded_once(const DpuRequantPlan& candidate);

}  // namespace rknn::emulator
