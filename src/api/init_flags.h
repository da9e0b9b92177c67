// Validation of rknn_init's `flag` word and the extend struct it may require.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "rknn_api.h"

namespace rknn::api {

// Every bit rknn_init understands (RKNN_FLAG_PRIOR_* .. MODEL_BUFFER_ZERO_COPY).
constexpr uint32_t kKnownInitFlags = 0x0001ffff;

// Rejects unknown bits, combinations the spec forbids, and flags whose
// required `extend` fields are missing.
Status validate_init_flags(uint32_t flag, const rknn_init_extend* extend);

}  // namespace rknn::api
