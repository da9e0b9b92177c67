/* ONNX CumSum as a CPU custom op: neither the NPU nor OpenRKNN's CPU kernels
   have it, so a model that needs it keeps it (rknn_convert --custom-op
   CumSum) and this plugin, librkcst_cumsum.so, supplies it. The running sum
   goes along the axis the node's second input gives (a constant, int64 or
   int32 as the model declares it), forwards or in reverse ("reverse"),
   with or without the current element ("exclusive"). The sum is kept in
   double, so that a long axis loses nothing to float rounding.

   The runtime loads it with RKNN_LOAD_CSTOP_PLUGINS=1 (rknn_benchmark, for
   instance, then runs such a model), and rknn_convert --custom-op-plugin
   calibrates through it. C99, against include/ only. */
#include <string.h>

#include "rknn_custom_op.h"

/* An int64 attribute of the node, or `fallback` when the node has none. */
static int64_t int_attr(rknn_custom_op_context* op_ctx, const char* name, int64_t fallback) {
    rknn_custom_op_attr attr;
    memset(&attr, 0, sizeof(attr));
    rknn_custom_op_get_op_attr(op_ctx, name, &attr);
    if (attr.n_elems != 1 || attr.dtype != RKNN_TENSOR_INT64 || attr.data == NULL) return fallback;
    return *(const int64_t*)attr.data;
}

/* The axis the second input holds, in [0, rank); -1 if it is not one. */
static int axis_of(const rknn_custom_op_tensor* axis, uint32_t rank) {
    const char* data = (const char*)axis->mem.virt_addr + axis->mem.offset;
    int64_t value;
    if (axis->attr.n_elems != 1 || axis->mem.virt_addr == NULL || axis->mem.size < sizeof(int32_t)) return -1;
    if (axis->attr.type == RKNN_TENSOR_INT64 && axis->mem.size >= sizeof(value)) {
        memcpy(&value, data, sizeof(value));
    } else if (axis->attr.type == RKNN_TENSOR_INT32) {
        int32_t narrow;
        memcpy(&narrow, data, sizeof(narrow));
        value = narrow;
    } else {
        return -1;
    }
    if (value < 0) value += rank;
    return value >= 0 && value < (int64_t)rank ? (int)value : -1;
}

static int cumsum_compute(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs, uint32_t n_inputs,
                          rknn_custom_op_tensor* outputs, uint32_t n_outputs) {
    const rknn_tensor_attr* shape = &inputs[0].attr;
    const float* in;
    float* out;
    uint64_t outer = 1, length, inner = 1, o, i, k;
    int axis;
    uint32_t d;
    const int exclusive = int_attr(op_ctx, "exclusive", 0) != 0, reverse = int_attr(op_ctx, "reverse", 0) != 0;
    if (n_inputs != 2 || n_outputs != 1 || shape->type != RKNN_TENSOR_FLOAT32 ||
        outputs[0].attr.type != RKNN_TENSOR_FLOAT32 || outputs[0].attr.n_elems != shape->n_elems)
        return -1;
    /* The runtime describes its tensors truthfully; a plugin still checks
       what it indexes with, as any host could call it. */
    if (shape->n_dims == 0 || shape->n_dims > RKNN_MAX_DIMS) return -1;
    axis = axis_of(&inputs[1], shape->n_dims);
    if (axis < 0) return -1;
    for (d = 0; d < (uint32_t)axis; ++d) outer *= shape->dims[d];
    length = shape->dims[axis];
    for (d = (uint32_t)axis + 1; d < shape->n_dims; ++d) inner *= shape->dims[d];
    if (outer * length * inner != shape->n_elems || inputs[0].mem.virt_addr == NULL ||
        outputs[0].mem.virt_addr == NULL || inputs[0].mem.size < shape->n_elems * sizeof(float) ||
        outputs[0].mem.size < shape->n_elems * sizeof(float))
        return -1;
    in = (const float*)((const char*)inputs[0].mem.virt_addr + inputs[0].mem.offset);
    out = (float*)((char*)outputs[0].mem.virt_addr + outputs[0].mem.offset);
    for (o = 0; o < outer; ++o) {
        for (i = 0; i < inner; ++i) {
            double sum = 0.0;
            for (k = 0; k < length; ++k) {
                const uint64_t step = reverse ? length - 1 - k : k;
                const uint64_t at = (o * length + step) * inner + i;
                if (exclusive) {
                    out[at] = (float)sum;
                    sum += in[at];
                } else {
                    sum += in[at];
                    out[at] = (float)sum;
                }
            }
        }
    }
    return 0;
}

RKNN_CUSTOM_OP_EXPORT rknn_custom_op* get_rknn_custom_op(void) {
    static rknn_custom_op op;
    memset(&op, 0, sizeof(op));
    op.version = 1;
    op.target = RKNN_TARGET_TYPE_CPU;
    strcpy(op.op_type, "CumSum");
    op.compute = cumsum_compute;
    return &op;
}
