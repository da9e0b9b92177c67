/*
 * ABI check of include/: every macro, every enumerator, and the size, offset and
 * width of every field of every struct, against the tables of
 * spec/abi-facts.md (V2.3.2) for the architecture being built.
 *
 * This file is compiled twice, as strict C99 and as C++17 (abi_check_cxx.cc),
 * and runs natively and in the aarch64 cross build under qemu. It prints one
 * line per mismatch and a summary, and exits non-zero on any mismatch.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "rknn_api.h"
#include "rknn_custom_op.h"
#include "rknn_matmul_api.h"
#include "rknn_openrknn_ext.h"

/* The tables give LP64 (x86-64, aarch64) and 32-bit ARM (armhf) numbers. */
#if defined(__arm__)
#define ABI(lp64, arm32) (arm32)
#elif defined(__LP64__)
#define ABI(lp64, arm32) (lp64)
#else
#define ABI_UNSUPPORTED 1
#define ABI(lp64, arm32) (lp64)
#endif

static int g_checks = 0;
static int g_failures = 0;

static void check_eq(const char* what, long long actual, long long expected)
{
    ++g_checks;
    if (actual != expected) {
        ++g_failures;
        printf("MISMATCH %s: got %lld, expected %lld\n", what, actual, expected);
    }
}

static void check_str(const char* what, const char* actual, const char* expected)
{
    ++g_checks;
    if (strcmp(actual, expected) != 0) {
        ++g_failures;
        printf("MISMATCH %s: got \"%s\", expected \"%s\"\n", what, actual, expected);
    }
}

#define VALUE(name, expected) check_eq(#name, (long long)(name), (long long)(expected))
#define SIZE(type, lp64, arm32) check_eq("sizeof(" #type ")", (long long)sizeof(type), (long long)ABI(lp64, arm32))
/* Offset of a field on both ABIs, and its width in bytes (type and array size). */
#define FIELD(type, field, off_lp64, off_arm32, width)                                          \
    do {                                                                                         \
        check_eq("offsetof(" #type "." #field ")", (long long)offsetof(type, field),           \
                 (long long)ABI(off_lp64, off_arm32));                                          \
        check_eq("sizeof(" #type "." #field ")", (long long)sizeof(((type*)0)->field),          \
                 (long long)(width));                                                            \
    } while (0)
#define PTR ((long long)sizeof(void*))
#define CTX ((long long)ABI(8, 4))

static void check_macros(void)
{
    VALUE(RKNN_FLAG_PRIOR_HIGH, 0x0);
    VALUE(RKNN_FLAG_PRIOR_MEDIUM, 0x1);
    VALUE(RKNN_FLAG_PRIOR_LOW, 0x2);
    VALUE(RKNN_FLAG_ASYNC_MASK, 0x4);
    VALUE(RKNN_FLAG_COLLECT_PERF_MASK, 0x8);
    VALUE(RKNN_FLAG_MEM_ALLOC_OUTSIDE, 0x10);
    VALUE(RKNN_FLAG_SHARE_WEIGHT_MEM, 0x20);
    VALUE(RKNN_FLAG_FENCE_IN_OUTSIDE, 0x40);
    VALUE(RKNN_FLAG_FENCE_OUT_OUTSIDE, 0x80);
    VALUE(RKNN_FLAG_COLLECT_MODEL_INFO_ONLY, 0x100);
    VALUE(RKNN_FLAG_INTERNAL_ALLOC_OUTSIDE, 0x200);
    VALUE(RKNN_FLAG_EXECUTE_FALLBACK_PRIOR_DEVICE_GPU, 0x400);
    VALUE(RKNN_FLAG_ENABLE_SRAM, 0x800);
    VALUE(RKNN_FLAG_SHARE_SRAM, 0x1000);
    VALUE(RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY, 0x2000);
    VALUE(RKNN_FLAG_DISABLE_FLUSH_INPUT_MEM_CACHE, 0x4000);
    VALUE(RKNN_FLAG_DISABLE_FLUSH_OUTPUT_MEM_CACHE, 0x8000);
    VALUE(RKNN_FLAG_MODEL_BUFFER_ZERO_COPY, 0x10000);
    VALUE(RKNN_MEM_FLAG_ALLOC_NO_CONTEXT, 0x20000);

    VALUE(RKNN_SUCC, 0);
    VALUE(RKNN_ERR_FAIL, -1);
    VALUE(RKNN_ERR_TIMEOUT, -2);
    VALUE(RKNN_ERR_DEVICE_UNAVAILABLE, -3);
    VALUE(RKNN_ERR_MALLOC_FAIL, -4);
    VALUE(RKNN_ERR_PARAM_INVALID, -5);
    VALUE(RKNN_ERR_MODEL_INVALID, -6);
    VALUE(RKNN_ERR_CTX_INVALID, -7);
    VALUE(RKNN_ERR_INPUT_INVALID, -8);
    VALUE(RKNN_ERR_OUTPUT_INVALID, -9);
    VALUE(RKNN_ERR_DEVICE_UNMATCH, -10);
    VALUE(RKNN_ERR_INCOMPATILE_PRE_COMPILE_MODEL, -11);
    VALUE(RKNN_ERR_INCOMPATILE_OPTIMIZATION_LEVEL_VERSION, -12);
    VALUE(RKNN_ERR_TARGET_PLATFORM_UNMATCH, -13);
    VALUE(RKNN_WARNING_SKIP_CUSTOM_OP_COMPUTE, -14);

    VALUE(RKNN_MAX_DIMS, 16);
    VALUE(RKNN_MAX_NUM_CHANNEL, 15);
    VALUE(RKNN_MAX_NAME_LEN, 256);
    VALUE(RKNN_MAX_DYNAMIC_SHAPE_NUM, 512);
    VALUE(RKNN_CUSTOM_OP_MAX_STR_LEN, 64);
    VALUE(RKNN_CUSTOM_OP_MAX_VALUE_LEN, 32);
    check_str("RKNN_CSTOP_PLUGIN_PREFIX", RKNN_CSTOP_PLUGIN_PREFIX, "librkcst_");
}

static void check_enums(void)
{
    VALUE(RKNN_QUERY_IN_OUT_NUM, 0);
    VALUE(RKNN_QUERY_INPUT_ATTR, 1);
    VALUE(RKNN_QUERY_OUTPUT_ATTR, 2);
    VALUE(RKNN_QUERY_PERF_DETAIL, 3);
    VALUE(RKNN_QUERY_PERF_RUN, 4);
    VALUE(RKNN_QUERY_SDK_VERSION, 5);
    VALUE(RKNN_QUERY_MEM_SIZE, 6);
    VALUE(RKNN_QUERY_CUSTOM_STRING, 7);
    VALUE(RKNN_QUERY_NATIVE_INPUT_ATTR, 8);
    VALUE(RKNN_QUERY_NATIVE_OUTPUT_ATTR, 9);
    VALUE(RKNN_QUERY_NATIVE_NC1HWC2_INPUT_ATTR, 8);
    VALUE(RKNN_QUERY_NATIVE_NC1HWC2_OUTPUT_ATTR, 9);
    VALUE(RKNN_QUERY_NATIVE_NHWC_INPUT_ATTR, 10);
    VALUE(RKNN_QUERY_NATIVE_NHWC_OUTPUT_ATTR, 11);
    VALUE(RKNN_QUERY_DEVICE_MEM_INFO, 12);
    VALUE(RKNN_QUERY_INPUT_DYNAMIC_RANGE, 13);
    VALUE(RKNN_QUERY_CURRENT_INPUT_ATTR, 14);
    VALUE(RKNN_QUERY_CURRENT_OUTPUT_ATTR, 15);
    VALUE(RKNN_QUERY_CURRENT_NATIVE_INPUT_ATTR, 16);
    VALUE(RKNN_QUERY_CURRENT_NATIVE_OUTPUT_ATTR, 17);
    VALUE(RKNN_QUERY_CMD_MAX, 18);
    /* OpenRKNN's extension: far above every vendor command. */
    VALUE(RKNN_QUERY_OPENRKNN_INPUT_SHAPE_RANGE, 0x1000);

    VALUE(RKNN_TENSOR_FLOAT32, 0);
    VALUE(RKNN_TENSOR_FLOAT16, 1);
    VALUE(RKNN_TENSOR_INT8, 2);
    VALUE(RKNN_TENSOR_UINT8, 3);
    VALUE(RKNN_TENSOR_INT16, 4);
    VALUE(RKNN_TENSOR_UINT16, 5);
    VALUE(RKNN_TENSOR_INT32, 6);
    VALUE(RKNN_TENSOR_UINT32, 7);
    VALUE(RKNN_TENSOR_INT64, 8);
    VALUE(RKNN_TENSOR_BOOL, 9);
    VALUE(RKNN_TENSOR_INT4, 10);
    VALUE(RKNN_TENSOR_BFLOAT16, 11);
    VALUE(RKNN_TENSOR_TYPE_MAX, 12);

    VALUE(RKNN_TENSOR_QNT_NONE, 0);
    VALUE(RKNN_TENSOR_QNT_DFP, 1);
    VALUE(RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC, 2);
    VALUE(RKNN_TENSOR_QNT_MAX, 3);

    VALUE(RKNN_TENSOR_NCHW, 0);
    VALUE(RKNN_TENSOR_NHWC, 1);
    VALUE(RKNN_TENSOR_NC1HWC2, 2);
    VALUE(RKNN_TENSOR_UNDEFINED, 3);
    VALUE(RKNN_TENSOR_FORMAT_MAX, 4);

    VALUE(RKNN_NPU_CORE_AUTO, 0);
    VALUE(RKNN_NPU_CORE_0, 1);
    VALUE(RKNN_NPU_CORE_1, 2);
    VALUE(RKNN_NPU_CORE_2, 4);
    VALUE(RKNN_NPU_CORE_0_1, 3);
    VALUE(RKNN_NPU_CORE_0_1_2, 7);
    VALUE(RKNN_NPU_CORE_ALL, 0xffff);
    VALUE(RKNN_NPU_CORE_UNDEFINED, 0x10000);

    VALUE(RKNN_TENSOR_MEMORY_FLAGS_ALLOC_INSIDE, 1);
    VALUE(RKNN_TENSOR_MEMORY_FLAGS_FROM_FD, 2);
    VALUE(RKNN_TENSOR_MEMORY_FLAGS_FROM_PHYS, 3);
    VALUE(RKNN_TENSOR_MEMORY_FLAGS_UNKNOWN, 4);

    VALUE(RKNN_FLAG_MEMORY_FLAGS_DEFAULT, 0);
    VALUE(RKNN_FLAG_MEMORY_CACHEABLE, 1);
    VALUE(RKNN_FLAG_MEMORY_NON_CACHEABLE, 2);
    VALUE(RKNN_FLAG_MEMORY_TRY_ALLOC_SRAM, 4);

    VALUE(RKNN_MEMORY_SYNC_TO_DEVICE, 1);
    VALUE(RKNN_MEMORY_SYNC_FROM_DEVICE, 2);
    VALUE(RKNN_MEMORY_SYNC_BIDIRECTIONAL, 3);
    VALUE(RKNN_MEMORY_SYNC_SYNC_BIDIRECTIONAL, 3);

    VALUE(RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32, 1);
    VALUE(RKNN_INT8_MM_INT8_TO_INT32, 2);
    VALUE(RKNN_INT8_MM_INT8_TO_INT8, 3);
    VALUE(RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT16, 4);
    VALUE(RKNN_FLOAT16_MM_INT8_TO_FLOAT32, 5);
    VALUE(RKNN_FLOAT16_MM_INT8_TO_FLOAT16, 6);
    VALUE(RKNN_FLOAT16_MM_INT4_TO_FLOAT32, 7);
    VALUE(RKNN_FLOAT16_MM_INT4_TO_FLOAT16, 8);
    VALUE(RKNN_INT8_MM_INT8_TO_FLOAT32, 9);
    VALUE(RKNN_INT4_MM_INT4_TO_INT16, 10);
    VALUE(RKNN_INT8_MM_INT4_TO_INT32, 11);
    VALUE(RKNN_FLOAT16_MM_INT4_TO_BFLOAT16, 12);
    VALUE(RKNN_INT8_MM_INT4_TO_FLOAT16, 15);

    VALUE(RKNN_QUANT_TYPE_PER_LAYER_SYM, 0);
    VALUE(RKNN_QUANT_TYPE_PER_LAYER_ASYM, 1);
    VALUE(RKNN_QUANT_TYPE_PER_CHANNEL_SYM, 2);
    VALUE(RKNN_QUANT_TYPE_PER_CHANNEL_ASYM, 3);
    VALUE(RKNN_QUANT_TYPE_PER_GROUP_SYM, 4);
    VALUE(RKNN_QUANT_TYPE_PER_GROUP_ASYM, 5);

    VALUE(RKNN_MM_LAYOUT_NORM, 0);
    VALUE(RKNN_MM_LAYOUT_NATIVE, 1);
    VALUE(RKNN_MM_LAYOUT_TP_NORM, 2);

    VALUE(RKNN_TARGET_TYPE_CPU, 1);
    VALUE(RKNN_TARGET_TYPE_GPU, 2);
    VALUE(RKNN_TARGET_TYPE_MAX, 3);

    /* Enums are int-sized on every ABI (no short enums). */
    SIZE(rknn_query_cmd, 4, 4);
    SIZE(rknn_tensor_type, 4, 4);
    SIZE(rknn_tensor_qnt_type, 4, 4);
    SIZE(rknn_tensor_format, 4, 4);
    SIZE(rknn_core_mask, 4, 4);
    SIZE(rknn_tensor_mem_flags, 4, 4);
    SIZE(rknn_mem_alloc_flags, 4, 4);
    SIZE(rknn_mem_sync_mode, 4, 4);
    SIZE(rknn_matmul_type, 4, 4);
    SIZE(rknn_matmul_quant_type, 4, 4);
    SIZE(rknn_matmul_layout, 4, 4);
    SIZE(rknn_target_type, 4, 4);
}

static void check_scalar_types(void)
{
    SIZE(rknn_context, 8, 4);
    SIZE(rknn_matmul_ctx, 8, 4);
    SIZE(rknn_custom_op_interal_context, 8, 4);
    SIZE(get_custom_op_func, 8, 4);
}

static void check_core_structs(void)
{
    SIZE(rknn_input_output_num, 8, 8);
    FIELD(rknn_input_output_num, n_input, 0, 0, 4);
    FIELD(rknn_input_output_num, n_output, 4, 4, 4);

    SIZE(rknn_tensor_attr, 376, 376);
    FIELD(rknn_tensor_attr, index, 0, 0, 4);
    FIELD(rknn_tensor_attr, n_dims, 4, 4, 4);
    FIELD(rknn_tensor_attr, dims, 8, 8, 64);
    FIELD(rknn_tensor_attr, name, 72, 72, 256);
    FIELD(rknn_tensor_attr, n_elems, 328, 328, 4);
    FIELD(rknn_tensor_attr, size, 332, 332, 4);
    FIELD(rknn_tensor_attr, fmt, 336, 336, 4);
    FIELD(rknn_tensor_attr, type, 340, 340, 4);
    FIELD(rknn_tensor_attr, qnt_type, 344, 344, 4);
    FIELD(rknn_tensor_attr, fl, 348, 348, 1);
    FIELD(rknn_tensor_attr, zp, 352, 352, 4);
    FIELD(rknn_tensor_attr, scale, 356, 356, 4);
    FIELD(rknn_tensor_attr, w_stride, 360, 360, 4);
    FIELD(rknn_tensor_attr, size_with_stride, 364, 364, 4);
    FIELD(rknn_tensor_attr, pass_through, 368, 368, 1);
    FIELD(rknn_tensor_attr, h_stride, 372, 372, 4);

    SIZE(rknn_input_range, 33040, 33040);
    FIELD(rknn_input_range, index, 0, 0, 4);
    FIELD(rknn_input_range, shape_number, 4, 4, 4);
    FIELD(rknn_input_range, fmt, 8, 8, 4);
    FIELD(rknn_input_range, name, 12, 12, 256);
    FIELD(rknn_input_range, dyn_range, 268, 268, 512 * 16 * 4);
    FIELD(rknn_input_range, n_dims, 33036, 33036, 4);

    SIZE(rknn_perf_detail, 16, 16);
    FIELD(rknn_perf_detail, perf_data, 0, 0, PTR);
    FIELD(rknn_perf_detail, data_len, 8, 8, 8);

    SIZE(rknn_perf_run, 8, 8);
    FIELD(rknn_perf_run, run_duration, 0, 0, 8);

    SIZE(rknn_sdk_version, 512, 512);
    FIELD(rknn_sdk_version, api_version, 0, 0, 256);
    FIELD(rknn_sdk_version, drv_version, 256, 256, 256);

    SIZE(rknn_mem_size, 64, 64);
    FIELD(rknn_mem_size, total_weight_size, 0, 0, 4);
    FIELD(rknn_mem_size, total_internal_size, 4, 4, 4);
    FIELD(rknn_mem_size, total_dma_allocated_size, 8, 8, 8);
    FIELD(rknn_mem_size, total_sram_size, 16, 16, 4);
    FIELD(rknn_mem_size, free_sram_size, 20, 20, 4);
    FIELD(rknn_mem_size, reserved, 24, 24, 40);

    SIZE(rknn_custom_string, 1024, 1024);
    FIELD(rknn_custom_string, string, 0, 0, 1024);

    SIZE(rknn_tensor_mem, 40, 40);
    FIELD(rknn_tensor_mem, virt_addr, 0, 0, PTR);
    FIELD(rknn_tensor_mem, phys_addr, 8, 8, 8);
    FIELD(rknn_tensor_mem, fd, 16, 16, 4);
    FIELD(rknn_tensor_mem, offset, 20, 20, 4);
    FIELD(rknn_tensor_mem, size, 24, 24, 4);
    FIELD(rknn_tensor_mem, flags, 28, 28, 4);
    FIELD(rknn_tensor_mem, priv_data, 32, 32, PTR);

    SIZE(rknn_input, 32, 24);
    FIELD(rknn_input, index, 0, 0, 4);
    FIELD(rknn_input, buf, 8, 4, PTR);
    FIELD(rknn_input, size, 16, 8, 4);
    FIELD(rknn_input, pass_through, 20, 12, 1);
    FIELD(rknn_input, type, 24, 16, 4);
    FIELD(rknn_input, fmt, 28, 20, 4);

    SIZE(rknn_output, 24, 16);
    FIELD(rknn_output, want_float, 0, 0, 1);
    FIELD(rknn_output, is_prealloc, 1, 1, 1);
    FIELD(rknn_output, index, 4, 4, 4);
    FIELD(rknn_output, buf, 8, 8, PTR);
    FIELD(rknn_output, size, 16, 12, 4);

    SIZE(rknn_init_extend, 136, 132);
    FIELD(rknn_init_extend, ctx, 0, 0, CTX);
    FIELD(rknn_init_extend, real_model_offset, 8, 4, 4);
    FIELD(rknn_init_extend, real_model_size, 12, 8, 4);
    FIELD(rknn_init_extend, model_buffer_fd, 16, 12, 4);
    FIELD(rknn_init_extend, model_buffer_flags, 20, 16, 4);
    FIELD(rknn_init_extend, reserved, 24, 20, 112);

    SIZE(rknn_run_extend, 24, 24);
    FIELD(rknn_run_extend, frame_id, 0, 0, 8);
    FIELD(rknn_run_extend, non_block, 8, 8, 4);
    FIELD(rknn_run_extend, timeout_ms, 12, 12, 4);
    FIELD(rknn_run_extend, fence_fd, 16, 16, 4);

    SIZE(rknn_output_extend, 8, 8);
    FIELD(rknn_output_extend, frame_id, 0, 0, 8);
}

static void check_matmul_structs(void)
{
    SIZE(rknn_matmul_tensor_attr, 332, 332);
    FIELD(rknn_matmul_tensor_attr, name, 0, 0, 256);
    FIELD(rknn_matmul_tensor_attr, n_dims, 256, 256, 4);
    FIELD(rknn_matmul_tensor_attr, dims, 260, 260, 64);
    FIELD(rknn_matmul_tensor_attr, size, 324, 324, 4);
    FIELD(rknn_matmul_tensor_attr, type, 328, 328, 4);

    SIZE(rknn_matmul_io_attr, 996, 996);
    FIELD(rknn_matmul_io_attr, A, 0, 0, 332);
    FIELD(rknn_matmul_io_attr, B, 332, 332, 332);
    FIELD(rknn_matmul_io_attr, C, 664, 664, 332);

    SIZE(rknn_quant_params, 288, 272);
    FIELD(rknn_quant_params, name, 0, 0, 256);
    FIELD(rknn_quant_params, scale, 256, 256, PTR);
    FIELD(rknn_quant_params, scale_len, 264, 260, 4);
    FIELD(rknn_quant_params, zp, 272, 264, PTR);
    FIELD(rknn_quant_params, zp_len, 280, 268, 4);

    SIZE(rknn_matmul_shape, 12, 12);
    FIELD(rknn_matmul_shape, M, 0, 0, 4);
    FIELD(rknn_matmul_shape, K, 4, 4, 4);
    FIELD(rknn_matmul_shape, N, 8, 8, 4);

    SIZE(rknn_matmul_info, 64, 64);
    FIELD(rknn_matmul_info, M, 0, 0, 4);
    FIELD(rknn_matmul_info, K, 4, 4, 4);
    FIELD(rknn_matmul_info, N, 8, 8, 4);
    FIELD(rknn_matmul_info, type, 12, 12, 4);
    FIELD(rknn_matmul_info, B_layout, 16, 16, 2);
    FIELD(rknn_matmul_info, B_quant_type, 18, 18, 2);
    FIELD(rknn_matmul_info, AC_layout, 20, 20, 2);
    FIELD(rknn_matmul_info, AC_quant_type, 22, 22, 2);
    FIELD(rknn_matmul_info, iommu_domain_id, 24, 24, 4);
    FIELD(rknn_matmul_info, group_size, 28, 28, 2);
    FIELD(rknn_matmul_info, reserved, 30, 30, 34);
}

static void check_custom_op_structs(void)
{
    SIZE(rknn_gpu_op_context, 24, 12);
    FIELD(rknn_gpu_op_context, cl_context, 0, 0, PTR);
    FIELD(rknn_gpu_op_context, cl_command_queue, 8, 4, PTR);
    FIELD(rknn_gpu_op_context, cl_kernel, 16, 8, PTR);

    SIZE(rknn_custom_op_context, 48, 24);
    FIELD(rknn_custom_op_context, target, 0, 0, 4);
    FIELD(rknn_custom_op_context, internal_ctx, 8, 4, CTX);
    FIELD(rknn_custom_op_context, gpu_ctx, 16, 8, ABI(24, 12));
    FIELD(rknn_custom_op_context, priv_data, 40, 20, PTR);

    SIZE(rknn_custom_op_tensor, 416, 416);
    FIELD(rknn_custom_op_tensor, attr, 0, 0, 376);
    FIELD(rknn_custom_op_tensor, mem, 376, 376, 40);

    SIZE(rknn_custom_op_attr, 272, 268);
    FIELD(rknn_custom_op_attr, name, 0, 0, 256);
    FIELD(rknn_custom_op_attr, dtype, 256, 256, 4);
    FIELD(rknn_custom_op_attr, n_elems, 260, 260, 4);
    FIELD(rknn_custom_op_attr, data, 264, 264, PTR);

    SIZE(rknn_custom_op, 832, 816);
    FIELD(rknn_custom_op, version, 0, 0, 4);
    FIELD(rknn_custom_op, target, 4, 4, 4);
    FIELD(rknn_custom_op, op_type, 8, 8, 256);
    FIELD(rknn_custom_op, cl_kernel_name, 264, 264, 256);
    FIELD(rknn_custom_op, cl_kernel_source, 520, 520, PTR);
    FIELD(rknn_custom_op, cl_source_size, 528, 528, 8);
    FIELD(rknn_custom_op, cl_build_options, 536, 536, 256);
    FIELD(rknn_custom_op, init, 792, 792, PTR);
    FIELD(rknn_custom_op, prepare, 800, 796, PTR);
    FIELD(rknn_custom_op, compute, 808, 800, PTR);
    FIELD(rknn_custom_op, compute_native, 816, 804, PTR);
    FIELD(rknn_custom_op, destroy, 824, 808, PTR);
}

/* OpenRKNN's own extension (not in abi-facts): its layout is ours to keep. */
static void check_openrknn_ext_structs(void)
{
    SIZE(rknn_openrknn_shape_range, 208, 208);
    FIELD(rknn_openrknn_shape_range, index, 0, 0, 4);
    FIELD(rknn_openrknn_shape_range, shape_number, 4, 4, 4);
    FIELD(rknn_openrknn_shape_range, n_dims, 8, 8, 4);
    FIELD(rknn_openrknn_shape_range, fmt, 12, 12, 4);
    FIELD(rknn_openrknn_shape_range, min, 16, 16, 64);
    FIELD(rknn_openrknn_shape_range, max, 80, 80, 64);
    FIELD(rknn_openrknn_shape_range, step, 144, 144, 64);
}

static void check_string_helpers(void)
{
    static const char* const type_names[] = {"FP32",  "FP16",   "INT8",  "UINT8", "INT16", "UINT16",
                                             "INT32", "UINT32", "INT64", "BOOL",  "INT4",  "BF16"};
    static const char* const format_names[] = {"NCHW", "NHWC", "NC1HWC2", "UNDEFINED"};
    static const char* const qnt_names[] = {"NONE", "DFP", "AFFINE"};
    int i;
    for (i = 0; i < RKNN_TENSOR_TYPE_MAX; ++i) check_str("get_type_string", get_type_string((rknn_tensor_type)i), type_names[i]);
    check_str("get_type_string(MAX)", get_type_string(RKNN_TENSOR_TYPE_MAX), "UNKNOW");
    for (i = 0; i < RKNN_TENSOR_FORMAT_MAX; ++i)
        check_str("get_format_string", get_format_string((rknn_tensor_format)i), format_names[i]);
    check_str("get_format_string(MAX)", get_format_string(RKNN_TENSOR_FORMAT_MAX), "UNKNOW");
    for (i = 0; i < RKNN_TENSOR_QNT_MAX; ++i)
        check_str("get_qnt_type_string", get_qnt_type_string((rknn_tensor_qnt_type)i), qnt_names[i]);
    check_str("get_matmul_type_string", get_matmul_type_string(RKNN_INT8_MM_INT8_TO_INT32), "RKNN_INT8_MM_INT8_TO_INT32");
    check_str("get_matmul_type_string", get_matmul_type_string(RKNN_FLOAT16_MM_INT4_TO_BFLOAT16),
              "RKNN_FLOAT16_MM_INT4_TO_BFLOAT16");
    check_str("get_matmul_type_string(13)", get_matmul_type_string((rknn_matmul_type)13), "UNKNOW");
}

/* RKNN_CUSTOM_OP_EXPORT must be usable on a plugin's entry point. */
RKNN_CUSTOM_OP_EXPORT rknn_custom_op* abi_check_plugin_entry(void);
RKNN_CUSTOM_OP_EXPORT rknn_custom_op* abi_check_plugin_entry(void) { return NULL; }

int main(void)
{
    get_custom_op_func entry = abi_check_plugin_entry;
#ifdef ABI_UNSUPPORTED
    printf("SKIP: abi-facts.md has tables for LP64 and 32-bit ARM only\n");
    return 77;
#endif
    check_macros();
    check_enums();
    check_scalar_types();
    check_core_structs();
    check_matmul_structs();
    check_custom_op_structs();
    check_openrknn_ext_structs();
    check_string_helpers();
    check_eq("plugin entry callable", entry() == NULL, 1);
    printf("ABI check (%s, %s): %d checks, %d mismatches\n",
#if defined(__cplusplus)
           "C++",
#else
           "C99",
#endif
#if defined(__aarch64__)
           "aarch64",
#elif defined(__x86_64__)
           "x86-64",
#elif defined(__arm__)
           "armhf",
#else
           "other",
#endif
           g_checks, g_failures);
    return g_failures == 0 ? 0 : 1;
}
