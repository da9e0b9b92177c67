// Our fp16 convolution lowering against the vendor runtime's choices: the
// decoded register fields (geometry, strides, CBUF banks, task split) of the
// vendor's single-core program for each conv shape captured on an RK3588
// (golden/allbilly-rk3588/conv_expt/capture_harness/decoded/*.json, librknnrt
// 2.3.0). Prints the agreement (fields equal / total); each field where we
// differ on purpose is named in kDepartures with the reason, and every other
// disagreement fails. Skips when the golden folder is absent.
//
// Facts about the captures (checked over all 752 body rows): every shape is
// stride 1 with VALID padding; each file holds the 1-, 2- and 3-core
// variants, tagged in CONV_CON2 bits 31-28 (0 = one core); a short "delta"
// task rewrites only the registers that change, the rest carry over.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "hw/registers.h"
#include "hw/soc_profile.h"
#include "npu/conv_lowering.h"
#include "npu/native_layout.h"

#ifndef RKNN_GOLDEN_DIR
#define RKNN_GOLDEN_DIR "../shared/golden"
#endif

namespace {

namespace fs = std::filesystem;
namespace npu = rknn::npu;
namespace hw = rknn::hw;
namespace f = rknn::hw::field;
namespace r = rknn::hw::reg;

using Row = std::map<std::string, int64_t>;  // a body row; null fields are absent

// The body rows of one decoded capture: a flat array of objects whose values
// are integers or null (the format of these files, not general JSON).
std::vector<Row> read_body_rows(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    std::vector<Row> rows;
    size_t pos = text.find("\"body_rows\"");
    if (pos == std::string::npos) return rows;
    const size_t end = text.find(']', pos);
    while ((pos = text.find('{', pos)) != std::string::npos && pos < end) {
        const size_t close = text.find('}', pos);
        Row row;
        size_t key = text.find('"', pos);
        while (key != std::string::npos && key < close) {
            const size_t key_end = text.find('"', key + 1);
            const std::string name = text.substr(key + 1, key_end - key - 1);
            size_t v = text.find(':', key_end) + 1;
            while (text[v] == ' ') ++v;
            if (text.compare(v, 4, "null") != 0) row[name] = std::strtoll(text.c_str() + v, nullptr, 10);
            key = text.find('"', text.find_first_of(",}", v));
        }
        rows.push_back(row);
        pos = close + 1;
    }
    return rows;
}

struct Shape {
    int c = 0, h = 0, oc = 0;
};

// "c<C>_h<H>[_oc<OC>][_label]", optionally after a family prefix ("cc_",
// "fresh_", "fresh_dw_"); OC 0 when the slug has none.
bool parse_slug(const std::string& stem, Shape* s) {
    for (size_t at = 0; at < stem.size(); ++at) {
        if (stem[at] != 'c' || (at > 0 && stem[at - 1] != '_')) continue;
        s->oc = 0;
        const int n = std::sscanf(stem.c_str() + at, "c%d_h%d_oc%d", &s->c, &s->h, &s->oc);
        if (n >= 2) return true;
    }
    return false;
}

struct Field {
    const char* name;
    const char* key;   // the capture's key
    uint16_t reg;      // our register
    uint32_t mask;     // bits compared
};

const Field kFields[] = {
    {"CBUF_CON0 banks and reuse", "cbuf0", r::CNA_CBUF_CON0, 0x30ff},
    {"DATA_SIZE0 width/height", "data_size0", r::CNA_DATA_SIZE0, 0xffffffff},
    {"DATA_SIZE1 channel", "data_size1", r::CNA_DATA_SIZE1, 0xffff},
    {"DATA_SIZE1 real channel", "data_size1", r::CNA_DATA_SIZE1, 0x3fff0000},
    {"DATA_SIZE3 atomics", "data_size3", r::CNA_DATA_SIZE3, 0x3ffff},
    {"FC_DATA_SIZE0", "fc_data_size0", r::CNA_FC_DATA_SIZE0, 0xffffffff},
    {"FC_DATA_SIZE1", "fc_data_size1", r::CNA_FC_DATA_SIZE1, 0xffff},
    {"DMA_CON2 surface stride", "dma_con2", r::CNA_DMA_CON2, 0x0fffffff},
    {"WEIGHT_SIZE0", "weight_size0", r::CNA_WEIGHT_SIZE0, 0xffffffff},
    {"WEIGHT_SIZE1", "weight_size1", r::CNA_WEIGHT_SIZE1, 0xffffffff},
    {"WEIGHT_SIZE2", "weight_size2", r::CNA_WEIGHT_SIZE2, 0xffffffff},
    {"CONV_CON1 mode/precision", "conv_con1", r::CNA_CONV_CON1, 0x3ff},
    {"CORE DATAOUT_SIZE_0", "core_dataout_size0", r::CORE_DATAOUT_SIZE_0, 0xffffffff},
    {"CORE DATAOUT_SIZE_1", "core_dataout_size1", r::CORE_DATAOUT_SIZE_1, 0xffff},
    {"DPU DST_SURF_STRIDE", "dst_surf_stride", r::DPU_DST_SURF_STRIDE, 0xfffffff0},
    {"DPU DATA_CUBE_HEIGHT", "data_cube_height", r::DPU_DATA_CUBE_HEIGHT, 0x1fff},
    {"DPU DATA_CUBE_CHANNEL", "data_cube_channel", r::DPU_DATA_CUBE_CHANNEL, 0x1fff1fff},
    {"DPU WDMA_SIZE_0", "wdma_size0", r::DPU_WDMA_SIZE_0, 0x1fff},
    {"DPU WDMA_SIZE_1", "wdma_size1", r::DPU_WDMA_SIZE_1, 0x1fff1fff},
    {"DPU SURFACE_ADD", "surface_add", r::DPU_SURFACE_ADD, 0xfffffff0},
};

// Where we differ from the vendor on purpose. `applies` sees the vendor's and
// our values of the field (masked) and the layer.
struct Departure {
    std::string field_prefix;
    bool (*applies)(int64_t vendor, int64_t ours, const npu::ConvGeometry& g);
    const char* why;
};

const Departure kDepartures[] = {
    {"DPU DST_SURF_STRIDE",
     [](int64_t v, int64_t o, const npu::ConvGeometry& g) {
         const int64_t pixels = int64_t{g.out_h()} * g.out_w();
         return o == pixels * 16 && (v == (pixels + 3) / 4 * 4 * 16 || (pixels == 1 && v == 16));
     },
     "the vendor pads each output surface to a multiple of 4 pixels; we keep surfaces dense (H x W atoms), the "
     "layout our packers and the runtime's native tensors share"},
    {"DPU SURFACE_ADD",
     [](int64_t v, int64_t o, const npu::ConvGeometry& g) {
         const int64_t pixels = int64_t{g.out_h()} * g.out_w(), k = g.depthwise ? 4 : 2;
         return o == k * pixels * 16 && v == k * (pixels + 3) / 4 * 4 * 16;
     },
     "follows DST_SURF_STRIDE (twice it, four times for depthwise) in both"},
    {"DATA_SIZE1 real channel",
     [](int64_t v, int64_t o, const npu::ConvGeometry&) { return (v >> 16) == ((o >> 16) & 63); },
     "the vendor keeps only 6 bits of (channels - 1) in DATAIN_CHANNEL_REAL; we write the whole count, as Mesa does"},
    {"DPU DATA_CUBE_CHANNEL",
     [](int64_t v, int64_t o, const npu::ConvGeometry& g) {
         return (v >> 16) == (o >> 16) && (v & 0x1fff) + 1 == (g.out_c + 15) / 16 * 16 && (o & 0x1fff) + 1 == (g.out_c + 7) / 8 * 8;
     },
     "the vendor rounds fp16 output channels up to 16 (two atoms); we round up to the 8 of one fp16 atom"},
    {"CORE DATAOUT_SIZE_1",
     [](int64_t v, int64_t o, const npu::ConvGeometry& g) {
         return v + 1 == (g.out_c + 15) / 16 * 16 && o + 1 == (g.out_c + 7) / 8 * 8;
     },
     "as DATA_CUBE_CHANNEL"},
    {"DPU WDMA_SIZE_0",
     [](int64_t v, int64_t o, const npu::ConvGeometry& g) {
         return v + 1 == (g.out_c + 15) / 16 * 16 && o + 1 == (g.out_c + 7) / 8 * 8;
     },
     "as DATA_CUBE_CHANNEL"},
};

struct Tally {
    int equal = 0, total = 0, departed = 0, shapes = 0, skipped_shapes = 0;
    std::map<std::string, int> departures_used;
    std::vector<std::string> skipped;
};

// Compares one capture; returns false (with the reason) when the shape is outside what we lower alike.
void compare_shape(const fs::path& file, Tally* tally) {
    const std::string stem = file.stem().string();
    Shape s;
    if (!parse_slug(stem, &s)) return;
    std::vector<Row> rows = read_body_rows(file);
    // Carry registers over delta rows, keep the single-core variant (CONV_CON2 bits 31-28 = 0).
    std::vector<Row> single;
    Row current;
    for (const Row& row : rows) {
        for (const auto& [k, v] : row) current[k] = v;
        if (current.count("conv_con2") && ((current["conv_con2"] >> 28) & 0xf) == 0) single.push_back(current);
    }
    ASSERT_FALSE(single.empty()) << stem;
    const Row& first = single[0];
    npu::ConvGeometry g;
    g.fp16 = true;
    g.in_c = s.c;
    g.in_h = g.in_w = s.h;
    g.depthwise = (first.at("conv_con1") & 0xf) == 3;
    const int64_t w2 = first.at("weight_size2");
    g.kh = static_cast<int>((w2 >> 16) & 0x1f);
    g.kw = static_cast<int>((w2 >> 24) & 0x1f);
    g.out_c = g.depthwise ? s.c : (s.oc > 0 ? s.oc : static_cast<int>(w2 & 0x3fff));
    const auto& soc = hw::default_soc();
    auto plan = npu::plan_conv(g, soc, 0);
    ASSERT_TRUE(plan.is_ok()) << stem << ": " << plan.status().message();
    const bool channel_chunks = g.depthwise && (first.at("data_size1") & 0xffff) != (s.c + 7) / 8 * 8;
    if (channel_chunks || plan.value().task_count() != single.size()) {
        // The vendor splits depthwise layers whose input is not resident into
        // 32-channel chunks; we band their rows instead (both valid tilings).
        EXPECT_TRUE(g.depthwise) << stem << ": " << plan.value().task_count() << " tasks, the vendor " << single.size();
        tally->skipped.push_back(stem + " (depthwise: vendor " + std::to_string(single.size()) + " channel-chunk tasks, ours " +
                                 std::to_string(plan.value().task_count()) + " row bands)");
        ++tally->skipped_shapes;
        return;
    }
    ++tally->shapes;
    npu::ConvAddresses a{npu::BufferRef(0, 0), npu::BufferRef(1, 0), npu::BufferRef(2, 0), npu::BufferRef(3, 0)};
    npu::ProgramBuilder builder(soc);
    ASSERT_TRUE(npu::lower_conv_fp16(g, a, false, soc, 0, &builder).is_ok());
    const npu::Program p = builder.finish();
    for (size_t t = 0; t < p.tasks.size(); ++t) {
        std::map<uint16_t, uint32_t> ours;
        for (uint32_t i = p.tasks[t].first_word; i < p.tasks[t].first_word + p.tasks[t].body_words; ++i) {
            const auto w = hw::decode_word(p.words[i], hw::DecodeRules{});
            if (w.kind == hw::WordKind::kWrite) ours[w.reg] = w.value;
        }
        for (const Field& fd : kFields) {
            if (!single[t].count(fd.key)) continue;
            const int64_t v = single[t].at(fd.key) & fd.mask;
            const int64_t o = (ours.count(fd.reg) ? ours.at(fd.reg) : 0) & fd.mask;
            ++tally->total;
            if (v == o) {
                ++tally->equal;
                continue;
            }
            bool explained = false;
            for (const Departure& d : kDepartures) {
                if (d.field_prefix == fd.name && d.applies(v, o, g)) {
                    explained = true;
                    ++tally->departed;
                    ++tally->departures_used[d.field_prefix];
                    break;
                }
            }
            EXPECT_TRUE(explained) << stem << " task " << t << " " << fd.name << ": vendor 0x" << std::hex << v
                                   << ", ours 0x" << o;
        }
    }
}

TEST(NpuVendorTiling, Fp16ConvGeometryBanksAndSplitsAgreeWithTheVendor) {
    const fs::path dir = fs::path(RKNN_GOLDEN_DIR) / "allbilly-rk3588/conv_expt/capture_harness/decoded";
    if (!fs::exists(dir)) GTEST_SKIP() << "golden data not found at " << dir.string();
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().extension() == ".json") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    ASSERT_GE(files.size(), 80u);
    Tally tally;
    for (const fs::path& file : files) compare_shape(file, &tally);
    std::printf("vendor fp16 convs: %d shapes compared, %d of %d fields equal to the vendor's, %d more differ by a "
                "recorded departure; %d shapes tiled differently\n",
                tally.shapes, tally.equal, tally.total, tally.departed, tally.skipped_shapes);
    for (const Departure& d : kDepartures)
        if (tally.departures_used.count(d.field_prefix))
            std::printf("  departure %s (%d fields): %s\n", d.field_prefix.c_str(), tally.departures_used[d.field_prefix], d.why);
    for (const std::string& s : tally.skipped) std::printf("  tiled differently: %s\n", s.c_str());
    EXPECT_GE(tally.shapes + tally.skipped_shapes, static_cast<int>(files.size()) - 2) << "captures not understood";
    EXPECT_GE(tally.shapes, 60);
}

// The vendor's first task for a three-channel fp16 224x224 image (a 3x3
// valid convolution to 32 channels, 48 output rows from a 50-row band),
// values read from golden/allbilly-rk3588/experimental/rknn/
// channeltile_6tile_emit.txt and written here as facts, so this runs
// without the golden folder: our task for the same band of a packed input.
TEST(NpuVendorTiling, PackedThreeChannelImageRegistersAgreeWithTheVendor) {
    const auto& soc = hw::default_soc();
    npu::ConvGeometry g;
    g.fp16 = true;
    g.in_c = 3;
    g.in_h = g.in_w = 224;
    g.out_c = 32;
    g.kh = g.kw = 3;
    g.packed_row_pixels = npu::packed_row_pixels(g.in_w, true);
    npu::ConvTile tile;
    tile.out_row = 0;
    tile.out_rows = 48;
    npu::TaskEmitter task;
    npu::emit_conv_fp16(&task, g, {npu::BufferRef(0, 0), npu::BufferRef(1, 0), npu::BufferRef(2, 0), npu::BufferRef(3, 0)},
                        false, tile);
    npu::ProgramBuilder builder(soc);
    ASSERT_TRUE(builder.add(0, task, 0x0d, 0x300).is_ok());
    const npu::Program p = builder.finish();
    std::map<uint16_t, uint32_t> ours;
    for (uint32_t i = p.tasks[0].first_word; i < p.tasks[0].first_word + p.tasks[0].body_words; ++i) {
        const auto w = hw::decode_word(p.words[i], hw::DecodeRules{});
        if (w.kind == hw::WordKind::kWrite) ours[w.reg] = w.value;
    }
    const struct {
        const char* name;
        uint16_t reg;
        uint32_t vendor;
    } expected[] = {
        {"CNA_CONV_CON1", r::CNA_CONV_CON1, 0x6000a120},  // NONALIGN_DMA, GROUP_LINE_OFF, ARGB_IN 10, fp16
        {"CNA_DATA_SIZE0", r::CNA_DATA_SIZE0, 0x00e00032},  // 224 wide, 50 rows
        {"CNA_DATA_SIZE1", r::CNA_DATA_SIZE1, 0x00020008},  // 3 real channels in 8
        {"CNA_DATA_SIZE2", r::CNA_DATA_SIZE2, 222},
        {"CNA_DATA_SIZE3", r::CNA_DATA_SIZE3, 10656},
        {"CNA_WEIGHT_SIZE0", r::CNA_WEIGHT_SIZE0, 0x1200},
        {"CNA_WEIGHT_SIZE1", r::CNA_WEIGHT_SIZE1, 144},
        {"CNA_WEIGHT_SIZE2", r::CNA_WEIGHT_SIZE2, 0x03030020},
        {"CNA_CBUF_CON1", r::CNA_CBUF_CON1, 11200},
        {"CNA_DMA_CON1", r::CNA_DMA_CON1, 224},
        {"CNA_DMA_CON2", r::CNA_DMA_CON2, 49952},
        {"CNA_FC_DATA_SIZE0", r::CNA_FC_DATA_SIZE0, 0x00e00032},
        {"CNA_FC_DATA_SIZE1", r::CNA_FC_DATA_SIZE1, 8},
        {"CNA_CVT_CON5", r::CNA_CVT_CON5, 0xfff},
        {"CORE_DATAOUT_SIZE_0", r::CORE_DATAOUT_SIZE_0, 0x002f00dd},
    };
    for (const auto& e : expected) {
        ASSERT_TRUE(ours.count(e.reg)) << e.name << " not written";
        EXPECT_EQ(ours.at(e.reg), e.vendor) << e.name;
    }
}

}  // namespace
