#include "emulator/task_context.h"

#include <cinttypes>
#include <cstdarg>
#include <cstdio>

namespace rknn::emulator {

namespace {
std::string vformat(const char* fmt, va_list args) {
    char buf[512];
    std::vsnprintf(buf, sizeof(buf), fmt, args);
    return buf;
}
}  // namespace

const char* fault_kind_name(FaultKind kind) {
    switch (kind) {
    case FaultKind::kNone: return "none";
    case FaultKind::kDecode: return "malformed command stream";
    case FaultKind::kIommuRead: return "IOMMU fault on read";
    case FaultKind::kIommuWrite: return "IOMMU fault on write";
    case FaultKind::kUnsupported: return "unsupported configuration";
    case FaultKind::kBadProgram: return "inconsistent registers";
    }
    return "?";
}

StatusOr<uint8_t*> TaskContext::map(uint64_t addr, uint64_t len, bool for_write, const char* what) {
    uint8_t* p = dma.map(addr, len, for_write);
    if (p != nullptr) return p;
    if (fault == FaultKind::kNone) {
        fault = for_write ? FaultKind::kIommuWrite : FaultKind::kIommuRead;
        fault_address = addr;
    }
    char msg[200];
    std::snprintf(msg, sizeof(msg), "%s: %s of %" PRIu64 " bytes at 0x%" PRIx64 " is outside every mapped buffer",
                  what, for_write ? "write" : "read", len, addr);
    return Status(StatusCode::kInvalidArgument, msg);
}

Status TaskContext::bad_program(const char* fmt, ...) {
    va_list args;
    va_start(args, fmt);
    std::string msg = vformat(fmt, args);
    va_end(args);
    if (fault == FaultKind::kNone) fault = FaultKind::kBadProgram;
    return Status(StatusCode::kInvalidArgument, msg);
}

Status TaskContext::unsupported(const char* fmt, ...) {
    va_list args;
    va_start(args, fmt);
    std::string msg = vformat(fmt, args);
    va_end(args);
    if (fault == FaultKind::kNone) fault = FaultKind::kUnsupported;
    return Status(StatusCode::kUnimplemented, msg);
}

}  // namespace rknn::emulator
