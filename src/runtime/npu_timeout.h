// How long one NPU submit may take before the run fails with
// RKNN_ERR_TIMEOUT: RKNN_NPU_TIMEOUT_MS when it is a positive number, else the
// caller's default (20 s for models, 6 s for matmul). Read when a context is
// made, not per run.
#pragma once

#include <cstdint>

namespace rknn::runtime {

uint32_t npu_timeout_ms(uint32_t default_ms);

}  // namespace rknn::runtime
