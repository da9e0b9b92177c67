/* Calls with enum values no enumerator names, made from C, where converting
 * any int to an enum type is defined: what a C client may pass. (In C++ the
 * value would be out of the enum's range, and loading it undefined.) */
#include "c_callers.h"

int query_with_raw_command(rknn_context context, int cmd, void* info, uint32_t size) {
    return rknn_query(context, (rknn_query_cmd)cmd, info, size);
}

int mem_sync_with_raw_mode(rknn_context context, rknn_tensor_mem* mem, int mode) {
    return rknn_mem_sync(context, mem, (rknn_mem_sync_mode)mode);
}
