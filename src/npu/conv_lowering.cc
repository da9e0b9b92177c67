#include "npu/conv_lowering.h"

#include <algorithm>

#include "hw/rk356x_dialect.h"
#include "npu/native_layout.h"

namespace rknn::npu {

namespace {

constexpr uint32_t kConvWithRecords = 0x1d;  // CNA | CORE | DPU | DPU_RDMA
constexpr uint32_t kConvPlain = 0x0d;        // CNA | CORE | DPU
constexpr int kMaxDataEntries = (1 << 14) - 1;  // CNA CBUF_CON1.DATA_ENTRIES
constexpr int kRk356xMaxSize = 2047;            // RK356x 11-bit width and height fields

int banks_for(uint64_t bytes, uint32_t bank_bytes) { return static_cast<int>((bytes + bank_bytes - 1) / bank_bytes); }

Status check_geometry(const ConvGeometry& g, hw::NpuArch arch) {
    if (g.in_c <= 0 || g.in_h <= 0 || g.in_w <= 0 || g.out_c <= 0)
        return RKNN_INVALID_ARGUMENT("convolution cube %dx%dx%d -> %d channels is empty", g.in_c, g.in_h, g.in_w, g.out_c);
    if (g.in_w > 8192 || g.in_h > 8192 || g.in_c > 8192 || g.out_c > 8192)
        return make_status(StatusCode::kUnimplemented, "convolution %dx%dx%d -> %d is larger than the CNA's size fields",
                           g.in_c, g.in_h, g.in_w, g.out_c);
    if (g.kh < 1 || g.kw < 1 || g.kh > 31 || g.kw > 31)
        return make_status(StatusCode::kUnimplemented, "kernel %dx%d is outside 1..31", g.kh, g.kw);
    if (g.sy() < 1 || g.sx() < 1 || g.sy() > 7 || g.sx() > 7)
        return make_status(StatusCode::kUnimplemented, "stride %dx%d is outside 1..7", g.sy(), g.sx());
    if (g.pad_top < 0 || g.pad_left < 0 || g.pad_bottom < 0 || g.pad_right < 0 || g.pad_top >= g.kh ||
        g.pad_bottom >= g.kh || g.pad_left >= g.kw || g.pad_right >= g.kw)
        return make_status(StatusCode::kUnimplemented, "padding %d,%d,%d,%d is not smaller than the %dx%d kernel",
                           g.pad_top, g.pad_left, g.pad_bottom, g.pad_right, g.kh, g.kw);
    if (g.out_h() < 1 || g.out_w() < 1)
        return RKNN_INVALID_ARGUMENT("convolution output would be %dx%d", g.out_h(), g.out_w());
    if (g.depthwise && g.in_c != g.out_c)
        return RKNN_INVALID_ARGUMENT("depthwise convolution with %d inputs and %d outputs", g.in_c, g.out_c);
    if (g.packed_row_pixels > 0 && (!can_read_packed_input(g, arch) || g.packed_row_pixels < g.in_w))
        return RKNN_INVALID_ARGUMENT("a channel-packed input with %d channels, rows of %d pixels for a width of %d%s",
                                     g.in_c, g.packed_row_pixels, g.in_w, g.depthwise ? ", depthwise" : "");
    // RK356x strides count 8-byte units: an ARGB row must be a whole number of them.
    if (g.packed_row_pixels > 0 && arch == hw::NpuArch::kRk356x && g.packed_row_pixels % 8 != 0)
        return RKNN_INVALID_ARGUMENT("an RK356x ARGB image needs rows a multiple of 8 pixels apart, not %d",
                                     g.packed_row_pixels);
    return Status::ok();
}

StatusOr<std::vector<int>> cores_of(uint32_t core_mask, const hw::SocProfile& soc) {
    if (core_mask == 0) return std::vector<int>{0};
    if (!soc.core_mask_runs(core_mask))
        return RKNN_INVALID_ARGUMENT("core mask 0x%x is not one the %s NPU runs", core_mask, soc.name);
    std::vector<int> cores;
    for (int c = 0; c < std::min(soc.num_cores, kMaxProgramCores); ++c)
        if (core_mask & (1u << c)) cores.push_back(c);
    if (cores.empty()) return RKNN_INVALID_ARGUMENT("core mask 0x%x selects no core", core_mask);
    return cores;
}

// The most output rows from `row` (at most up to `last`) whose input band,
// halo included, fits `capacity` input rows. The top band saves the rows its
// padding supplies, as Mesa's band arithmetic does (hw-facts 3.9).
int band_rows(const ConvGeometry& g, int row, int last, int capacity) {
    const int first_input = std::max(0, row * g.sy() - g.pad_top);
    if (g.in_h - first_input <= capacity) return last - row;  // the rest of the image fits
    const int rows = (first_input + capacity + g.pad_top - g.kh) / g.sy() - row + 1;
    return std::clamp(rows, 1, last - row);
}

// RK3566/RK3568 (docs/rk3568.md 4, iav's board-verified arithmetic): 8 banks
// of 1024 32-byte entries; a row of `a` atoms takes (a / 4) W entries plus
// W (three atoms left) or ceil(r W / 4) (r = 1, 2) for the rest; weights take
// ceil(entries / 1024) banks with no spare. A resident input takes the banks
// it needs, the weights the others; otherwise the weights stay resident when
// a data bank remains, or stream through one bank (no reuse), and the input
// goes in bands. No kernel groups: a depthwise layer runs one task per 32
// channels (per band).
StatusOr<ConvPlan> plan_conv_rk356x(const ConvGeometry& g, const hw::SocProfile& soc) {
    if (g.fp16)
        return make_status(StatusCode::kUnimplemented, "fp16 convolutions on %s are not built (no source describes its "
                           "fp16 path; docs/rk3568.md)", soc.name);
    if (g.in_w > kRk356xMaxSize || g.in_h > kRk356xMaxSize)
        return make_status(StatusCode::kUnimplemented, "input %dx%d exceeds the %s's %d-pixel size fields", g.in_w,
                           g.in_h, soc.name, kRk356xMaxSize);
    const int banks = soc.cbuf_banks;
    const int entries_per_bank = static_cast<int>(hw::rk356x::kEntriesPerBank);
    const int declared = rk356x_declared_channels(g, g.in_c);
    const int atoms = declared / 8;
    // An ARGB image row: one atom per pixel, the even entry count the CNA is told.
    const int64_t row_entries = g.packed_row_pixels > 0 ? int64_t{rk356x_image_row_entries(g.in_w)}
                                : static_cast<int64_t>(atoms / 4) * g.in_w +
                                      (atoms % 4 == 3 ? g.in_w : (static_cast<int64_t>(atoms % 4) * g.in_w + 3) / 4);
    if (rk356x_data_entries(g, declared) > static_cast<uint32_t>(kMaxDataEntries))
        return make_status(StatusCode::kUnimplemented, "a %d-pixel row of %d channels exceeds DATA_ENTRIES", g.in_w,
                           declared);
    auto banks_of = [&](int64_t entries) { return static_cast<int>((entries + entries_per_bank - 1) / entries_per_bank); };
    const int64_t weight_bytes = static_cast<int64_t>(g.kh) * g.kw * declared * (g.depthwise ? 1 : g.out_c);
    const int weight_banks = banks_of((weight_bytes + hw::rk356x::kCbufEntryBytes - 1) / hw::rk356x::kCbufEntryBytes);
    const int whole = banks_of(row_entries * g.in_h);

    ConvPlan plan;
    plan.kernels_per_task = g.depthwise ? std::min(g.out_c, 32) : g.out_c;
    bool reuse = false;
    if (whole < banks) {
        plan.data_banks = whole;
        plan.weight_banks = banks - whole;
    } else if (weight_banks + 1 < banks) {
        plan.weight_banks = weight_banks;
        plan.data_banks = banks - weight_banks;
        reuse = true;
    } else {
        plan.data_banks = banks - 1;
        plan.weight_banks = 1;
    }
    plan.input_rows_per_task = whole < banks ? g.in_h
                                             : static_cast<int>(int64_t{entries_per_bank} * plan.data_banks / row_entries);
    if (plan.input_rows_per_task < std::min(g.kh, g.in_h))
        return make_status(StatusCode::kUnimplemented,
                           "the %d input rows one output row needs do not fit %d banks of the %s's CBUF", g.kh,
                           plan.data_banks, soc.name);
    auto& tiles = plan.per_core[0];
    for (int k = 0; k < g.out_c; k += plan.kernels_per_task) {
        for (int row = 0; row < g.out_h();) {
            ConvTile t;
            t.out_row = row;
            t.out_rows = band_rows(g, row, g.out_h(), plan.input_rows_per_task);
            t.kernel = k;
            t.kernels = std::min(plan.kernels_per_task, g.out_c - k);
            t.data_banks = plan.data_banks;
            t.weight_banks = plan.weight_banks;
            t.reuse_weights = reuse && row != 0;  // never across depthwise groups
            t.load_lut = tiles.empty();
            tiles.push_back(t);
            row += t.out_rows;
        }
    }
    return plan;
}

}  // namespace

size_t ConvPlan::task_count() const {
    size_t n = 0;
    for (const auto& tiles : per_core) n += tiles.size();
    return n;
}

bool can_read_packed_input(const ConvGeometry& g, hw::NpuArch arch) {
    if (g.depthwise) return false;
    // RK356x: the ARGB mode of the vendor's first layers, the one packed read the sources describe.
    // A one-pixel input would be an FC task, which the ARGB sources do not cover.
    if (arch == hw::NpuArch::kRk356x)
        return !g.fp16 && g.in_c == 3 && g.in_w <= kRk356xMaxSize && (g.in_h > 1 || g.in_w > 1);
    // The rows one output row needs must fit a packed band's DATA_ENTRIES (W x rows).
    return (g.in_c == 1 || g.in_c == 3 || g.in_c == 4) &&
           static_cast<int64_t>(g.in_w) * std::min(g.kh, g.in_h) <= kMaxDataEntries;
}

// A depthwise layer whose kernel rows (or weights) do not fit the CBUF with
// all its channels: its channels are independent, so it runs as chunks of
// whole weight groups (32 fp16 / 64 int8 channels), each a layer of its own
// tiled in row bands, as the vendor splits wide depthwise layers. The
// largest chunk that plans is taken; every core runs each chunk's bands of
// its rows (emit_conv_* turn a tile's channel range into the chunk's layer).
namespace {

StatusOr<ConvPlan> plan_depthwise_chunks(const ConvGeometry& g, const hw::SocProfile& soc, uint32_t core_mask) {
    const int group = g.fp16 ? 32 : 64;
    Status last = make_status(StatusCode::kUnimplemented,
                              "%d depthwise channels: not one %d-channel chunk of the %d input rows one output row needs "
                              "fits the CBUF", g.in_c, group, g.kh);
    for (int chunk = (g.in_c - 1) / group * group; chunk >= group; chunk -= group) {
        ConvGeometry part = g;
        part.in_c = part.out_c = chunk;
        auto sub = plan_conv(part, soc, core_mask);
        if (!sub.is_ok()) {
            last = sub.status();
            continue;
        }
        bool whole_chunk = true;  // a chunk split again is left to a smaller chunk
        for (const auto& bands : sub.value().per_core)
            for (const ConvTile& t : bands) whole_chunk = whole_chunk && t.kernel == 0 && (t.kernels == 0 || t.kernels == chunk);
        if (!whole_chunk) continue;
        ConvPlan plan = sub.value();
        plan.kernels_per_task = chunk;
        for (size_t core = 0; core < plan.per_core.size(); ++core) {
            const std::vector<ConvTile>& bands = sub.value().per_core[core];
            std::vector<ConvTile>& tiles = plan.per_core[core];
            tiles.clear();
            for (int first = 0; first < g.in_c; first += chunk) {
                for (ConvTile t : bands) {
                    t.kernel = first;
                    t.kernels = std::min(chunk, g.in_c - first);
                    t.load_lut = tiles.empty();
                    tiles.push_back(t);
                }
            }
        }
        return plan;
    }
    return last;
}

}  // namespace

StatusOr<ConvPlan> plan_conv(const ConvGeometry& g, const hw::SocProfile& soc, uint32_t core_mask) {
    const Status valid = check_geometry(g, soc.arch);
    if (!valid.is_ok()) return valid;
    auto cores = cores_of(core_mask, soc);
    if (!cores.is_ok()) return cores.status();
    if (soc.arch == hw::NpuArch::kRk356x) return plan_conv_rk356x(g, soc);

    const uint32_t bank = soc.cbuf_bank_bytes;
    const int banks = soc.cbuf_banks;
    const int esize = g.fp16 ? 2 : 1;
    const int c_aligned = align_up(g.in_c, g.fp16 ? 8 : 16);
    const uint64_t row_bytes = static_cast<uint64_t>(g.in_w) * c_aligned * esize;
    // An int8 feature cube needs one bank beyond an exact fit, or the CNA's
    // DMA can lose the last rows (board sweep: golden/gregordinary-rockchip-
    // npu-notes/encodings/cbuf-bank-slack.md); fp16 fits exactly (vendor).
    const int slack = g.fp16 ? 0 : 1;
    const int min_data_banks = banks_for(row_bytes * g.kh, bank) + slack;
    if (min_data_banks >= banks && g.depthwise) return plan_depthwise_chunks(g, soc, core_mask);
    if (min_data_banks >= banks)
        return make_status(StatusCode::kUnimplemented,
                           "the %d input rows one output row needs (%llu bytes) do not fit the %d x %u byte CBUF", g.kh,
                           static_cast<unsigned long long>(row_bytes * g.kh), banks, bank);
    // A packed band's DATA_ENTRIES is W x rows (conv_regs.cc) in a 14-bit field.
    const int max_band_rows = g.packed_row_pixels > 0 ? kMaxDataEntries / g.in_w : g.in_h;
    if (max_band_rows < std::min(g.kh, g.in_h))
        return make_status(StatusCode::kUnimplemented, "a packed %d-pixel-wide band of %d rows exceeds DATA_ENTRIES",
                           g.in_w, g.kh);

    ConvPlan plan;
    const uint64_t per_kernel = weight_bytes_per_kernel(g);
    const int whole_input_banks = banks_for(row_bytes * g.in_h, bank) + slack;
    if (whole_input_banks < banks && g.in_h <= max_band_rows) {
        // The whole input stays resident: one band, every kernel in one task,
        // the weights streaming through the other banks (the vendor and Mesa
        // both do this, hw-facts 3.9 and the vendor captures).
        plan.kernels_per_task = g.out_c;
        plan.data_banks = whole_input_banks;
        plan.weight_banks = banks - whole_input_banks;
    } else {
        // Bands of rows; the weights as resident as they fit (vendor: exactly
        // ceil(bytes / bank) banks), otherwise groups of output kernels.
        auto weight_banks_for = [&](int kernels) { return banks_for(per_kernel * static_cast<uint64_t>(kernels), bank); };
        const int all_kernels = g.depthwise ? 1 : g.out_c;
        if (weight_banks_for(all_kernels) + min_data_banks <= banks) {
            plan.kernels_per_task = g.out_c;
            plan.weight_banks = weight_banks_for(all_kernels);
        } else {
            const int block = g.fp16 ? 16 : 32;  // the weight block's kernel count
            const uint64_t budget = static_cast<uint64_t>(banks - min_data_banks) * bank;
            const int group = static_cast<int>(budget / per_kernel) / block * block;
            if (g.depthwise) return plan_depthwise_chunks(g, soc, core_mask);
            if (group < block)
                return make_status(StatusCode::kUnimplemented,
                                   "%llu weight bytes per kernel leave no room for a %d-kernel group next to %d input rows",
                                   static_cast<unsigned long long>(per_kernel), block, g.kh);
            plan.kernels_per_task = group;
            plan.weight_banks = weight_banks_for(group);
        }
        plan.data_banks = banks - plan.weight_banks;
    }
    plan.input_rows_per_task = std::min<int>(
        max_band_rows, static_cast<int>(static_cast<uint64_t>(plan.data_banks - slack) * bank / row_bytes));
    const std::vector<int>& core_list = cores.value();
    const int used_cores = std::min<int>(static_cast<int>(core_list.size()), g.out_h());
    const bool name_cores = core_list.size() > 1;
    for (int i = 0; i < used_cores; ++i) {
        // Rows split as evenly as possible, the first cores taking the extra ones.
        const int base = g.out_h() / used_cores, extra = g.out_h() % used_cores;
        const int first = i * base + std::min(i, extra);
        const int last = first + base + (i < extra ? 1 : 0);
        auto& tiles = plan.per_core[static_cast<size_t>(core_list[static_cast<size_t>(i)])];
        for (int k = 0; k < g.out_c; k += plan.kernels_per_task) {
            for (int row = first; row < last;) {
                ConvTile t;
                t.out_row = row;
                t.out_rows = band_rows(g, row, last, plan.input_rows_per_task);
                t.kernel = k;
                t.kernels = std::min(plan.kernels_per_task, g.out_c - k);
                t.data_banks = plan.data_banks;
                t.weight_banks = plan.weight_banks;
                t.reuse_weights = row != first;
                t.load_lut = tiles.empty();
                t.core = name_cores ? core_list[static_cast<size_t>(i)] : -1;
                tiles.push_back(t);
                row += t.out_rows;
            }
        }
    }
    return plan;
}

Status lower_conv_int8(const Int8ConvLayer& layer, const hw::SocProfile& soc, uint32_t core_mask,
                       ProgramBuilder* program) {
    const ConvGeometry& g = layer.geometry;
    if (g.fp16) return RKNN_INVALID_ARGUMENT("lower_conv_int8 given an fp16 geometry");
    if (layer.epilogue.bias.size() != static_cast<size_t>(g.out_c) || layer.epilogue.mult.size() != layer.epilogue.bias.size())
        return RKNN_INVALID_ARGUMENT("epilogue has %zu biases and %zu multipliers for %d output channels",
                                     layer.epilogue.bias.size(), layer.epilogue.mult.size(), g.out_c);
    const bool rk356x = soc.arch == hw::NpuArch::kRk356x;
    if (rk356x) {
        const EpilogueRegs& e = layer.epilogue;
        const char* missing = e.lut != nullptr ? "a LUT activation (loaded by MMIO on RK356x)"
                              : e.prelu              ? "a per-channel PRelu (BN records)"
                              : e.out_int32          ? "an int32 output"
                                                     : nullptr;
        if (missing != nullptr)
            return make_status(StatusCode::kUnimplemented, "%s on %s is not built yet", missing, soc.name);
    }
    auto plan = plan_conv(g, soc, core_mask);
    if (!plan.is_ok()) return plan.status();
    for (int core = 0; core < kMaxProgramCores; ++core) {
        for (const ConvTile& tile : plan.value().per_core[static_cast<size_t>(core)]) {
            TaskEmitter task;
            if (rk356x) {
                emit_conv_int8_rk356x(&task, g, layer.addresses, layer.epilogue, layer.input_zp, tile);
            } else {
                emit_conv_int8(&task, g, layer.addresses, layer.epilogue, layer.input_zp, tile);
            }
            const Status added = program->add(core, task, rk356x ? hw::rk356x::kConvOpEnable : kConvWithRecords,
                                              kDpuInterrupts);
            if (!added.is_ok()) return added;
        }
    }
    return Status::ok();
}

Status lower_conv_fp16(const ConvGeometry& g, const ConvAddresses& addresses, bool fp32_out, const hw::SocProfile& soc,
                       uint32_t core_mask, ProgramBuilder* program, const FloatEpilogue& epilogue) {
    if (!g.fp16) return RKNN_INVALID_ARGUMENT("lower_conv_fp16 given an int8 geometry");
    auto plan = plan_conv(g, soc, core_mask);
    if (!plan.is_ok()) return plan.status();
    for (int core = 0; core < kMaxProgramCores; ++core) {
        for (const ConvTile& tile : plan.value().per_core[static_cast<size_t>(core)]) {
            TaskEmitter task;
            emit_conv_fp16(&task, g, addresses, fp32_out, tile, epilogue);
            const Status added = program->add(core, task, epilogue.bias ? kConvWithRecords : kConvPlain, kDpuInterrupts);
            if (!added.is_ok()) return added;
        }
    }
    return Status::ok();
}

}  // namespace rknn::npu
