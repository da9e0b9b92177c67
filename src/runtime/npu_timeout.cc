#include "runtime/npu_timeout.h"

#include <cstdlib>

namespace rknn::runtime {

uint32_t npu_timeout_ms(uint32_t default_ms) {
    const char* text = std::getenv("RKNN_NPU_TIMEOUT_MS");
    if (text == nullptr) return default_ms;
    const long value = std::strtol(text, nullptr, 10);
    return value > 0 && value <= 0x7fffffff ? static_cast<uint32_t>(value) : default_ms;
}

}  // namespace rknn::runtime
