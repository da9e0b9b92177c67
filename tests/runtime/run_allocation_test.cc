// rknn_run allocates no host memory once a context is built (issue 6, item 1:
// "nothing allocated on the rknn_run path"): global operator new is counted
// on the calling thread around the calls. What the mock kernel allocates
// while it serves an ioctl, and the emulated NPU on its own threads, is the
// device side's and is not counted.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

#include "driver/mock/mock_kernel.h"
#include "graph/shape_check.h"
#include "rknn_api.h"
#include "runtime/contract_models.h"

// AddressSanitizer keeps its own operator new, and memory it hands out must
// not reach our delete: under it the replacement is left out and the tests skip.
#if defined(__SANITIZE_ADDRESS__)
#define RKNN_COUNT_ALLOCATIONS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RKNN_COUNT_ALLOCATIONS 0
#endif
#endif
#ifndef RKNN_COUNT_ALLOCATIONS
#define RKNN_COUNT_ALLOCATIONS 1
#endif

namespace {

thread_local bool t_counting = false;
thread_local size_t t_allocations = 0;

#if RKNN_COUNT_ALLOCATIONS
void* counted_allocation(std::size_t size, std::size_t alignment) {
    if (t_counting && !rknn::driver::mock::serving_kernel_call()) ++t_allocations;
    const std::size_t bytes = size == 0 ? 1 : size;
    void* p = alignment > alignof(std::max_align_t)
                  ? std::aligned_alloc(alignment, (bytes + alignment - 1) / alignment * alignment)
                  : std::malloc(bytes);
    if (p == nullptr) throw std::bad_alloc();
    return p;
}
#endif

// Allocations made on this thread while the object lives.
class AllocationCounter {
public:
    AllocationCounter() {
        t_allocations = 0;
        t_counting = true;
    }
    ~AllocationCounter() { t_counting = false; }
    size_t count() const { return t_allocations; }
};

}  // namespace

#if RKNN_COUNT_ALLOCATIONS
void* operator new(std::size_t size) { return counted_allocation(size, 0); }
void* operator new[](std::size_t size) { return counted_allocation(size, 0); }
void* operator new(std::size_t size, std::align_val_t a) { return counted_allocation(size, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t size, std::align_val_t a) { return counted_allocation(size, static_cast<std::size_t>(a)); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
#endif

namespace {

#define SKIP_WITHOUT_COUNTING() \
    if (!RKNN_COUNT_ALLOCATIONS) GTEST_SKIP() << "allocations are not counted under AddressSanitizer"

// rknn_run `runs` times after a warm-up run; the allocations they made.
size_t allocations_in_runs(rknn_context ctx, int runs) {
    std::vector<int> codes(static_cast<size_t>(runs), -1);
    size_t count = 0;
    {
        AllocationCounter counter;
        for (int& code : codes) code = rknn_run(ctx, nullptr);
        count = counter.count();
    }
    for (int code : codes) EXPECT_EQ(code, RKNN_SUCC);
    return count;
}

// Conv -> Relu -> MaxPool: every op an NPU task (one segment, one submit).
TEST(RunAllocations, AnNpuModelRunsWithoutAllocating) {
    SKIP_WITHOUT_COUNTING();
    rknn::graph::Graph g = rknn::testing::quantized_cnn();
    const rknn::graph::Op& pool = g.ops[2];
    ASSERT_EQ(pool.type, rknn::graph::OpType::kMaxPool);
    g.outputs = {pool.outputs[0]};
    g.ops.resize(3);
    rknn_context ctx = 0;
    ASSERT_EQ(rknn::testing::init_graph(g, RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY, &ctx), RKNN_SUCC);
    std::vector<uint8_t> p = rknn::testing::pixels(3);
    rknn_input input = rknn::testing::input_of(p.data(), 192, RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC);
    ASSERT_EQ(rknn_inputs_set(ctx, 1, &input), RKNN_SUCC);
    ASSERT_EQ(rknn_run(ctx, nullptr), RKNN_SUCC);  // warm-up
    EXPECT_EQ(allocations_in_runs(ctx, 5), 0u);
    {
        AllocationCounter counter;  // the counter sees allocations (a direct call is never elided)
        ::operator delete(::operator new(16));
        EXPECT_EQ(counter.count(), 1u);
    }
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
}


// The whole model: Reshape runs on the CPU between two NPU segments, read
// back from its device cube and written into the next one.
TEST(RunAllocations, CpuStepsBetweenNpuSegmentsDoNotAllocate) {
    SKIP_WITHOUT_COUNTING();
    rknn_context ctx = 0;
    ASSERT_EQ(rknn::testing::init_graph(rknn::testing::quantized_cnn(), RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY, &ctx),
              RKNN_SUCC);
    std::vector<uint8_t> p = rknn::testing::pixels(4);
    rknn_input input = rknn::testing::input_of(p.data(), 192, RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC);
    ASSERT_EQ(rknn_inputs_set(ctx, 1, &input), RKNN_SUCC);
    ASSERT_EQ(rknn_run(ctx, nullptr), RKNN_SUCC);
    rknn_output first{};
    ASSERT_EQ(rknn_outputs_get(ctx, 1, &first, nullptr), RKNN_SUCC);
    const std::vector<int8_t> expected(static_cast<const int8_t*>(first.buf), static_cast<const int8_t*>(first.buf) + first.size);
    ASSERT_EQ(rknn_outputs_release(ctx, 1, &first), RKNN_SUCC);
    EXPECT_EQ(allocations_in_runs(ctx, 5), 0u);
    // And the runs still compute the same thing.
    rknn_output again{};
    ASSERT_EQ(rknn_outputs_get(ctx, 1, &again, nullptr), RKNN_SUCC);
    EXPECT_EQ(std::vector<int8_t>(static_cast<const int8_t*>(again.buf), static_cast<const int8_t*>(again.buf) + again.size),
              expected);
    ASSERT_EQ(rknn_outputs_release(ctx, 1, &again), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
}

}  // namespace

// A dynamic-shape model: switching between shape sets and running each
// allocates nothing (every set's plan and host values are made at init).
TEST(RunAllocations, SwitchingShapeSetsAndRunningDoNotAllocate) {
    SKIP_WITHOUT_COUNTING();
    rknn::graph::Graph g = rknn::testing::conv_pool_model();
    ASSERT_TRUE(rknn::graph::infer_graph_shapes(&g, {{1, 3, 16, 16}}).is_ok());
    g.shape_sets = {{{1, 3, 8, 8}}, {{1, 3, 16, 16}}};
    rknn_context ctx = 0;
    ASSERT_EQ(rknn::testing::init_graph(g, RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY, &ctx), RKNN_SUCC);
    rknn_tensor_attr attrs[2] = {};
    for (int k = 0; k < 2; ++k) {
        ASSERT_EQ(rknn_query(ctx, RKNN_QUERY_INPUT_ATTR, &attrs[k], sizeof(attrs[k])), RKNN_SUCC);
        attrs[k].dims[1] = attrs[k].dims[2] = k == 0 ? 8 : 16;  // NHWC
        ASSERT_EQ(rknn_set_input_shapes(ctx, 1, &attrs[k]), RKNN_SUCC);
        ASSERT_EQ(rknn_run(ctx, nullptr), RKNN_SUCC);  // warm-up of each set
    }
    std::vector<int> codes;
    codes.reserve(12);
    size_t in_switches = 0, in_runs = 0;
    for (int round = 0; round < 3; ++round)
        for (rknn_tensor_attr& attr : attrs) {
            {
                AllocationCounter counter;
                codes.push_back(rknn_set_input_shapes(ctx, 1, &attr));
                in_switches += counter.count();
            }
            AllocationCounter counter;
            codes.push_back(rknn_run(ctx, nullptr));
            in_runs += counter.count();
        }
    for (int code : codes) EXPECT_EQ(code, RKNN_SUCC);
    EXPECT_EQ(in_switches, 0u);
    EXPECT_EQ(in_runs, 0u);
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
}
