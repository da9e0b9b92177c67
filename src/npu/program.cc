#include "npu/program.h"

#include "hw/regcmd.h"

namespace rknn::npu {

namespace {

// Replaces the value field (bits 47..16) of a register-write word.
uint64_t with_value(uint64_t word, uint32_t value) {
    return (word & ~(uint64_t{0xffffffff} << 16)) | (static_cast<uint64_t>(value) << 16);
}

}  // namespace

Status ProgramBuilder::add(int core, const TaskEmitter& task, uint32_t enable_mask, uint32_t int_mask) {
    if (core < 0 || core >= kMaxProgramCores) return RKNN_INVALID_ARGUMENT("core index %d out of range", core);
    const Status built = task.finish();
    if (!built.is_ok()) return built;
    per_core_[static_cast<size_t>(core)].push_back({task.words(), task.relocations(), enable_mask, int_mask});
    return Status::ok();
}

size_t ProgramBuilder::task_count() const {
    size_t n = 0;
    for (const auto& list : per_core_) n += list.size();
    return n;
}

Program ProgramBuilder::finish() const {
    Program p;
    p.pc_amount_scale = soc_.pc_amount_scale;
    for (int core = 0; core < kMaxProgramCores; ++core) {
        const auto& list = per_core_[static_cast<size_t>(core)];
        p.cores[static_cast<size_t>(core)] = {static_cast<uint32_t>(p.tasks.size()), static_cast<uint32_t>(list.size())};
        if (!list.empty()) p.core_mask |= 1u << core;
        for (const Pending& t : list) {
            ProgramTask task;
            task.first_word = static_cast<uint32_t>(p.words.size());
            task.body_words = static_cast<uint32_t>(t.words.size());
            task.enable_mask = t.enable_mask;
            task.int_mask = t.int_mask;
            task.core = core;
            p.words.insert(p.words.end(), t.words.begin(), t.words.end());
            for (Relocation r : t.relocations) {
                r.word += task.first_word;
                p.relocations.push_back(r);
            }
            // Tail placeholder (link() fills the link), then padding to the next task.
            p.words.push_back(hw::encode_word(hw::kOpNop, 0, 0));
            p.words.push_back(hw::encode_write(hw::reg::PC_REGISTER_AMOUNTS, 0));
            p.words.push_back(hw::encode_arm());
            p.words.push_back(hw::encode_op_enable(t.enable_mask));
            while (p.words.size() % kTaskAlignWords != 0) p.words.push_back(hw::encode_word(hw::kOpNop, 0, 0));
            p.tasks.push_back(task);
        }
    }
    return p;
}

StatusOr<std::vector<uint64_t>> Program::link(uint64_t stream_base, const std::vector<uint64_t>& buffer_bases) const {
    std::vector<uint64_t> out = words;
    for (const Relocation& r : relocations) {
        if (r.buffer < 0 || static_cast<size_t>(r.buffer) >= buffer_bases.size())
            return RKNN_INVALID_ARGUMENT("relocation at word %u names buffer %d, which has no address", r.word, r.buffer);
        const uint64_t addr = buffer_bases[static_cast<size_t>(r.buffer)] + r.offset;
        if (addr > 0xffffffffull)
            return make_status(StatusCode::kResourceExhausted, "device address 0x%llx (buffer %d + %llu) does not fit a 32-bit register",
                                        static_cast<unsigned long long>(addr), r.buffer,
                                        static_cast<unsigned long long>(r.offset));
        out[r.word] = with_value(out[r.word], static_cast<uint32_t>(addr));
    }
    for (int core = 0; core < kMaxProgramCores; ++core) {
        const CoreTaskRange range = cores[static_cast<size_t>(core)];
        for (uint32_t i = 0; i + 1 < range.count; ++i) {
            const ProgramTask& t = tasks[range.start + i];
            const ProgramTask& next = tasks[range.start + i + 1];
            const uint64_t next_addr = stream_base + uint64_t{next.first_word} * 8;
            if (next_addr > 0xffffffffull) return make_status(StatusCode::kResourceExhausted, "regcmd stream above 4 GiB");
            const uint32_t tail = t.first_word + t.body_words;
            out[tail] = hw::encode_write(hw::reg::PC_BASE_ADDRESS, static_cast<uint32_t>(next_addr));
            // The amount the PC fetches for the next task (hw-facts 3.3).
            out[tail + 1] = hw::encode_write(hw::reg::PC_REGISTER_AMOUNTS,
                                             hw::pc_data_amount(next.body_words, pc_amount_scale));
        }
    }
    return out;
}

}  // namespace rknn::npu
