/* C callers for the misuse tests (c_callers.c). */
#pragma once

#include "rknn_api.h"

#ifdef __cplusplus
extern "C" {
#endif

int query_with_raw_command(rknn_context context, int cmd, void* info, uint32_t size);
int mem_sync_with_raw_mode(rknn_context context, rknn_tensor_mem* mem, int mode);

#ifdef __cplusplus
}
#endif
