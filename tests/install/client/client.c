/* A C client built against the *installed* OpenRKNN package, as a board
 * application would be: it includes the public headers, links librknnrt.so and
 * checks a few behaviours that need no model. */
#include <stdio.h>
#include <string.h>

#include "rknn_api.h"
#include "rknn_custom_op.h"
#include "rknn_matmul_api.h"

int main(void)
{
    rknn_input_output_num io;
    rknn_context ctx = 0;
    int failures = 0;
    memset(&io, 0, sizeof(io));
    if (rknn_query(ctx, RKNN_QUERY_IN_OUT_NUM, &io, sizeof(io)) != RKNN_ERR_CTX_INVALID) ++failures;
    if (rknn_destroy((rknn_context)0x1234567) != RKNN_ERR_CTX_INVALID) ++failures;
    if (rknn_matmul_run((rknn_matmul_ctx)42) != RKNN_ERR_CTX_INVALID) ++failures;
    if (rknn_create_mem(0, 64) != NULL) ++failures;
    if (strcmp(get_type_string(RKNN_TENSOR_INT8), "INT8") != 0) ++failures;
    if (strcmp(get_matmul_type_string(RKNN_INT8_MM_INT8_TO_INT32), "RKNN_INT8_MM_INT8_TO_INT32") != 0) ++failures;
    printf("installed-package client: %s\n", failures == 0 ? "ok" : "FAILED");
    return failures == 0 ? 0 : 1;
}
