// The timed loop both XNNPACK baselines share: an operator that `status`
// says was created and set up runs once per iteration, then is deleted; a
// failed setup skips the benchmark with `what` as the reason.
#pragma once

#include <benchmark/benchmark.h>
#include <xnnpack.h>

#include <string>

inline void run_xnnpack_operator(benchmark::State& state, xnn_operator_t op, xnn_status status, const char* what,
                                 const void* output) {
    if (status != xnn_status_success) {
        state.SkipWithError((std::string("XNNPACK could not set up ") + what).c_str());
        if (op != nullptr) xnn_delete_operator(op);
        return;
    }
    for (auto _ : state) {
        if (xnn_run_operator(op, nullptr) != xnn_status_success) {
            state.SkipWithError("xnn_run_operator failed");
            break;
        }
        benchmark::DoNotOptimize(output);
    }
    xnn_delete_operator(op);
}
