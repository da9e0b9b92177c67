/*
 * OpenRKNN matmul API: C = A x B on the NPU without a model.
 *
 * Written for OpenRKNN from the ABI facts of the vendor runtime (V2.3.2 layout).
 *
 * Typical use:
 *
 *   rknn_matmul_info info = {0};
 *   info.M = 4; info.K = 64; info.N = 32; info.type = RKNN_INT8_MM_INT8_TO_INT32;
 *   rknn_matmul_io_attr io;
 *   rknn_matmul_ctx mm = 0;
 *   rknn_matmul_create(&mm, &info, &io);
 *   rknn_tensor_mem* a = rknn_create_mem(mm, io.A.size);   (likewise B and C)
 *   ...fill a->virt_addr...
 *   rknn_matmul_set_io_mem(mm, a, &io.A);                  (likewise B and C)
 *   rknn_matmul_run(mm);
 *   ...read c->virt_addr...
 *   rknn_destroy_mem(mm, a); ...; rknn_matmul_destroy(mm);
 *
 * The header compiles as C99 and as C++.
 */
#ifndef RKNN_MATMUL_API_H
#define RKNN_MATMUL_API_H

#include "rknn_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A matmul handle; the memory functions accept it wherever they take a context. */
typedef rknn_context rknn_matmul_ctx;

/* Named A-type _MM_ B-type _TO_ C-type. 13 and 14 are unused. */
typedef enum _rknn_matmul_type {
    RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32 = 1,
    RKNN_INT8_MM_INT8_TO_INT32 = 2,
    RKNN_INT8_MM_INT8_TO_INT8 = 3,
    RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT16 = 4,
    RKNN_FLOAT16_MM_INT8_TO_FLOAT32 = 5,
    RKNN_FLOAT16_MM_INT8_TO_FLOAT16 = 6,
    RKNN_FLOAT16_MM_INT4_TO_FLOAT32 = 7,
    RKNN_FLOAT16_MM_INT4_TO_FLOAT16 = 8,
    RKNN_INT8_MM_INT8_TO_FLOAT32 = 9,
    RKNN_INT4_MM_INT4_TO_INT16 = 10,
    RKNN_INT8_MM_INT4_TO_INT32 = 11,
    RKNN_FLOAT16_MM_INT4_TO_BFLOAT16 = 12,
    RKNN_INT8_MM_INT4_TO_FLOAT16 = 15
} rknn_matmul_type;

typedef enum _rknn_matmul_quant_type {
    RKNN_QUANT_TYPE_PER_LAYER_SYM = 0,
    RKNN_QUANT_TYPE_PER_LAYER_ASYM = 1,
    RKNN_QUANT_TYPE_PER_CHANNEL_SYM = 2,
    RKNN_QUANT_TYPE_PER_CHANNEL_ASYM = 3,
    RKNN_QUANT_TYPE_PER_GROUP_SYM = 4,
    RKNN_QUANT_TYPE_PER_GROUP_ASYM = 5
} rknn_matmul_quant_type;

typedef enum {
    RKNN_MM_LAYOUT_NORM = 0,     /* row-major A MxK, B KxN, C MxN */
    RKNN_MM_LAYOUT_NATIVE = 1,   /* the NPU's blocked layout */
    RKNN_MM_LAYOUT_TP_NORM = 2   /* B stored transposed (NxK); B only */
} rknn_matmul_layout;

typedef struct _rknn_matmul_tensor_attr {
    char name[RKNN_MAX_NAME_LEN];   /* "A", "B" or "C" identifies the matrix */
    uint32_t n_dims;
    uint32_t dims[RKNN_MAX_DIMS];
    uint32_t size;                  /* bytes */
    rknn_tensor_type type;
} rknn_matmul_tensor_attr;

typedef struct _rknn_matmul_io_attr {
    rknn_matmul_tensor_attr A;
    rknn_matmul_tensor_attr B;
    rknn_matmul_tensor_attr C;
} rknn_matmul_io_attr;

typedef struct _rknn_quant_params {
    char name[RKNN_MAX_NAME_LEN];   /* which matrix: A, B or C */
    float* scale;
    int32_t scale_len;
    int32_t* zp;
    int32_t zp_len;
} rknn_quant_params;

typedef struct _rknn_matmul_shape {
    int32_t M;
    int32_t K;
    int32_t N;
} rknn_matmul_shape;

typedef struct rknn_matmul_info_t {
    int32_t M;
    int32_t K;
    int32_t N;
    rknn_matmul_type type;
    int16_t B_layout;               /* rknn_matmul_layout */
    int16_t B_quant_type;           /* rknn_matmul_quant_type */
    int16_t AC_layout;              /* NORM or NATIVE */
    int16_t AC_quant_type;          /* per-layer kinds only */
    int32_t iommu_domain_id;        /* each domain is a 4 GiB address space */
    int16_t group_size;             /* per-group quantisation only */
    int8_t reserved[34];
} rknn_matmul_info;

int rknn_matmul_create(rknn_matmul_ctx* ctx, rknn_matmul_info* info, rknn_matmul_io_attr* io_attr);
/* info->M/K/N are ignored; one io_attr is written per shape. */
int rknn_matmul_create_dynamic_shape(rknn_matmul_ctx* ctx, rknn_matmul_info* info, int shape_num,
                                     rknn_matmul_shape dynamic_shapes[],
                                     rknn_matmul_io_attr io_attrs[]);
/* The 2.0.0-beta0 name of rknn_matmul_create_dynamic_shape (deprecated). */
int rknn_matmul_create_dyn_shape(rknn_matmul_ctx* ctx, rknn_matmul_info* info, int shape_num,
                                 rknn_matmul_shape dynamic_shapes[],
                                 rknn_matmul_io_attr io_attrs[]);
int rknn_matmul_set_io_mem(rknn_matmul_ctx ctx, rknn_tensor_mem* mem, rknn_matmul_tensor_attr* attr);
int rknn_matmul_set_core_mask(rknn_matmul_ctx context, rknn_core_mask core_mask);
int rknn_matmul_set_quant_params(rknn_matmul_ctx context, rknn_quant_params* params);
int rknn_matmul_get_quant_params(rknn_matmul_ctx ctx, rknn_quant_params* params, float* scale);
int rknn_matmul_set_dynamic_shape(rknn_matmul_ctx ctx, rknn_matmul_shape* shape);
int rknn_matmul_run(rknn_matmul_ctx ctx);
int rknn_matmul_destroy(rknn_matmul_ctx ctx);
/* Host-side helper: re-lays a KxN B matrix into the native layout for `info`. */
int rknn_B_normal_layout_to_native_layout(void* B_input, void* B_output, int K, int N,
                                          rknn_matmul_info* info);

static inline const char* get_matmul_type_string(rknn_matmul_type type)
{
    switch (type) {
    case RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32: return "RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32";
    case RKNN_INT8_MM_INT8_TO_INT32: return "RKNN_INT8_MM_INT8_TO_INT32";
    case RKNN_INT8_MM_INT8_TO_INT8: return "RKNN_INT8_MM_INT8_TO_INT8";
    case RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT16: return "RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT16";
    case RKNN_FLOAT16_MM_INT8_TO_FLOAT32: return "RKNN_FLOAT16_MM_INT8_TO_FLOAT32";
    case RKNN_FLOAT16_MM_INT8_TO_FLOAT16: return "RKNN_FLOAT16_MM_INT8_TO_FLOAT16";
    case RKNN_FLOAT16_MM_INT4_TO_FLOAT32: return "RKNN_FLOAT16_MM_INT4_TO_FLOAT32";
    case RKNN_FLOAT16_MM_INT4_TO_FLOAT16: return "RKNN_FLOAT16_MM_INT4_TO_FLOAT16";
    case RKNN_INT8_MM_INT8_TO_FLOAT32: return "RKNN_INT8_MM_INT8_TO_FLOAT32";
    case RKNN_INT4_MM_INT4_TO_INT16: return "RKNN_INT4_MM_INT4_TO_INT16";
    case RKNN_INT8_MM_INT4_TO_INT32: return "RKNN_INT8_MM_INT4_TO_INT32";
    case RKNN_FLOAT16_MM_INT4_TO_BFLOAT16: return "RKNN_FLOAT16_MM_INT4_TO_BFLOAT16";
    /* The vendor helper has no case for this one; naming it costs nothing. */
    case RKNN_INT8_MM_INT4_TO_FLOAT16: return "RKNN_INT8_MM_INT4_TO_FLOAT16";
    default: return "UNKNOW";
    }
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* RKNN_MATMUL_API_H */
