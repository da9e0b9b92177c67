// What an executing unit sees while it runs one task: the registers (executer
// groups), device memory through the DMA port, the LUT, and a place to record
// the first fault.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "emulator/dma_port.h"
#include "emulator/lut.h"
#include "emulator/register_file.h"
#include "hw/soc_profile.h"

namespace rknn::emulator {

enum class FaultKind { kNone, kDecode, kIommuRead, kIommuWrite, kUnsupported, kBadProgram };
const char* fault_kind_name(FaultKind kind);

struct TaskContext {
    const hw::SocProfile& soc;
    const RegisterFile& regs;
    DmaPort& dma;
    const LutTables& lut;
    bool strict = true;

    FaultKind fault = FaultKind::kNone;
    uint64_t fault_address = 0;

    // Maps [addr, addr + len) or records an IOMMU fault and returns an error
    // naming `what` (e.g. "CNA feature data").
    StatusOr<uint8_t*> map(uint64_t addr, uint64_t len, bool for_write, const char* what);
    // Records a programming error (bad or inconsistent registers).
    Status bad_program(const char* fmt, ...) __attribute__((format(printf, 2, 3)));
    // Records a feature the model does not implement.
    Status unsupported(const char* fmt, ...) __attribute__((format(printf, 2, 3)));
};

}  // namespace rknn::emulator
