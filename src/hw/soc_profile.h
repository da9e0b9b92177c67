// SoC profiles: everything that differs between RKNPU generations, as data.
// Code asks the profile ("how many cores", "which core masks run", "channels
// per atom for fp16") instead of testing the SoC name.
//
// Facts: spec/hw-facts.md 1.8 (driver configuration), 3.7 and 3.9 (layouts,
// on-chip buffer), 5 (per-SoC summary). Values marked unknown there are left
// at the RK3588 value and flagged `layout_verified = false`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hw/registers.h"

namespace rknn::hw {

// Register and layout generation of the NPU core. RK3588-class parts share
// the upstream register map; RK3566/RK3568 place the CORE registers one slot
// lower, add a CMAC block and use 8-byte atoms (docs/rk3568.md).
enum class NpuArch : uint8_t { kRk3588, kRk356x };

struct SocProfile {
    const char* name;              // "rk3588"
    NpuArch arch;
    const char* compatible;        // device-tree compatible of the NPU node
    int num_cores;
    uint32_t all_cores_mask;       // e.g. 0x7
    std::vector<uint32_t> runnable_core_masks;  // masks the driver commits (others hang)

    // Program controller / driver configuration (hw-facts 1.8).
    uint32_t pc_amount_scale;      // words per PC fetch unit
    int task_number_bits;          // width of TASK_CON.TASK_NUMBER
    uint32_t task_status_offset;   // PC register holding the completed-task count
    uint32_t max_tasks_per_kick;
    int dma_address_bits;          // 32 or 40
    bool multi_core_irqs;          // subcore_task[] is honoured

    // Identification values the mock kernel reports.
    uint32_t hw_version;           // RKNPU_GET_HW_VERSION
    uint64_t clock_hz;
    uint32_t voltage_uv;

    // Memories.
    uint64_t sram_bytes;           // system SRAM usable by the NPU (0 = none)
    uint64_t nbuf_bytes;           // on-chip NBUF (RK3562/RK3576)
    int cbuf_banks;
    uint32_t cbuf_bank_bytes;

    // Layout: bytes per atom and channels per atom (C2) in feature cubes,
    // by element size.
    int atom_bytes;
    int c2_int8;
    int c2_fp16;
    int c2_32bit;

    // Regcmd decoding: RK3588-style "block select matches offset >> 12".
    bool check_block_offset;
    bool layout_verified;          // register layout known to match our table

    uint32_t task_number_mask() const { return (1u << task_number_bits) - 1u; }
    bool core_mask_runs(uint32_t mask) const;
    // Channels per atom for a precision (int8 16, fp16 8, 32-bit 4 on RK3588).
    int atom_channels(Precision p) const;
};

// nullptr for an unknown name. Names are lower case: rk3588, rk3583, rk3576,
// rk3568, rk3566, rk3562, rv1106, rv1103.
const SocProfile* find_soc(std::string_view name);
const SocProfile& default_soc();  // rk3588
std::vector<std::string> soc_names();

// Whether a model converted for `model_target` runs on the NPU of `soc`: the
// same name, or chips that share an NPU and take the same models (rk3566 and
// rk3568, rk3588 and rk3588s, rv1103 and rv1106; runtime-spec 10.3; and rk3583,
// RK3588's NPU with fewer cores, takes rk3588 models). Any case.
bool runs_models_for(std::string_view soc, std::string_view model_target);

}  // namespace rknn::hw
