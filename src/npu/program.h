// A generated NPU program: the regcmd words of every task, grouped per core
// (the per-core task ranges a submit takes), with the relocations that turn
// buffer offsets into device addresses. Generated once (at rknn_init), linked
// whenever its buffers are placed or move.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "base/status.h"
#include "hw/soc_profile.h"
#include "npu/task_emitter.h"

namespace rknn::npu {

constexpr int kMaxProgramCores = 3;
// Task streams start on 128-byte boundaries, as the vendor runtime places them.
constexpr uint32_t kTaskAlignWords = 16;

// The lowest core a mask selects (core 0 for mask 0: let the kernel choose).
inline int first_core(uint32_t core_mask) {
    for (int c = 0; c < kMaxProgramCores; ++c)
        if (core_mask & (1u << c)) return c;
    return 0;
}

struct ProgramTask {
    uint32_t first_word = 0;   // index of the task's first word in Program::words
    uint32_t body_words = 0;   // register words before the 4-word tail
    uint32_t enable_mask = 0;  // op-enable bits (0x1d conv, 0x18 DPU, 0x60 PPU)
    uint32_t int_mask = 0;     // interrupt bits raised at its end
    int core = 0;              // physical core it runs on
};

struct CoreTaskRange {
    uint32_t start = 0;
    uint32_t count = 0;
};

struct Program {
    std::vector<uint64_t> words;         // tails hold no links until link()
    std::vector<ProgramTask> tasks;      // grouped by core, in core order
    std::array<CoreTaskRange, kMaxProgramCores> cores{};
    std::vector<Relocation> relocations; // word indices into `words`
    uint32_t core_mask = 0;              // cores with tasks (bit per core)
    uint32_t pc_amount_scale = 1;        // the SoC's words per PC fetch unit

    size_t bytes() const { return words.size() * sizeof(uint64_t); }
    // The stream as the NPU reads it when placed at `stream_base`: every
    // relocation resolved against `buffer_bases` (indexed by buffer id) and each
    // task's tail linked to the next task of its core. Fails when an address
    // does not fit the 32-bit registers or a buffer id has no base.
    StatusOr<std::vector<uint64_t>> link(uint64_t stream_base, const std::vector<uint64_t>& buffer_bases) const;
};

// Collects tasks per core and lays them out.
class ProgramBuilder {
public:
    explicit ProgramBuilder(const hw::SocProfile& soc) : soc_(soc) {}
    // Adds a task (its register words, without a tail) to `core`'s list.
    Status add(int core, const TaskEmitter& task, uint32_t enable_mask, uint32_t int_mask);
    Program finish() const;
    size_t task_count() const;

private:
    struct Pending {
        std::vector<uint64_t> words;
        std::vector<Relocation> relocations;
        uint32_t enable_mask, int_mask;
    };
    const hw::SocProfile& soc_;
    std::array<std::vector<Pending>, kMaxProgramCores> per_core_;
};

}  // namespace rknn::npu
