/* A custom op plugin whose op reads a node attribute: cstScale, y = x * alpha,
   with alpha from rknn_custom_op_get_op_attr (the symbol comes from the
   process that loads the plugin: the runtime, or rknn_convert). */
#include <string.h>

#include "rknn_custom_op.h"

static int scale_compute(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs, uint32_t n_inputs,
                         rknn_custom_op_tensor* outputs, uint32_t n_outputs) {
    rknn_custom_op_attr alpha;
    (void)n_inputs;
    (void)n_outputs;
    rknn_custom_op_get_op_attr(op_ctx, "alpha", &alpha);
    if (alpha.n_elems != 1 || alpha.dtype != RKNN_TENSOR_FLOAT32) return -1;
    const float a = *(const float*)alpha.data;
    const float* x = (const float*)((char*)inputs[0].mem.virt_addr + inputs[0].mem.offset);
    float* y = (float*)((char*)outputs[0].mem.virt_addr + outputs[0].mem.offset);
    for (uint32_t i = 0; i < outputs[0].attr.n_elems; ++i) y[i] = x[i] * a;
    return 0;
}

RKNN_CUSTOM_OP_EXPORT rknn_custom_op* get_rknn_custom_op(void) {
    static rknn_custom_op op;
    memset(&op, 0, sizeof(op));
    op.version = 1;
    op.target = RKNN_TARGET_TYPE_CPU;
    strcpy(op.op_type, "cstScale");
    op.compute = scale_compute;
    return &op;
}
