#include "npu_harness.h"

#include <cstring>

namespace rknn::emutest {

namespace f = hw::field;
namespace r = hw::reg;

// ---- device --------------------------------------------------------------------

Device::Device(const hw::SocProfile& soc, int core_index)
    : soc_(soc), core_(std::make_unique<emulator::NpuCore>(soc, core_index, &port_, true)), core_index_(core_index) {}

void Device::use_core(int core_index) {
    core_ = std::make_unique<emulator::NpuCore>(soc_, core_index, &port_, true);
    core_index_ = core_index;
}

uint8_t* Device::put(uint64_t addr, const void* bytes, size_t size) {
    uint8_t* p = mem_.add(addr, size);
    if (p != nullptr && size > 0) std::memcpy(p, bytes, size);
    return p;
}

uint8_t* Device::zeros(uint64_t addr, size_t size) { return mem_.add(addr, size); }

uint8_t* Device::words(uint64_t addr, const std::vector<uint64_t>& stream) {
    return put(addr, stream.data(), stream.size() * 8);
}

emulator::ProgramResult Device::run(uint64_t addr, uint32_t first_body_words, uint32_t tasks) {
    emulator::NpuCore& c = *core_;
    c.mmio_write(r::PC_BASE_ADDRESS, 1);
    // As the vendor driver does on multi-core SoCs: the core index at bit 28.
    const uint32_t s_pointer = hw::s_pointer::kPingPong | (static_cast<uint32_t>(core_index_) << hw::s_pointer::kCoreIndexShift);
    c.mmio_write(r::CNA_S_POINTER, s_pointer);
    c.mmio_write(r::CORE_S_POINTER, s_pointer);
    c.mmio_write(r::PC_BASE_ADDRESS, static_cast<uint32_t>(addr));
    c.mmio_write(r::PC_REGISTER_AMOUNTS, hw::pc_data_amount(first_body_words, soc_.pc_amount_scale));
    c.mmio_write(r::PC_INTERRUPT_MASK, hw::irq::kDpu0 | hw::irq::kDpu1 | hw::irq::kPpu0 | hw::irq::kPpu1);
    c.mmio_write(r::PC_INTERRUPT_CLEAR, hw::irq::kClearAll);
    c.mmio_write(r::PC_TASK_CON, (0x6u << soc_.task_number_bits) | tasks);
    c.mmio_write(r::PC_TASK_DMA_BASE_ADDR, 0);
    const bool started = c.mmio_write(r::PC_OPERATION_ENABLE, 1);
    emulator::ProgramResult result;
    if (started) result = c.run();
    c.mmio_write(r::PC_OPERATION_ENABLE, 0);
    return result;
}

}  // namespace rknn::emutest
