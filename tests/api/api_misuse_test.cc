// Every exported function, called with 0, made-up and destroyed handles and
// with NULL pointers: each returns an error code (or NULL) and nothing crashes.
//
// The test links rknnrt_static so that it can place objects in the handle
// table directly; the exported functions are the same code as in librknnrt.so.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "api/handle_table.h"
#include "base/log.h"
#include "c_callers.h"
#include "rknn_api.h"
#include "rknn_custom_op.h"
#include "rknn_matmul_api.h"

namespace {

using rknn::api::HandleKind;
using rknn::api::HandleObject;
using rknn::api::HandleTable;

class FakeObject : public HandleObject {
public:
    explicit FakeObject(HandleKind kind) : kind_(kind) {}
    HandleKind kind() const override { return kind_; }

private:
    HandleKind kind_;
};

rknn_context make_live(HandleKind kind) {
    return HandleTable::global().insert(std::make_shared<FakeObject>(kind));
}

// A pointer-returning call is mapped to this code when it returns NULL.
constexpr int kReturnedNull = -1000;
// Either an error code or NULL is acceptable; only success is wrong.
constexpr int kAnyError = -2000;

struct ApiCall {
    const char* name;
    HandleKind kind;              // the kind of handle the function wants
    int invalid_handle_result;    // expected result for a bad handle
    std::function<int(rknn_context)> call;
};

int null_to_code(const rknn_tensor_mem* mem) { return mem == nullptr ? kReturnedNull : 0; }

// Well-formed arguments for every function, so only the handle is wrong.
struct Args {
    rknn_input input{};
    rknn_output output{};
    rknn_tensor_attr attr{};
    rknn_tensor_mem mem{};          // never registered: not made by rknn_create_mem
    rknn_input_output_num io_num{};
    rknn_run_extend run_extend{};
    rknn_matmul_tensor_attr mm_attr{};
    rknn_quant_params quant{};
    rknn_matmul_shape shape{4, 8, 16};
    rknn_custom_op op{};
    float scale[16]{};
    char buffer[64]{};
};

std::vector<ApiCall> handle_taking_calls(Args& a) {
    const int ctx_err = RKNN_ERR_CTX_INVALID;
    return {
        {"rknn_destroy", HandleKind::kContext, ctx_err, [](rknn_context h) { return rknn_destroy(h); }},
        {"rknn_dup_context", HandleKind::kContext, ctx_err,
         [](rknn_context h) {
             rknn_context out = 0;
             return rknn_dup_context(&h, &out);
         }},
        {"rknn_query", HandleKind::kContext, ctx_err,
         [&a](rknn_context h) { return rknn_query(h, RKNN_QUERY_IN_OUT_NUM, &a.io_num, sizeof(a.io_num)); }},
        {"rknn_inputs_set", HandleKind::kContext, ctx_err,
         [&a](rknn_context h) { return rknn_inputs_set(h, 1, &a.input); }},
        {"rknn_set_batch_core_num", HandleKind::kContext, ctx_err,
         [](rknn_context h) { return rknn_set_batch_core_num(h, 1); }},
        {"rknn_set_core_mask", HandleKind::kContext, ctx_err,
         [](rknn_context h) { return rknn_set_core_mask(h, RKNN_NPU_CORE_AUTO); }},
        {"rknn_run", HandleKind::kContext, ctx_err, [&a](rknn_context h) { return rknn_run(h, &a.run_extend); }},
        {"rknn_wait", HandleKind::kContext, ctx_err, [&a](rknn_context h) { return rknn_wait(h, &a.run_extend); }},
        {"rknn_outputs_get", HandleKind::kContext, ctx_err,
         [&a](rknn_context h) { return rknn_outputs_get(h, 1, &a.output, nullptr); }},
        {"rknn_outputs_release", HandleKind::kContext, ctx_err,
         [&a](rknn_context h) { return rknn_outputs_release(h, 1, &a.output); }},
        {"rknn_create_mem_from_phys", HandleKind::kContext, kReturnedNull,
         [&a](rknn_context h) { return null_to_code(rknn_create_mem_from_phys(h, 0x1000, a.buffer, 64)); }},
        {"rknn_create_mem_from_fd", HandleKind::kContext, kReturnedNull,
         [&a](rknn_context h) { return null_to_code(rknn_create_mem_from_fd(h, 0, a.buffer, 64, 0)); }},
        {"rknn_create_mem_from_mb_blk", HandleKind::kContext, kReturnedNull,
         [&a](rknn_context h) { return null_to_code(rknn_create_mem_from_mb_blk(h, a.buffer, 0)); }},
        {"rknn_create_mem", HandleKind::kContext, kReturnedNull,
         [](rknn_context h) { return null_to_code(rknn_create_mem(h, 64)); }},
        {"rknn_create_mem2", HandleKind::kContext, kReturnedNull,
         [](rknn_context h) { return null_to_code(rknn_create_mem2(h, 64, RKNN_FLAG_MEMORY_CACHEABLE)); }},
        // With ctx 0 these two fail on the unknown descriptor instead.
        {"rknn_destroy_mem", HandleKind::kContext, kAnyError,
         [&a](rknn_context h) { return rknn_destroy_mem(h, &a.mem); }},
        {"rknn_destory_mem", HandleKind::kContext, kAnyError,
         [&a](rknn_context h) { return rknn_destory_mem(h, &a.mem); }},
        {"rknn_set_weight_mem", HandleKind::kContext, ctx_err,
         [&a](rknn_context h) { return rknn_set_weight_mem(h, &a.mem); }},
        {"rknn_set_internal_mem", HandleKind::kContext, ctx_err,
         [&a](rknn_context h) { return rknn_set_internal_mem(h, &a.mem); }},
        {"rknn_set_io_mem", HandleKind::kContext, ctx_err,
         [&a](rknn_context h) { return rknn_set_io_mem(h, &a.mem, &a.attr); }},
        {"rknn_set_input_shape", HandleKind::kContext, ctx_err,
         [&a](rknn_context h) { return rknn_set_input_shape(h, &a.attr); }},
        {"rknn_set_input_shapes", HandleKind::kContext, ctx_err,
         [&a](rknn_context h) { return rknn_set_input_shapes(h, 1, &a.attr); }},
        {"rknn_mem_sync", HandleKind::kContext, kAnyError,
         [&a](rknn_context h) { return rknn_mem_sync(h, &a.mem, RKNN_MEMORY_SYNC_TO_DEVICE); }},
        {"rknn_register_custom_ops", HandleKind::kContext, ctx_err,
         [&a](rknn_context h) { return rknn_register_custom_ops(h, &a.op, 1); }},
        {"rknn_matmul_set_io_mem", HandleKind::kMatmul, ctx_err,
         [&a](rknn_context h) { return rknn_matmul_set_io_mem(h, &a.mem, &a.mm_attr); }},
        {"rknn_matmul_set_core_mask", HandleKind::kMatmul, ctx_err,
         [](rknn_context h) { return rknn_matmul_set_core_mask(h, RKNN_NPU_CORE_AUTO); }},
        {"rknn_matmul_set_quant_params", HandleKind::kMatmul, ctx_err,
         [&a](rknn_context h) { return rknn_matmul_set_quant_params(h, &a.quant); }},
        {"rknn_matmul_get_quant_params", HandleKind::kMatmul, ctx_err,
         [&a](rknn_context h) { return rknn_matmul_get_quant_params(h, &a.quant, a.scale); }},
        {"rknn_matmul_set_dynamic_shape", HandleKind::kMatmul, ctx_err,
         [&a](rknn_context h) { return rknn_matmul_set_dynamic_shape(h, &a.shape); }},
        {"rknn_matmul_run", HandleKind::kMatmul, ctx_err, [](rknn_context h) { return rknn_matmul_run(h); }},
        {"rknn_matmul_destroy", HandleKind::kMatmul, ctx_err, [](rknn_context h) { return rknn_matmul_destroy(h); }},
    };
}

// Calls that must fail with RKNN_ERR_PARAM_INVALID (or return NULL) when a
// pointer is NULL, given a live handle of the right kind.
std::vector<ApiCall> null_pointer_calls(Args& a) {
    const int perr = RKNN_ERR_PARAM_INVALID;
    rknn_matmul_info info{};
    info.M = 4;
    info.K = 8;
    info.N = 16;
    info.type = RKNN_INT8_MM_INT8_TO_INT32;
    return {
        {"rknn_init(context=NULL)", HandleKind::kContext, perr,
         [&a](rknn_context) { return rknn_init(nullptr, a.buffer, sizeof(a.buffer), 0, nullptr); }},
        {"rknn_init(model=NULL)", HandleKind::kContext, perr,
         [](rknn_context) {
             rknn_context out = 1;
             return rknn_init(&out, nullptr, 0, 0, nullptr);
         }},
        {"rknn_dup_context(in=NULL)", HandleKind::kContext, perr,
         [](rknn_context) {
             rknn_context out = 0;
             return rknn_dup_context(nullptr, &out);
         }},
        {"rknn_dup_context(out=NULL)", HandleKind::kContext, perr,
         [](rknn_context h) { return rknn_dup_context(&h, nullptr); }},
        {"rknn_query(info=NULL)", HandleKind::kContext, perr,
         [](rknn_context h) { return rknn_query(h, RKNN_QUERY_IN_OUT_NUM, nullptr, 8); }},
        {"rknn_inputs_set(inputs=NULL)", HandleKind::kContext, perr,
         [](rknn_context h) { return rknn_inputs_set(h, 1, nullptr); }},
        {"rknn_outputs_get(outputs=NULL)", HandleKind::kContext, perr,
         [](rknn_context h) { return rknn_outputs_get(h, 1, nullptr, nullptr); }},
        {"rknn_outputs_release(outputs=NULL)", HandleKind::kContext, perr,
         [](rknn_context h) { return rknn_outputs_release(h, 1, nullptr); }},
        {"rknn_create_mem_from_phys(virt=NULL)", HandleKind::kContext, kReturnedNull,
         [](rknn_context h) { return null_to_code(rknn_create_mem_from_phys(h, 0x1000, nullptr, 64)); }},
        {"rknn_create_mem_from_mb_blk(NULL)", HandleKind::kContext, kReturnedNull,
         [](rknn_context h) { return null_to_code(rknn_create_mem_from_mb_blk(h, nullptr, 0)); }},
        {"rknn_destroy_mem(mem=NULL)", HandleKind::kContext, perr,
         [](rknn_context h) { return rknn_destroy_mem(h, nullptr); }},
        {"rknn_destory_mem(mem=NULL)", HandleKind::kContext, perr,
         [](rknn_context h) { return rknn_destory_mem(h, nullptr); }},
        {"rknn_destroy_mem(mem=unknown)", HandleKind::kContext, perr,
         [&a](rknn_context h) { return rknn_destroy_mem(h, &a.mem); }},
        {"rknn_set_weight_mem(mem=NULL)", HandleKind::kContext, perr,
         [](rknn_context h) { return rknn_set_weight_mem(h, nullptr); }},
        {"rknn_set_internal_mem(mem=NULL)", HandleKind::kContext, perr,
         [](rknn_context h) { return rknn_set_internal_mem(h, nullptr); }},
        {"rknn_set_io_mem(mem=NULL)", HandleKind::kContext, perr,
         [&a](rknn_context h) { return rknn_set_io_mem(h, nullptr, &a.attr); }},
        {"rknn_set_io_mem(attr=NULL)", HandleKind::kContext, perr,
         [&a](rknn_context h) { return rknn_set_io_mem(h, &a.mem, nullptr); }},
        {"rknn_set_input_shape(attr=NULL)", HandleKind::kContext, perr,
         [](rknn_context h) { return rknn_set_input_shape(h, nullptr); }},
        {"rknn_set_input_shapes(attr=NULL)", HandleKind::kContext, perr,
         [](rknn_context h) { return rknn_set_input_shapes(h, 1, nullptr); }},
        {"rknn_mem_sync(mem=NULL)", HandleKind::kContext, perr,
         [](rknn_context h) { return rknn_mem_sync(h, nullptr, RKNN_MEMORY_SYNC_TO_DEVICE); }},
        {"rknn_mem_sync(ctx=0, mem=NULL)", HandleKind::kContext, perr,
         [](rknn_context) { return rknn_mem_sync(0, nullptr, RKNN_MEMORY_SYNC_FROM_DEVICE); }},
        {"rknn_register_custom_ops(op=NULL)", HandleKind::kContext, perr,
         [](rknn_context h) { return rknn_register_custom_ops(h, nullptr, 1); }},
        {"rknn_matmul_create(ctx=NULL)", HandleKind::kMatmul, perr,
         [info](rknn_context) mutable {
             rknn_matmul_io_attr io{};
             return rknn_matmul_create(nullptr, &info, &io);
         }},
        {"rknn_matmul_create(info=NULL)", HandleKind::kMatmul, perr,
         [](rknn_context) {
             rknn_matmul_ctx out = 0;
             rknn_matmul_io_attr io{};
             return rknn_matmul_create(&out, nullptr, &io);
         }},
        {"rknn_matmul_create(io_attr=NULL)", HandleKind::kMatmul, perr,
         [info](rknn_context) mutable {
             rknn_matmul_ctx out = 0;
             return rknn_matmul_create(&out, &info, nullptr);
         }},
        {"rknn_matmul_create_dynamic_shape(shapes=NULL)", HandleKind::kMatmul, perr,
         [info](rknn_context) mutable {
             rknn_matmul_ctx out = 0;
             rknn_matmul_io_attr io{};
             return rknn_matmul_create_dynamic_shape(&out, &info, 1, nullptr, &io);
         }},
        {"rknn_matmul_create_dyn_shape(info=NULL)", HandleKind::kMatmul, perr,
         [&a](rknn_context) {
             rknn_matmul_ctx out = 0;
             rknn_matmul_io_attr io{};
             return rknn_matmul_create_dyn_shape(&out, nullptr, 1, &a.shape, &io);
         }},
        {"rknn_matmul_set_io_mem(mem=NULL)", HandleKind::kMatmul, perr,
         [&a](rknn_context h) { return rknn_matmul_set_io_mem(h, nullptr, &a.mm_attr); }},
        {"rknn_matmul_set_io_mem(attr=NULL)", HandleKind::kMatmul, perr,
         [&a](rknn_context h) { return rknn_matmul_set_io_mem(h, &a.mem, nullptr); }},
        {"rknn_matmul_set_quant_params(NULL)", HandleKind::kMatmul, perr,
         [](rknn_context h) { return rknn_matmul_set_quant_params(h, nullptr); }},
        {"rknn_matmul_get_quant_params(scale=NULL)", HandleKind::kMatmul, perr,
         [&a](rknn_context h) { return rknn_matmul_get_quant_params(h, &a.quant, nullptr); }},
        {"rknn_matmul_set_dynamic_shape(NULL)", HandleKind::kMatmul, perr,
         [](rknn_context h) { return rknn_matmul_set_dynamic_shape(h, nullptr); }},
        {"rknn_B_normal_layout_to_native_layout(B_input=NULL)", HandleKind::kMatmul, perr,
         [info, &a](rknn_context) mutable {
             return rknn_B_normal_layout_to_native_layout(nullptr, a.buffer, 8, 16, &info);
         }},
        {"rknn_B_normal_layout_to_native_layout(info=NULL)", HandleKind::kMatmul, perr,
         [&a](rknn_context) { return rknn_B_normal_layout_to_native_layout(a.buffer, a.buffer, 8, 16, nullptr); }},
    };
}

void expect_result(const ApiCall& call, rknn_context handle, const std::string& label) {
    const int result = call.call(handle);
    if (call.invalid_handle_result == kAnyError) {
        EXPECT_TRUE(result < 0) << call.name << " with " << label << " returned " << result;
    } else {
        EXPECT_EQ(result, call.invalid_handle_result) << call.name << " with " << label;
    }
}

class ApiMisuseTest : public ::testing::Test {
protected:
    void SetUp() override { rknn::log::set_level(0); }  // thousands of expected errors
    void TearDown() override { rknn::log::set_level(rknn::log::kDefaultLevel); }
    Args args_;
};

TEST_F(ApiMisuseTest, ZeroHandleIsRejectedEverywhere) {
    for (const ApiCall& call : handle_taking_calls(args_)) expect_result(call, 0, "handle 0");
}

TEST_F(ApiMisuseTest, MadeUpHandlesAreRejectedEverywhere) {
    const std::vector<rknn_context> made_up = {1, 2, 0x12345678, static_cast<rknn_context>(0xdeadbeefcafef00dULL),
                                               static_cast<rknn_context>(~0ULL)};
    for (rknn_context handle : made_up) {
        for (const ApiCall& call : handle_taking_calls(args_)) {
            expect_result(call, handle, "made-up handle " + std::to_string(handle));
        }
    }
}

TEST_F(ApiMisuseTest, DestroyedHandlesAreRejectedEverywhere) {
    const rknn_context context = make_live(HandleKind::kContext);
    const rknn_context matmul = make_live(HandleKind::kMatmul);
    ASSERT_EQ(rknn_destroy(context), RKNN_SUCC);
    ASSERT_EQ(rknn_matmul_destroy(matmul), RKNN_SUCC);
    for (const ApiCall& call : handle_taking_calls(args_)) {
        const rknn_context handle = call.kind == HandleKind::kMatmul ? matmul : context;
        expect_result(call, handle, "destroyed handle");
    }
}

TEST_F(ApiMisuseTest, HandleOfTheWrongKindIsRejected) {
    const rknn_context context = make_live(HandleKind::kContext);
    const rknn_context matmul = make_live(HandleKind::kMatmul);
    EXPECT_EQ(rknn_matmul_run(context), RKNN_ERR_CTX_INVALID);
    EXPECT_EQ(rknn_matmul_destroy(context), RKNN_ERR_CTX_INVALID);
    EXPECT_EQ(rknn_run(matmul, nullptr), RKNN_ERR_CTX_INVALID);
    EXPECT_EQ(rknn_destroy(matmul), RKNN_ERR_CTX_INVALID);
    // Both still alive after the failed destroys.
    EXPECT_EQ(rknn_destroy(context), RKNN_SUCC);
    EXPECT_EQ(rknn_matmul_destroy(matmul), RKNN_SUCC);
}

TEST_F(ApiMisuseTest, NullPointersAreRejectedEverywhere) {
    const rknn_context context = make_live(HandleKind::kContext);
    const rknn_context matmul = make_live(HandleKind::kMatmul);
    for (const ApiCall& call : null_pointer_calls(args_)) {
        const rknn_context handle = call.kind == HandleKind::kMatmul ? matmul : context;
        expect_result(call, handle, "NULL pointer");
    }
    EXPECT_EQ(rknn_destroy(context), RKNN_SUCC);
    EXPECT_EQ(rknn_matmul_destroy(matmul), RKNN_SUCC);
}

TEST_F(ApiMisuseTest, GetOpAttrWithNullsLeavesAnEmptyAttribute) {
    rknn_custom_op_get_op_attr(nullptr, nullptr, nullptr);  // must simply not crash
    rknn_custom_op_attr attr;
    std::memset(&attr, 0xab, sizeof(attr));
    rknn_custom_op_get_op_attr(nullptr, "axis", &attr);
    EXPECT_EQ(attr.n_elems, 0u);
    EXPECT_EQ(attr.data, nullptr);
    EXPECT_EQ(attr.name[0], '\0');
}

TEST_F(ApiMisuseTest, InitRejectsUnknownAndContradictoryFlags) {
    rknn_context out = 0;
    EXPECT_EQ(rknn_init(&out, args_.buffer, sizeof(args_.buffer), 0x80000000u, nullptr), RKNN_ERR_PARAM_INVALID);
    EXPECT_EQ(rknn_init(&out, args_.buffer, sizeof(args_.buffer), RKNN_MEM_FLAG_ALLOC_NO_CONTEXT, nullptr),
              RKNN_ERR_PARAM_INVALID);
    EXPECT_EQ(rknn_init(&out, args_.buffer, sizeof(args_.buffer), RKNN_FLAG_SHARE_WEIGHT_MEM, nullptr),
              RKNN_ERR_PARAM_INVALID);
    EXPECT_EQ(rknn_init(&out, args_.buffer, sizeof(args_.buffer), RKNN_FLAG_SHARE_SRAM, nullptr),
              RKNN_ERR_PARAM_INVALID);
    EXPECT_EQ(out, 0u) << "a failed init leaves no handle behind";
}

TEST_F(ApiMisuseTest, QueryRejectsUnknownCommands) {
    const rknn_context context = make_live(HandleKind::kContext);
    rknn_input_output_num io{};
    EXPECT_EQ(rknn_query(context, RKNN_QUERY_CMD_MAX, &io, sizeof(io)), RKNN_ERR_PARAM_INVALID);
    EXPECT_EQ(query_with_raw_command(context, -1, &io, sizeof(io)), RKNN_ERR_PARAM_INVALID);
    EXPECT_EQ(rknn_destroy(context), RKNN_SUCC);
}

TEST_F(ApiMisuseTest, OutOfRangeEnumValuesAreRejected) {
    EXPECT_EQ(mem_sync_with_raw_mode(0, nullptr, -1), RKNN_ERR_PARAM_INVALID);
    rknn_matmul_info info{};
    info.M = info.K = info.N = 4;
    int thirteen = 13;  // a gap in rknn_matmul_type
    std::memcpy(&info.type, &thirteen, sizeof(info.type));
    rknn_matmul_ctx out = 0;
    rknn_matmul_io_attr io{};
    EXPECT_EQ(rknn_matmul_create(&out, &info, &io), RKNN_ERR_PARAM_INVALID);
    const int minus_one = -1;
    std::memcpy(&info.type, &minus_one, sizeof(info.type));
    EXPECT_EQ(rknn_matmul_create(&out, &info, &io), RKNN_ERR_PARAM_INVALID);
}

TEST_F(ApiMisuseTest, CreateMem2RejectsBadFlagsAndSizes) {
    const rknn_context context = make_live(HandleKind::kContext);
    EXPECT_EQ(rknn_create_mem2(context, 64, 0x1000), nullptr);
    EXPECT_EQ(rknn_create_mem2(context, 0, 0), nullptr);
    EXPECT_EQ(rknn_create_mem2(context, 1ULL << 33, 0), nullptr);
    EXPECT_EQ(rknn_create_mem2(context, 64, RKNN_FLAG_MEMORY_CACHEABLE | RKNN_FLAG_MEMORY_NON_CACHEABLE), nullptr);
    EXPECT_EQ(rknn_destroy(context), RKNN_SUCC);
}

}  // namespace
