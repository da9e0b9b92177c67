/* cstSigmoid on the CPU, the op of the SDK's YOLOX custom op demo:
   y = 1 / (1 + exp(-x)) over every element of its one input.

   get_rknn_custom_op() gives the op as the vendor's runtime takes it: the
   tensors arrive as float32 NCHW, converted by the runtime. Built as
   librkcst_sigmoid.so it is also a plugin, which rknn_convert
   --custom-op-plugin runs while calibrating.

   cst_sigmoid_own_dtype_init goes beyond the vendor (OpenRKNN only): an
   init that sets pass_through in its tensors' attrs takes them as the model
   holds them, with no conversion. In an int8 model the compute then maps
   each int8 code through a 256-entry table built from the two tensors'
   scales and zero points; float16 tensors come as float16. C99, against
   include/ only. */
#include <math.h>
#include <string.h>

#include "rknn_custom_op.h"

int cst_sigmoid_own_dtype_init(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs, uint32_t n_inputs,
                               rknn_custom_op_tensor* outputs, uint32_t n_outputs);

static void* data_of(const rknn_custom_op_tensor* t) { return (char*)t->mem.virt_addr + t->mem.offset; }

static float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

/* IEEE half <-> float, enough for this op: the half's value exactly, and
   the float rounded to the nearest half (ties to even). */
static float half_to_float(uint16_t h) {
    const uint32_t sign = (uint32_t)(h >> 15) << 31, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
    uint32_t bits;
    float f;
    if (exponent == 0) {
        f = ldexpf((float)mantissa, -24); /* zero and subnormals */
        return sign ? -f : f;
    }
    bits = sign | (exponent == 31 ? 0x7f800000u | (mantissa << 13) : ((exponent + 112) << 23) | (mantissa << 13));
    memcpy(&f, &bits, sizeof(f));
    return f;
}

static uint16_t float_to_half(float f) {
    uint32_t bits, sign, magnitude;
    memcpy(&bits, &f, sizeof(bits));
    sign = (bits >> 16) & 0x8000u;
    magnitude = bits & 0x7fffffffu;
    if (magnitude > 0x7f800000u) return (uint16_t)(sign | 0x7e00u); /* NaN */
    if (magnitude >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds past 65504: infinity */
    if (magnitude < 0x38800000u) {                                     /* below 2^-14: a subnormal half */
        const float scaled = ldexpf(fabsf(f), 24);                     /* in units of 2^-24, exact */
        return (uint16_t)(sign | (uint32_t)nearbyintf(scaled));
    }
    {
        const uint32_t rounded = magnitude + 0xfffu + ((magnitude >> 13) & 1u); /* to nearest, ties to even */
        return (uint16_t)(sign | ((rounded - 0x38000000u) >> 13));
    }
}

static int sigmoid_compute(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs, uint32_t n_inputs,
                           rknn_custom_op_tensor* outputs, uint32_t n_outputs) {
    const rknn_tensor_attr* in = &inputs[0].attr;
    const rknn_tensor_attr* out = &outputs[0].attr;
    uint32_t i;
    (void)op_ctx;
    if (n_inputs != 1 || n_outputs != 1 || in->n_elems != out->n_elems || in->type != out->type) return -1;
    if (in->type == RKNN_TENSOR_FLOAT32) {
        const float* x = (const float*)data_of(&inputs[0]);
        float* y = (float*)data_of(&outputs[0]);
        if (inputs[0].mem.size < in->n_elems * 4 || outputs[0].mem.size < out->n_elems * 4) return -1;
        for (i = 0; i < in->n_elems; ++i) y[i] = sigmoid(x[i]);
        return 0;
    }
    if (in->type == RKNN_TENSOR_FLOAT16) {
        const uint16_t* x = (const uint16_t*)data_of(&inputs[0]);
        uint16_t* y = (uint16_t*)data_of(&outputs[0]);
        if (inputs[0].mem.size < in->n_elems * 2 || outputs[0].mem.size < out->n_elems * 2) return -1;
        for (i = 0; i < in->n_elems; ++i) y[i] = float_to_half(sigmoid(half_to_float(x[i])));
        return 0;
    }
    if (in->type == RKNN_TENSOR_INT8 && in->qnt_type == RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC &&
        out->qnt_type == RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC && out->scale > 0.0f) {
        /* Every code's sigmoid, requantised: one table lookup per element. */
        const int8_t* x = (const int8_t*)data_of(&inputs[0]);
        int8_t* y = (int8_t*)data_of(&outputs[0]);
        int8_t table[256];
        int code;
        if (inputs[0].mem.size < in->n_elems || outputs[0].mem.size < out->n_elems) return -1;
        for (code = -128; code < 128; ++code) {
            /* As the runtime quantises a float32 result: the quotient in double. */
            const double q = nearbyint((double)sigmoid((float)((double)code - in->zp) * in->scale) / out->scale) + out->zp;
            table[code + 128] = (int8_t)(q < -128.0 ? -128 : q > 127.0 ? 127 : (int)q);
        }
        for (i = 0; i < in->n_elems; ++i) y[i] = table[x[i] + 128];
        return 0;
    }
    return -1; /* a dtype this op does not take */
}

int cst_sigmoid_own_dtype_init(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs, uint32_t n_inputs,
                               rknn_custom_op_tensor* outputs, uint32_t n_outputs) {
    (void)op_ctx;
    if (n_inputs != 1 || n_outputs != 1) return -1;
    inputs[0].attr.pass_through = 1;
    outputs[0].attr.pass_through = 1;
    return 0;
}

RKNN_CUSTOM_OP_EXPORT rknn_custom_op* get_rknn_custom_op(void) {
    static rknn_custom_op op;
    memset(&op, 0, sizeof(op));
    op.version = 1;
    op.target = RKNN_TARGET_TYPE_CPU;
    strcpy(op.op_type, "cstSigmoid");
    op.compute = sigmoid_compute;
    return &op;
}
