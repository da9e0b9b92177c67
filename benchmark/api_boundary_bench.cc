// How much an exported call costs before any work is done: rknn_wait on a live
// handle that is not a runtime context is pure boundary (handle lookup under a
// mutex, the kind check, the exception guard and the error mapping, with
// logging off). The baseline is an indirect call of an empty function,
// measured in the same run; compare the two as a ratio.
#include <benchmark/benchmark.h>

#include "api/handle_table.h"
#include "base/log.h"
#include "rknn_api.h"

namespace {

class BenchContext : public rknn::api::HandleObject {
public:
    rknn::api::HandleKind kind() const override { return rknn::api::HandleKind::kContext; }
};

int empty_call(rknn_context, rknn_run_extend*) { return 0; }

void BM_IndirectCallBaseline(benchmark::State& state) {
    int (*volatile function)(rknn_context, rknn_run_extend*) = empty_call;
    for (auto _ : state) benchmark::DoNotOptimize(function(1, nullptr));
}
BENCHMARK(BM_IndirectCallBaseline);

void BM_RknnWaitLiveContext(benchmark::State& state) {
    rknn::log::set_level(0);  // the fake context is refused after the lookup; measure that, not stderr
    const rknn_context ctx = rknn::api::HandleTable::global().insert(std::make_shared<BenchContext>());
    for (auto _ : state) benchmark::DoNotOptimize(rknn_wait(ctx, nullptr));
    rknn_destroy(ctx);
}
BENCHMARK(BM_RknnWaitLiveContext);

void BM_RknnWaitInvalidContext(benchmark::State& state) {
    rknn::log::set_level(0);  // the error path logs; measure the check, not stderr
    for (auto _ : state) benchmark::DoNotOptimize(rknn_wait(12345, nullptr));
}
BENCHMARK(BM_RknnWaitInvalidContext);

}  // namespace

BENCHMARK_MAIN();
