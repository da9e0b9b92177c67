// libFuzzer target: arbitrary bytes as a model file. Loading must never crash;
// whatever loads must describe itself and, when small, go through what
// rknn_init does before it touches a device (placement with code generation,
// the memory plan, the schedule, lowering every NPU segment) and run on the
// CPU reference without crashing either.
#include <cstddef>
#include <cstdint>
#include <new>

#include "cpu/graph_executor.h"
#include "graph/topology.h"
#include "hw/soc_profile.h"
#include "model/model_file.h"
#include "model/summary.h"
#include "npu/placement.h"
#include "runtime/memory_plan.h"
#include "runtime/npu_segments.h"
#include "runtime/schedule.h"

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

// The device-free part of rknn_init: every status is fine, a crash is not.
void plan_for_the_npu(const rknn::graph::Graph& g) {
    for (const rknn::graph::Tensor& t : g.tensors)
        for (int64_t d : t.shape)
            if (d < 0) return;  // dynamic shapes: refused by rknn_init
    auto order = rknn::graph::topological_order(g);
    if (!order.is_ok()) return;
    // The SoC the model names (its own layouts and lowering), else RK3588.
    const rknn::hw::SocProfile* named = rknn::hw::find_soc(g.target_soc);
    const rknn::hw::SocProfile& soc = named != nullptr ? *named : rknn::hw::default_soc();
    std::vector<rknn::npu::Placement> placements = rknn::npu::place_graph(g, soc);
    auto memory = rknn::runtime::plan_memory(g, order.value(), &placements, rknn::runtime::native_form(soc));
    if (!memory.is_ok()) return;
    const rknn::runtime::Schedule schedule =
        rknn::runtime::build_schedule(g, order.value(), placements, memory.value(), false);
    (void)rknn::runtime::lower_segments(g, schedule, placements, memory.value(), soc, 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto loaded = rknn::model::load_model_from_memory(data, size, rknn::model::BufferOwnership::kCopy);
    if (!loaded.is_ok()) return 0;
    const rknn::graph::Graph& g = loaded.value();
    (void)rknn::model::summarize(g);
    if (!small_enough_to_run(g)) return 0;
    plan_for_the_npu(g);
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
