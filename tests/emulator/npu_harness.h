// Test support for the emulator: a device address space and a core driven the
// way the vendor kernel drives it. Tasks are built with the code generator's
// emitters (src/npu), whose parameters come from the int8 reference's own
// requantisation, so emulator and reference can be compared bit for bit.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cpu/host_tensor.h"
#include "cpu/int8/epilogue.h"
#include "emulator/dma_port.h"
#include "emulator/npu_core.h"
#include "hw/regcmd.h"
#include "hw/soc_profile.h"
#include "npu/conv_regs.h"
#include "npu/dpu_regs.h"
#include "npu/native_layout.h"
#include "npu/pool_regs.h"

namespace rknn::emutest {

using cpu::HostTensor;

// Layouts and weight packing live in the code generator.
using npu::align_up;
using npu::pack_conv_weights_fp16;
using npu::pack_conv_weights_int8;
using npu::pack_dw_weights_int8;
using npu::pack_fp16_cube;
using npu::pack_int8_cube;
using npu::unpack_fp16_cube;
using npu::unpack_fp32_cube;
using npu::unpack_int8_cube;

// ---- a core driven like the vendor driver does -----------------------------------

class Device {
public:
    explicit Device(const hw::SocProfile& soc = hw::default_soc(), int core_index = 0);

    emulator::FlatDmaSpace& memory() { return mem_; }
    emulator::NpuCore& core() { return *core_; }
    // Places bytes at `addr` (a fresh buffer) and returns its host copy.
    uint8_t* put(uint64_t addr, const void* bytes, size_t size);
    uint8_t* zeros(uint64_t addr, size_t size);
    uint8_t* words(uint64_t addr, const std::vector<uint64_t>& stream);
    // Programs the PC (hw-facts 1.6) for `tasks` tasks starting at `addr`
    // whose first stream has `first_body_words` words before its tail, and runs.
    emulator::ProgramResult run(uint64_t addr, uint32_t first_body_words, uint32_t tasks = 1);
    // Runs on another core of the SoC (a fresh core model, same memory).
    void use_core(int core_index);
    // What the memory reports as every buffer's DmaPort::content_version
    // (0, the default: unknown, as for FlatDmaSpace).
    void set_content_version(uint64_t version) { port_.version = version; }

private:
    // The flat space with a version the test sets.
    struct VersionedPort final : emulator::DmaPort {
        explicit VersionedPort(emulator::FlatDmaSpace* flat) : space(flat) {}
        uint8_t* map(uint64_t addr, uint64_t len, bool for_write) override { return space->map(addr, len, for_write); }
        uint64_t content_version(uint64_t /*addr*/) override { return version; }
        emulator::FlatDmaSpace* space;
        uint64_t version = 0;
    };

    const hw::SocProfile& soc_;
    emulator::FlatDmaSpace mem_;
    VersionedPort port_{&mem_};
    std::unique_ptr<emulator::NpuCore> core_;
    int core_index_ = 0;
};

// ---- task builders: the code generator's emitters ------------------------------

using npu::BufferRef;
using npu::bs_records;
using npu::ConvAddresses;
using npu::ConvGeometry;
using npu::ConvTile;
using npu::DpuTask;
using npu::emit_conv_fp16;
using npu::emit_conv_int8;
using npu::emit_dpu_task;
using npu::emit_lut_load;
using npu::emit_pool;
using npu::epilogue_regs;
using npu::EpilogueRegs;
using npu::EwRegs;
using npu::OutCvt;
using npu::PoolTask;
using npu::StageRegs;
using npu::TaskEmitter;

}  // namespace rknn::emutest
