// libFuzzer target: arbitrary bytes as a model file. Loading must never crash;
// whatever loads must describe itself and, when small, run on the CPU
// reference without crashing either.
#include <cstddef>
#include <cstdint>
#include <new>

#include "cpu/graph_executor.h"
#include "model/model_file.h"
#include "model/summary.h"

namespace {

constexpr int64_t kMaxElementsToRun = 1 << 16;

bool small_enough_to_run(const rknn::graph::Graph& g) {
    if (g.ops.size() > 64) return false;
    for (const rknn::graph::Tensor& t : g.tensors) {
        int64_t n = 0;
        if (!rknn::graph::checked_num_elements(t.shape, &n) || n > kMaxElementsToRun) return false;
    }
    return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto loaded = rknn::model::load_model_from_memory(data, size, rknn::model::BufferOwnership::kCopy);
    if (!loaded.is_ok()) return 0;
    const rknn::graph::Graph& g = loaded.value();
    (void)rknn::model::summarize(g);
    if (!small_enough_to_run(g)) return 0;
    auto exec = rknn::cpu::GraphExecutor::create(g);
    if (!exec.is_ok()) return 0;
    std::vector<rknn::cpu::HostTensor> inputs;
    for (int32_t in : g.inputs) {
        rknn::graph::Shape shape = g.tensors[in].shape;
        for (int64_t& d : shape) d = d < 0 ? 1 : d;
        rknn::cpu::HostTensor t(g.tensors[in].dtype, shape);
        t.quant = g.tensors[in].quant;
        inputs.push_back(t);
    }
    std::vector<rknn::cpu::HostTensor> outputs;
    (void)exec.value()->run(inputs, &outputs);
    return 0;
}
