/* A custom op plugin as users ship them (librkcst_*.so): one op, cstSigmoid
   on the CPU, returned by get_rknn_custom_op. It counts its callbacks in
   the node's priv_data to show the runtime keeps it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rknn_custom_op.h"

static int plugin_init(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs, uint32_t n_inputs,
                       rknn_custom_op_tensor* outputs, uint32_t n_outputs) {
    (void)inputs;
    (void)outputs;
    if (n_inputs != 1 || n_outputs != 1) return -1;
    op_ctx->priv_data = calloc(1, sizeof(int));
    return op_ctx->priv_data != NULL ? 0 : -1;
}

static int plugin_compute(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs, uint32_t n_inputs,
                          rknn_custom_op_tensor* outputs, uint32_t n_outputs) {
    (void)n_inputs;
    (void)n_outputs;
    const float* x = (const float*)((char*)inputs[0].mem.virt_addr + inputs[0].mem.offset);
    float* y = (float*)((char*)outputs[0].mem.virt_addr + outputs[0].mem.offset);
    for (uint32_t i = 0; i < outputs[0].attr.n_elems; ++i) y[i] = 1.0f / (1.0f + expf(-x[i]));
    ++*(int*)op_ctx->priv_data;
    return 0;
}

static int plugin_destroy(rknn_custom_op_context* op_ctx) {
    free(op_ctx->priv_data);
    op_ctx->priv_data = NULL;
    return 0;
}

RKNN_CUSTOM_OP_EXPORT rknn_custom_op* get_rknn_custom_op(void) {
    static rknn_custom_op op;
    memset(&op, 0, sizeof(op));
    op.version = 1;
    op.target = RKNN_TARGET_TYPE_CPU;
    strcpy(op.op_type, PLUGIN_OP_TYPE);
    op.init = plugin_init;
    op.compute = plugin_compute;
    op.destroy = plugin_destroy;
    return &op;
}
