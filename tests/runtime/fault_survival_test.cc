// Fault survival through the public API on small models (the full-size run is
// the fault_matrix program on mobilenet_v2): every injected mock-kernel fault
// at every submit of a run fails that run with the fault's code, and the next
// run on the same context gives the clean run's bytes. The same for an
// allocation failure at each allocation of rknn_init and at rknn_create_mem
// (rknn_set_io_mem allocates nothing on the device), an in-fence that never
// signals, a custom op whose callback fails, and matmul runs. A hundred and
// fifty such cycles leave no fd, mock buffer or mock file behind.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/log.h"
#include "rknn_api.h"
#include "rknn_custom_op.h"
#include "rknn_matmul_api.h"
#include "runtime/contract_models.h"
#include "runtime/fault_cycles.h"

namespace {

namespace graph = rknn::graph;
using rknn::driver::mock::MockKernel;
using rknn::testing::RunOnce;

constexpr int kLeakCycles = 150;

// Runs pixels(3) through the general API; raw output 0.
RunOnce general_run(rknn_context ctx) {
    return rknn::testing::pixels_run(ctx, rknn::testing::pixels(3));
}

// What every fault test starts from: the mock behind the contexts, a run,
// its clean bytes and how many submits it makes.
struct Prepared {
    std::shared_ptr<MockKernel> kernel;
    RunOnce run;
    std::vector<uint8_t> baseline;
    int submits = 0;
};

class FaultSurvival : public ::testing::Test {
protected:
    void SetUp() override {
        // A hung submit costs this much: far above a clean run of these small
        // models under a sanitizer on a loaded machine; the default (20 s)
        // suits a board.
        ::setenv("RKNN_NPU_TIMEOUT_MS", "200", 1);
        rknn::log::set_sink([](const std::string&) {});  // hundreds of expected error lines
    }
    void TearDown() override {
        rknn::log::set_sink(nullptr);
        ::unsetenv("RKNN_NPU_TIMEOUT_MS");
        if (auto kernel = rknn::testing::live_default_mock()) kernel->faults().clear();
    }
    // Every fault at every submit of the run.
    static void expect_matrix_holds(const Prepared& p) {
        const rknn::testing::MatrixReport report =
            rknn::testing::run_fault_matrix(*p.kernel, p.run, p.baseline, p.submits);
        EXPECT_EQ(report.cells, 3 * p.submits);
        for (const std::string& problem : report.problems) ADD_FAILURE() << problem;
    }
    static void prepare(RunOnce run, Prepared* p) {
        p->kernel = rknn::testing::live_default_mock();
        ASSERT_NE(p->kernel, nullptr);
        p->run = std::move(run);
        ASSERT_EQ(p->run(&p->baseline), RKNN_SUCC);
        std::string problem;
        p->submits = rknn::testing::submits_per_run(*p->kernel, p->run, p->baseline, &problem);
        ASSERT_GE(p->submits, 1) << problem;
    }
};

TEST_F(FaultSurvival, EveryFaultAtEverySubmitOfARun) {
    rknn_context ctx = 0;
    ASSERT_EQ(rknn::testing::init_graph(rknn::testing::quantized_cnn(), 0, &ctx), RKNN_SUCC);
    Prepared p;
    ASSERT_NO_FATAL_FAILURE(prepare(general_run(ctx), &p));
    expect_matrix_holds(p);
    // A fault armed beyond the run's last submit is reported, not silently passed.
    const std::string beyond = rknn::testing::fault_cycle(*p.kernel, p.run, p.baseline, p.submits + 1, p.submits * 3);
    EXPECT_NE(beyond.find("fewer submits"), std::string::npos) << beyond;
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
}

TEST_F(FaultSurvival, AllocationFailureAtEachAllocationOfInit) {
    // A second context keeps the mock kernel (and its injector) alive between inits.
    rknn_context holder = 0;
    ASSERT_EQ(rknn::testing::init_graph(rknn::testing::quantized_cnn(), 0, &holder), RKNN_SUCC);
    std::shared_ptr<MockKernel> kernel = rknn::testing::live_default_mock();
    ASSERT_NE(kernel, nullptr);
    std::vector<uint8_t> baseline;
    ASSERT_EQ(general_run(holder)(&baseline), RKNN_SUCC);

    const uint64_t before = kernel->faults().allocations_seen();
    rknn_context ctx = 0;
    ASSERT_EQ(rknn::testing::init_graph(rknn::testing::quantized_cnn(), 0, &ctx), RKNN_SUCC);
    const int allocations = static_cast<int>(kernel->faults().allocations_seen() - before);
    ASSERT_EQ(rknn_destroy(ctx), RKNN_SUCC);
    ASSERT_GE(allocations, 2) << "init allocates at least its weights and its internal memory";

    const rknn::testing::Resources start = rknn::testing::resources_now(kernel.get());
    for (int k = 0; k < allocations; ++k) {
        kernel->faults().fail_allocations(1, k);
        ctx = 0;
        EXPECT_EQ(rknn::testing::init_graph(rknn::testing::quantized_cnn(), 0, &ctx), RKNN_ERR_MALLOC_FAIL)
            << "allocation " << k;
        EXPECT_EQ(ctx, 0u) << "a failed init hands out no context";
        kernel->faults().clear();
    }
    const rknn::testing::Resources end = rknn::testing::resources_now(kernel.get());
    EXPECT_EQ(end.fds, start.fds);
    EXPECT_EQ(end.mock_objects, start.mock_objects) << "a failed init frees what it had allocated";
    EXPECT_EQ(end.mock_files, start.mock_files);

    ASSERT_EQ(rknn::testing::init_graph(rknn::testing::quantized_cnn(), 0, &ctx), RKNN_SUCC);
    std::vector<uint8_t> out;
    EXPECT_EQ(general_run(ctx)(&out), RKNN_SUCC);
    EXPECT_EQ(out, baseline);
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy(holder), RKNN_SUCC);
}

TEST_F(FaultSurvival, AllocationFailureAtCreateMemAndSetIoMem) {
    rknn_context ctx = 0;
    ASSERT_EQ(rknn::testing::init_graph(rknn::testing::quantized_cnn(), 0, &ctx), RKNN_SUCC);
    std::shared_ptr<MockKernel> kernel = rknn::testing::live_default_mock();
    ASSERT_NE(kernel, nullptr);
    rknn_tensor_attr in_attr{}, out_attr{};
    in_attr.index = 0;
    out_attr.index = 0;
    ASSERT_EQ(rknn_query(ctx, RKNN_QUERY_INPUT_ATTR, &in_attr, sizeof(in_attr)), RKNN_SUCC);
    ASSERT_EQ(rknn_query(ctx, RKNN_QUERY_OUTPUT_ATTR, &out_attr, sizeof(out_attr)), RKNN_SUCC);
    in_attr.type = RKNN_TENSOR_UINT8;
    in_attr.fmt = RKNN_TENSOR_NHWC;
    std::vector<uint8_t> p = rknn::testing::pixels(3);
    ASSERT_EQ(p.size(), in_attr.size);

    kernel->faults().fail_allocations(1);
    EXPECT_EQ(rknn_create_mem(ctx, in_attr.size), nullptr) << "an allocation failure gives NULL";
    kernel->faults().clear();
    rknn_tensor_mem* in = rknn_create_mem(ctx, in_attr.size);
    rknn_tensor_mem* out = rknn_create_mem(ctx, out_attr.size);
    ASSERT_NE(in, nullptr);
    ASSERT_NE(out, nullptr);
    std::memcpy(in->virt_addr, p.data(), p.size());

    // Binding client memory allocates nothing on the device (so no device
    // allocation failure can reach set_io_mem: in a client's flow it is
    // create_mem's, above). Should it ever allocate, this says so, and the
    // failures need a test of their own.
    const uint64_t before = kernel->faults().allocations_seen();
    kernel->faults().fail_allocations(1);
    ASSERT_EQ(rknn_set_io_mem(ctx, in, &in_attr), RKNN_SUCC);
    ASSERT_EQ(rknn_set_io_mem(ctx, out, &out_attr), RKNN_SUCC);
    EXPECT_EQ(kernel->faults().allocations_seen() - before, 0u) << "set_io_mem allocated on the device";
    kernel->faults().clear();
    ASSERT_EQ(rknn_set_io_mem(ctx, in, &in_attr), RKNN_SUCC);
    ASSERT_EQ(rknn_set_io_mem(ctx, out, &out_attr), RKNN_SUCC);
    ASSERT_EQ(rknn_run(ctx, nullptr), RKNN_SUCC);
    const std::vector<uint8_t> zero_copy(static_cast<uint8_t*>(out->virt_addr),
                                         static_cast<uint8_t*>(out->virt_addr) + out_attr.size);
    // A fault during a zero-copy run; the next run writes the same bytes.
    kernel->faults().hang_next_submit();
    EXPECT_EQ(rknn_run(ctx, nullptr), RKNN_ERR_TIMEOUT);
    kernel->faults().clear();
    std::memset(out->virt_addr, 0x5a, out_attr.size);
    ASSERT_EQ(rknn_run(ctx, nullptr), RKNN_SUCC);
    EXPECT_EQ(std::memcmp(out->virt_addr, zero_copy.data(), zero_copy.size()), 0);
    EXPECT_EQ(rknn_destroy_mem(ctx, in), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy_mem(ctx, out), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
}

// An in-fence (RKNN_FLAG_FENCE_IN_OUTSIDE) that never signals: the run gives
// up after extend.timeout_ms, and the next run, without it, works.
TEST_F(FaultSurvival, AnInFenceThatNeverSignals) {
    rknn_context ctx = 0;
    ASSERT_EQ(rknn::testing::init_graph(rknn::testing::quantized_cnn(), RKNN_FLAG_FENCE_IN_OUTSIDE, &ctx), RKNN_SUCC);
    const RunOnce run = general_run(ctx);
    std::vector<uint8_t> baseline;
    ASSERT_EQ(run(&baseline), RKNN_SUCC);
    int never[2];
    ASSERT_EQ(::pipe(never), 0);
    std::vector<uint8_t> p = rknn::testing::pixels(3);
    rknn_input in =
        rknn::testing::input_of(p.data(), static_cast<uint32_t>(p.size()), RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC);
    const rknn::testing::Resources start = rknn::testing::resources_now(nullptr);
    for (int round = 0; round < 3; ++round) {
        ASSERT_EQ(rknn_inputs_set(ctx, 1, &in), RKNN_SUCC);
        rknn_run_extend extend{};
        extend.fence_fd = never[0];
        extend.timeout_ms = 30;
        EXPECT_EQ(rknn_run(ctx, &extend), RKNN_ERR_TIMEOUT);
        std::vector<uint8_t> out;
        EXPECT_EQ(run(&out), RKNN_SUCC);
        EXPECT_EQ(out, baseline);
    }
    EXPECT_EQ(rknn::testing::resources_now(nullptr).fds, start.fds) << "the runtime's copies of the fence are closed";
    ::close(never[0]);
    ::close(never[1]);
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
}

// conv_pool_model followed by a float custom op "cstFaulty" (x * 2) and run
// through the general API.
int doubling_result = 0;
int doubling_compute(rknn_custom_op_context*, rknn_custom_op_tensor* inputs, uint32_t, rknn_custom_op_tensor* outputs,
                     uint32_t) {
    const auto* in =
        reinterpret_cast<const float*>(static_cast<uint8_t*>(inputs[0].mem.virt_addr) + inputs[0].mem.offset);
    auto* out = reinterpret_cast<float*>(static_cast<uint8_t*>(outputs[0].mem.virt_addr) + outputs[0].mem.offset);
    for (uint32_t i = 0; i < outputs[0].attr.n_elems; ++i) out[i] = in[i] * 2.0f;
    return doubling_result;
}

TEST_F(FaultSurvival, CustomOpFailuresAndNpuFaultsAroundThem) {
    graph::Graph g = rknn::testing::conv_pool_model();
    const int32_t pooled = g.outputs[0];
    graph::Tensor t = g.tensors[static_cast<size_t>(pooled)];
    t.name = "doubled";
    t.dtype = graph::DType::kFloat32;
    t.quant = graph::QuantParams();
    const int32_t doubled = g.add_tensor(t);
    g.add_op(graph::Op{graph::OpType::kCustom, "double_node", "cstFaulty", {pooled}, {doubled}, {}});
    g.custom_ops.push_back({"cstFaulty", {}});
    g.outputs = {doubled};
    rknn_context ctx = 0;
    ASSERT_EQ(rknn::testing::init_graph(g, 0, &ctx), RKNN_SUCC);
    rknn_custom_op op;
    std::memset(&op, 0, sizeof(op));
    op.version = 1;
    op.target = RKNN_TARGET_TYPE_CPU;
    std::strcpy(op.op_type, "cstFaulty");
    op.compute = doubling_compute;
    ASSERT_EQ(rknn_register_custom_ops(ctx, &op, 1), RKNN_SUCC);
    const RunOnce run = general_run(ctx);
    std::vector<uint8_t> baseline;
    ASSERT_EQ(run(&baseline), RKNN_SUCC);

    for (int failure : {-1, -7, RKNN_ERR_TIMEOUT}) {
        doubling_result = failure;
        std::vector<uint8_t> out;
        EXPECT_EQ(run(&out), RKNN_ERR_FAIL) << "compute returned " << failure;
        doubling_result = 0;
        EXPECT_EQ(run(&out), RKNN_SUCC);
        EXPECT_EQ(out, baseline) << "after compute returned " << failure;
    }
    Prepared prepared;
    ASSERT_NO_FATAL_FAILURE(prepare(run, &prepared));
    expect_matrix_holds(prepared);
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
}

TEST_F(FaultSurvival, MatmulRunsSurviveEveryFault) {
    constexpr int kM = 4, kK = 64, kN = 32;
    rknn_matmul_info info;
    std::memset(&info, 0, sizeof(info));
    info.M = kM, info.K = kK, info.N = kN;
    info.type = RKNN_INT8_MM_INT8_TO_INT32;
    rknn_matmul_io_attr io{};
    rknn_matmul_ctx ctx = 0;
    ASSERT_EQ(rknn_matmul_create(&ctx, &info, &io), RKNN_SUCC);
    rknn_tensor_mem* a = rknn_create_mem(ctx, io.A.size);
    rknn_tensor_mem* b = rknn_create_mem(ctx, io.B.size);
    rknn_tensor_mem* c = rknn_create_mem(ctx, io.C.size);
    ASSERT_TRUE(a != nullptr && b != nullptr && c != nullptr);
    for (uint32_t i = 0; i < io.A.size; ++i) static_cast<int8_t*>(a->virt_addr)[i] = static_cast<int8_t>(i % 19 - 9);
    for (uint32_t i = 0; i < io.B.size; ++i) static_cast<int8_t*>(b->virt_addr)[i] = static_cast<int8_t>(i % 23 - 11);
    ASSERT_EQ(rknn_matmul_set_io_mem(ctx, a, &io.A), RKNN_SUCC);
    ASSERT_EQ(rknn_matmul_set_io_mem(ctx, b, &io.B), RKNN_SUCC);
    ASSERT_EQ(rknn_matmul_set_io_mem(ctx, c, &io.C), RKNN_SUCC);
    const RunOnce run = [&](std::vector<uint8_t>* out) {
        std::memset(c->virt_addr, 0x77, io.C.size);
        const int rc = rknn_matmul_run(ctx);
        if (rc == RKNN_SUCC)
            out->assign(static_cast<uint8_t*>(c->virt_addr), static_cast<uint8_t*>(c->virt_addr) + io.C.size);
        return rc;
    };
    std::vector<uint8_t> baseline;
    ASSERT_EQ(run(&baseline), RKNN_SUCC);
    Prepared prepared;
    ASSERT_NO_FATAL_FAILURE(prepare(run, &prepared));
    expect_matrix_holds(prepared);
    EXPECT_EQ(rknn_destroy_mem(ctx, a), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy_mem(ctx, b), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy_mem(ctx, c), RKNN_SUCC);
    EXPECT_EQ(rknn_matmul_destroy(ctx), RKNN_SUCC);
}

// Hundreds of fault cycles on one context: no fd, mock buffer or mock file is
// left behind (RSS is the fault_matrix program's, on a real model).
TEST_F(FaultSurvival, CyclesLeaveNothingBehind) {
    rknn_context ctx = 0;
    ASSERT_EQ(rknn::testing::init_graph(rknn::testing::quantized_cnn(), 0, &ctx), RKNN_SUCC);
    Prepared prepared;
    ASSERT_NO_FATAL_FAILURE(prepare(general_run(ctx), &prepared));
    MockKernel& kernel_ref = *prepared.kernel;
    const std::shared_ptr<MockKernel> kernel = prepared.kernel;
    const RunOnce& run = prepared.run;
    const std::vector<uint8_t>& baseline = prepared.baseline;
    const int submits = prepared.submits;
    for (int cycle = 0; cycle < 6; ++cycle) (void)rknn::testing::fault_cycle(kernel_ref, run, baseline, submits, cycle);
    const rknn::testing::Resources start = rknn::testing::resources_now(kernel.get());
    int failures = 0;
    for (int cycle = 0; cycle < kLeakCycles; ++cycle) {
        const std::string p = rknn::testing::fault_cycle(*kernel, run, baseline, submits, cycle);
        if (!p.empty() && ++failures <= 5) ADD_FAILURE() << "cycle " << cycle << ": " << p;
    }
    EXPECT_EQ(failures, 0);
    const rknn::testing::Resources end = rknn::testing::resources_now(kernel.get());
    EXPECT_EQ(end.fds, start.fds);
    EXPECT_EQ(end.mock_objects, start.mock_objects);
    EXPECT_EQ(end.mock_files, start.mock_files);
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
}

}  // namespace
