#include "hw/soc_profile.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace rknn::hw {

namespace {

constexpr uint32_t kRk3588HwVersion = 0x46495245;  // "FIRE" (hw-facts 1.4, confirmed)

SocProfile make_rk3588() {
    SocProfile p{};
    p.name = "rk3588";
    p.arch = NpuArch::kRk3588;
    p.compatible = "rockchip,rk3588-rknpu";
    p.num_cores = 3;
    p.all_cores_mask = 0x7;
    p.runnable_core_masks = {0x1, 0x2, 0x4, 0x3, 0x7};
    p.pc_amount_scale = 2;
    p.task_number_bits = 12;
    p.task_status_offset = 0x3c;
    p.max_tasks_per_kick = 4095;
    p.dma_address_bits = 40;
    p.multi_core_irqs = true;
    p.hw_version = kRk3588HwVersion;
    p.clock_hz = 1000000000;
    p.voltage_uv = 850000;
    p.sram_bytes = 956 * 1024;
    p.nbuf_bytes = 0;
    p.cbuf_banks = 12;
    p.cbuf_bank_bytes = 32 * 1024;
    p.atom_bytes = 16;
    p.c2_int8 = 16;
    p.c2_fp16 = 8;
    p.c2_32bit = 4;
    p.check_block_offset = true;
    p.layout_verified = true;
    return p;
}

std::vector<SocProfile> build_profiles() {
    std::vector<SocProfile> all;
    all.push_back(make_rk3588());

    SocProfile rk3583 = make_rk3588();  // RK3588 with core 2 fused off
    rk3583.name = "rk3583";
    rk3583.num_cores = 2;
    rk3583.all_cores_mask = 0x3;
    rk3583.runnable_core_masks = {0x1, 0x2, 0x3};
    all.push_back(rk3583);

    SocProfile rk3568 = make_rk3588();
    rk3568.name = "rk3568";
    rk3568.compatible = "rockchip,rk3568-rknpu";
    rk3568.num_cores = 1;
    rk3568.all_cores_mask = 0x1;
    rk3568.runnable_core_masks = {0x1};
    rk3568.pc_amount_scale = 1;
    rk3568.dma_address_bits = 32;
    rk3568.multi_core_irqs = false;
    rk3568.sram_bytes = 0;
    rk3568.arch = NpuArch::kRk356x;
    rk3568.cbuf_banks = 8;  // 8 x 32 KiB, 32-byte entries [3P iav]
    rk3568.atom_bytes = 8;
    rk3568.c2_int8 = 8;   // [3P iav]
    rk3568.c2_fp16 = 4;
    rk3568.c2_32bit = 2;
    rk3568.layout_verified = false;  // CORE/CMAC register slots differ
    all.push_back(rk3568);
    SocProfile rk3566 = rk3568;
    rk3566.name = "rk3566";
    all.push_back(rk3566);

    SocProfile rk3576 = make_rk3588();
    rk3576.name = "rk3576";
    rk3576.compatible = "rockchip,rk3576-rknpu";
    rk3576.num_cores = 2;
    rk3576.all_cores_mask = 0x3;
    rk3576.runnable_core_masks = {0x1, 0x2, 0x3};
    rk3576.task_number_bits = 16;
    rk3576.task_status_offset = 0x48;
    rk3576.max_tasks_per_kick = 65535;
    rk3576.sram_bytes = 0;
    rk3576.nbuf_bytes = 1024 * 1024;
    rk3576.layout_verified = false;  // re-packed CNA/CORE/DPU offsets [3P]
    all.push_back(rk3576);

    SocProfile rk3562 = make_rk3588();
    rk3562.name = "rk3562";
    rk3562.compatible = "rockchip,rk3562-rknpu";
    rk3562.num_cores = 1;
    rk3562.all_cores_mask = 0x1;
    rk3562.runnable_core_masks = {0x1};
    rk3562.task_number_bits = 16;
    rk3562.task_status_offset = 0x48;
    rk3562.max_tasks_per_kick = 65535;
    rk3562.multi_core_irqs = false;
    rk3562.sram_bytes = 0;
    rk3562.nbuf_bytes = 256 * 1024;
    rk3562.layout_verified = false;
    all.push_back(rk3562);

    SocProfile rv1106 = make_rk3588();
    rv1106.name = "rv1106";
    rv1106.compatible = "rockchip,rv1106-rknpu";
    rv1106.num_cores = 1;
    rv1106.all_cores_mask = 0x1;
    rv1106.runnable_core_masks = {0x1};
    rv1106.task_number_bits = 16;
    rv1106.max_tasks_per_kick = 65535;
    rv1106.dma_address_bits = 32;
    rv1106.multi_core_irqs = false;
    rv1106.sram_bytes = 0;
    rv1106.check_block_offset = false;  // its pool engine uses tag 0x0401 at 0x8028 (hw-facts 6.4)
    rv1106.layout_verified = false;
    all.push_back(rv1106);
    SocProfile rv1103 = rv1106;
    rv1103.name = "rv1103";
    all.push_back(rv1103);
    return all;
}

const std::vector<SocProfile>& profiles() {
    static const std::vector<SocProfile> all = build_profiles();
    return all;
}

}  // namespace

bool SocProfile::core_mask_runs(uint32_t mask) const {
    return std::find(runnable_core_masks.begin(), runnable_core_masks.end(), mask) != runnable_core_masks.end();
}

int SocProfile::atom_channels(Precision p) const {
    switch (precision_bytes(p)) {
    case 1: return c2_int8;
    case 2: return c2_fp16;
    default: return c2_32bit;
    }
}

bool runs_models_for(std::string_view soc, std::string_view model_target) {
    // Each chip's class: the name its NPU's models are converted for.
    const auto model_class = [](std::string_view name) {
        std::string lower(name);
        for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (lower == "rk3566") return std::string("rk3568");
        // RK3583 has RK3588's NPU with fewer cores; no converter targets it.
        if (lower == "rk3588s" || lower == "rk3583") return std::string("rk3588");
        if (lower == "rv1103") return std::string("rv1106");
        return lower;
    };
    return model_class(soc) == model_class(model_target);
}

const SocProfile* find_soc(std::string_view name) {
    for (const auto& p : profiles()) {
        if (name == p.name) return &p;
    }
    return nullptr;
}

const SocProfile& default_soc() { return profiles().front(); }

std::vector<std::string> soc_names() {
    std::vector<std::string> names;
    for (const auto& p : profiles()) names.emplace_back(p.name);
    return names;
}

}  // namespace rknn::hw
