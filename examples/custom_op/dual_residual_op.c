/* The cstDualResidual custom op on the CPU: two inputs, two outputs,
   out0 = in0 * alpha - in1 and out1 = in1 * alpha - in0, with alpha the
   node's float attribute. One source serves three uses: the demo program
   compiles it in and registers get_rknn_custom_op()'s op itself; built as
   librkcst_dual_residual.so it is a plugin, which rknn_convert
   --custom-op-plugin runs while calibrating and which the runtime loads
   with RKNN_LOAD_CSTOP_PLUGINS=1 (for rknn_benchmark, say). */
#include <string.h>

#include "rknn_custom_op.h"

static int dual_residual_compute(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs, uint32_t n_inputs,
                                 rknn_custom_op_tensor* outputs, uint32_t n_outputs) {
    rknn_custom_op_attr alpha;
    if (n_inputs != 2 || n_outputs != 2) return -1;
    rknn_custom_op_get_op_attr(op_ctx, "alpha", &alpha);
    if (alpha.n_elems != 1 || alpha.dtype != RKNN_TENSOR_FLOAT32) return -1;
    const float a = *(const float*)alpha.data;
    const float* in0 = (const float*)((char*)inputs[0].mem.virt_addr + inputs[0].mem.offset);
    const float* in1 = (const float*)((char*)inputs[1].mem.virt_addr + inputs[1].mem.offset);
    float* out0 = (float*)((char*)outputs[0].mem.virt_addr + outputs[0].mem.offset);
    float* out1 = (float*)((char*)outputs[1].mem.virt_addr + outputs[1].mem.offset);
    const uint32_t n = outputs[0].attr.n_elems;
    if (inputs[0].attr.n_elems != n || inputs[1].attr.n_elems != n || outputs[1].attr.n_elems != n) return -1;
    for (uint32_t i = 0; i < n; ++i) {
        out0[i] = in0[i] * a - in1[i];
        out1[i] = in1[i] * a - in0[i];
    }
    return 0;
}

RKNN_CUSTOM_OP_EXPORT rknn_custom_op* get_rknn_custom_op(void) {
    static rknn_custom_op op;
    memset(&op, 0, sizeof(op));
    op.version = 1;
    op.target = RKNN_TARGET_TYPE_CPU;
    strcpy(op.op_type, "cstDualResidual");
    op.compute = dual_residual_compute;
    return &op;
}
