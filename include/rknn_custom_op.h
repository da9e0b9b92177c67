/*
 * OpenRKNN custom operators: user-written CPU or OpenCL kernels for op types
 * the model keeps as custom ops.
 *
 * Written for OpenRKNN from the ABI facts of the vendor runtime (V2.3.2 layout).
 *
 * Typical use (after rknn_init, before the first rknn_run):
 *
 *   static int my_compute(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* ins,
 *                         uint32_t n_in, rknn_custom_op_tensor* outs, uint32_t n_out);
 *   rknn_custom_op op;
 *   memset(&op, 0, sizeof(op));
 *   op.version = 1;
 *   op.target = RKNN_TARGET_TYPE_CPU;
 *   strcpy(op.op_type, "cstSigmoid");
 *   op.compute = my_compute;          (the only callback that is required)
 *   rknn_register_custom_ops(ctx, &op, 1);
 *
 * A plugin library (librkcst_<name>.so) exports `get_rknn_custom_op`, whose
 * type is get_custom_op_func. The header compiles as C99 and as C++.
 */
#ifndef RKNN_CUSTOM_OP_H
#define RKNN_CUSTOM_OP_H

#include "rknn_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An init callback returns this to ask for the runtime's own kernel instead. */
#define RKNN_WARNING_SKIP_CUSTOM_OP_COMPUTE -14

#define RKNN_CUSTOM_OP_MAX_STR_LEN   64
#define RKNN_CUSTOM_OP_MAX_VALUE_LEN 32
#define RKNN_CUSTOM_OP_EXPORT __attribute__((visibility("default")))

/* Plugin discovery convention: file names start with this prefix. */
#define RKNN_CSTOP_PLUGIN_PREFIX "librkcst_"

typedef enum _rknn_target_type {
    RKNN_TARGET_TYPE_CPU = 1,
    RKNN_TARGET_TYPE_GPU = 2,
    RKNN_TARGET_TYPE_MAX
} rknn_target_type;

/* The OpenCL objects of a GPU op, as void* so that the header needs no CL headers. */
typedef struct _rknn_gpu_op_context {
    void* cl_context;
    void* cl_command_queue;
    void* cl_kernel;
} rknn_gpu_op_context;

/* ("interal" is the ABI's own spelling.) */
#if defined(__arm__)
typedef uint32_t rknn_custom_op_interal_context;
#else
typedef uint64_t rknn_custom_op_interal_context;
#endif

typedef struct _rknn_custom_op_context {
    rknn_target_type target;
    rknn_custom_op_interal_context internal_ctx;
    rknn_gpu_op_context gpu_ctx;
    void* priv_data;                 /* belongs to the plugin */
} rknn_custom_op_context;

typedef struct _rknn_custom_op_tensor {
    rknn_tensor_attr attr;
    rknn_tensor_mem mem;
} rknn_custom_op_tensor;

typedef struct _rknn_custom_op_attr {
    char name[RKNN_MAX_NAME_LEN];
    rknn_tensor_type dtype;
    uint32_t n_elems;
    void* data;                      /* owned by the runtime */
} rknn_custom_op_attr;

typedef struct _rknn_custom_op {
    uint32_t version;
    rknn_target_type target;
    char op_type[RKNN_MAX_NAME_LEN];
    char cl_kernel_name[RKNN_MAX_NAME_LEN];
    char* cl_kernel_source;          /* source text if cl_source_size > 0, else a file path */
    uint64_t cl_source_size;
    char cl_build_options[RKNN_MAX_NAME_LEN];
    int (*init)(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs, uint32_t n_inputs,
                rknn_custom_op_tensor* outputs, uint32_t n_outputs);
    int (*prepare)(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs,
                   uint32_t n_inputs, rknn_custom_op_tensor* outputs, uint32_t n_outputs);
    int (*compute)(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs,
                   uint32_t n_inputs, rknn_custom_op_tensor* outputs, uint32_t n_outputs);
    int (*compute_native)(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs,
                          uint32_t n_inputs, rknn_custom_op_tensor* outputs, uint32_t n_outputs);
    int (*destroy)(rknn_custom_op_context* op_ctx);
} rknn_custom_op;

/* The entry point a plugin exports as `get_rknn_custom_op`. */
typedef rknn_custom_op* (*get_custom_op_func)(void);

int rknn_register_custom_ops(rknn_context ctx, rknn_custom_op* op, uint32_t custom_op_num);
void rknn_custom_op_get_op_attr(rknn_custom_op_context* op_ctx, const char* attr_name,
                                rknn_custom_op_attr* op_attr);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* RKNN_CUSTOM_OP_H */
