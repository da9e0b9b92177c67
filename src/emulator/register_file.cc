#include "emulator/register_file.h"

namespace rknn::emulator {

namespace sp = hw::s_pointer;

namespace {
constexpr size_t kWordsPerGroup = 0x10000 / 4;
constexpr uint16_t kSPointerOffset = 0x004;
}  // namespace

RegisterFile::RegisterFile() : values_(2 * kWordsPerGroup, 0) {}

void RegisterFile::reset() {
    pointers_ = {};
    std::fill(values_.begin(), values_.end(), 0u);
}

bool RegisterFile::grouped(hw::Block block) {
    switch (block) {
    case hw::Block::kCna:
    case hw::Block::kCmac:
    case hw::Block::kCore:
    case hw::Block::kDpu:
    case hw::Block::kDpuRdma:
    case hw::Block::kPpu:
    case hw::Block::kPpuRdma: return true;
    default: return false;
    }
}

size_t RegisterFile::slot(int group, uint16_t offset) {
    return static_cast<size_t>(group) * kWordsPerGroup + offset / 4;
}

void RegisterFile::write(uint16_t offset, uint32_t value) {
    const hw::Block block = hw::block_of(offset);
    const auto b = static_cast<size_t>(block);
    if (grouped(block) && (offset & 0xfff) == kSPointerOffset) {
        PointerState& s = pointers_[b];
        s.config = value & (sp::kPointerPpEn | sp::kExecuterPpEn | sp::kPointerPpMode);
        // The pointer bit selects a group only when ping-pong does not drive it:
        // streams rewrite 0xE every task without resetting the toggling state.
        if (!(value & sp::kPointerPpEn)) s.pointer = static_cast<int>(value & sp::kPointer);
        if (value & sp::kPointerPpClear) s.pointer = 0;
        if (value & sp::kExecuterPpClear) s.executer = 0;
        // Keep the raw value (core index bits included) readable in both groups.
        values_[slot(0, offset)] = value;
        values_[slot(1, offset)] = value;
        return;
    }
    const int group = grouped(block) ? pointers_[b].pointer : 0;
    values_[slot(group, offset)] = value;
}

uint32_t RegisterFile::exec(uint16_t offset) const {
    const hw::Block block = hw::block_of(offset);
    const int group = grouped(block) ? pointers_[static_cast<size_t>(block)].executer : 0;
    return values_[slot(group, offset)];
}

uint32_t RegisterFile::pending(uint16_t offset) const {
    const hw::Block block = hw::block_of(offset);
    const int group = grouped(block) ? pointers_[static_cast<size_t>(block)].pointer : 0;
    return values_[slot(group, offset)];
}

void RegisterFile::complete(hw::Block block) {
    if (!grouped(block)) return;
    PointerState& s = pointers_[static_cast<size_t>(block)];
    if (s.config & sp::kExecuterPpEn) s.executer ^= 1;
    if (s.config & sp::kPointerPpEn) s.pointer ^= 1;
}

int RegisterFile::executer_group(hw::Block block) const {
    return grouped(block) ? pointers_[static_cast<size_t>(block)].executer : 0;
}

uint32_t RegisterFile::s_pointer(hw::Block block) const {
    const uint16_t offset = static_cast<uint16_t>((static_cast<unsigned>(block) << 12) | kSPointerOffset);
    const PointerState& s = pointers_[static_cast<size_t>(block)];
    uint32_t v = values_[slot(0, offset)] & ~(sp::kPointer | sp::kExecuter);
    return v | static_cast<uint32_t>(s.pointer) | (static_cast<uint32_t>(s.executer) << 16);
}

}  // namespace rknn::emulator
