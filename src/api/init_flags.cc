#include "api/init_flags.h"

namespace rknn::api {

Status validate_init_flags(uint32_t flag, const rknn_init_extend* extend) {
    if ((flag & ~kKnownInitFlags) != 0) {
        if ((flag & RKNN_MEM_FLAG_ALLOC_NO_CONTEXT) != 0) {
            return RKNN_INVALID_ARGUMENT(
                "flag 0x%x: RKNN_MEM_FLAG_ALLOC_NO_CONTEXT is a rknn_create_mem2 flag, not an init flag",
                flag);
        }
        return RKNN_INVALID_ARGUMENT("flag 0x%x has unknown bits 0x%x", flag, flag & ~kKnownInitFlags);
    }
    if ((flag & RKNN_FLAG_PRIOR_MEDIUM) && (flag & RKNN_FLAG_PRIOR_LOW)) {
        return RKNN_INVALID_ARGUMENT("flag 0x%x: PRIOR_MEDIUM and PRIOR_LOW are exclusive", flag);
    }
    if ((flag & RKNN_FLAG_SHARE_WEIGHT_MEM) && (extend == nullptr || extend->ctx == 0)) {
        return RKNN_INVALID_ARGUMENT("RKNN_FLAG_SHARE_WEIGHT_MEM needs extend->ctx set to the context "
                                     "whose weights are shared");
    }
    if ((flag & RKNN_FLAG_MODEL_BUFFER_ZERO_COPY) && extend == nullptr) {
        return RKNN_INVALID_ARGUMENT("RKNN_FLAG_MODEL_BUFFER_ZERO_COPY needs rknn_init_extend "
                                     "describing the model buffer");
    }
    if ((flag & RKNN_FLAG_SHARE_SRAM) && !(flag & RKNN_FLAG_ENABLE_SRAM)) {
        return RKNN_INVALID_ARGUMENT("RKNN_FLAG_SHARE_SRAM needs RKNN_FLAG_ENABLE_SRAM");
    }
    return Status::ok();
}

}  // namespace rknn::api
