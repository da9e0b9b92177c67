#include "emulator/conv_unit.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "base/gemm_f32.h"
#include "base/half.h"
#include "base/hot_loops.h"
#include "base/parallel.h"
#include "base/sign_bits.h"
#include "emulator/conv_cube.h"
#include "emulator/conv_desc.h"
#include "emulator/cube.h"
#include "emulator/depthwise_fp16.h"
#include "emulator/fixed_point.h"
#include "hw/rk356x_dialect.h"

namespace rknn::emulator {

namespace f = hw::field;
namespace r = hw::reg;

int8_t int8_pad_for_channel(const ConvDesc& d, int c) {
    const auto low = static_cast<int8_t>(d.pad_value & 0xff);
    const auto high = static_cast<int8_t>((d.pad_value >> 8) & 0xff);
    if (d.depthwise && (c % 64) >= 32) return low;
    return (c & 1) ? high : low;
}

int8_t convert_input(const ConvDesc& d, int c, uint8_t raw) {
    if (d.cvt_bypass) return static_cast<int8_t>(raw);
    const int lane = c & 3;
    const int64_t x = d.data_signed ? static_cast<int8_t>(raw) : raw;
    const int64_t v = shift_round((x + d.cvt_offset[lane]) * d.cvt_scale[lane], d.cvt_truncate[lane]);
    return static_cast<int8_t>(saturate(v, -128, 127));
}

namespace {

std::atomic<bool> cube_paths{true};
std::atomic<uint64_t> cube_path_tasks{0};

constexpr int kMaxKernel = 31;       // WEIGHT_WIDTH/HEIGHT are 5-bit fields
constexpr int kPixelsPerBatch = 256; // im2col rows built per GEMM call
constexpr size_t kRowBatchBytes = 16u << 20;      // cap on one batch of im2col rows
constexpr uint64_t kMaxAccumulators = 64u << 20;  // one task's output cube, in elements
constexpr uint64_t kMaxMacs = uint64_t{1} << 36;  // far beyond any tile that fits the CBUF
constexpr int kWeightOcBlockFp16 = 16;
constexpr int64_t kFp16PixelsPerBand = 96;  // im2col rows per GEMM call of an fp16 task
constexpr int64_t kFp16SinkPixels = 256;    // output pixels per band an fp16 task hands its row sink
constexpr int kWeightIcBlock = 32;
constexpr int kDepthwiseGroupBytes = 64;
constexpr size_t kParallelImageBytes = size_t{1} << 18;

Status decode(TaskContext& ctx, ConvDesc* d) {
    const RegisterFile& g = ctx.regs;
    const uint32_t con1 = g.exec(r::CNA_CONV_CON1);
    const uint32_t mode = f::CNA_CONV_CON1_CONV_MODE.get(con1);
    const auto in_prec = static_cast<hw::Precision>(f::CNA_CONV_CON1_IN_PRECISION.get(con1));
    const auto proc_prec = static_cast<hw::Precision>(f::CNA_CONV_CON1_PROC_PRECISION.get(con1));
    if (mode != 0 && mode != 3) return ctx.unsupported("CNA CONV_MODE %u (only 0 direct and 3 depthwise are modelled)", mode);
    if (f::CNA_CONV_CON1_DECONV.get(con1)) return ctx.unsupported("CNA deconvolution is not modelled");
    if (in_prec != proc_prec) {
        return ctx.unsupported("CNA input precision %s with processing precision %s", hw::precision_name(in_prec),
                               hw::precision_name(proc_prec));
    }
    if (in_prec != hw::Precision::kInt8 && in_prec != hw::Precision::kFp16) {
        return ctx.unsupported("CNA precision %s (int8 and fp16 are modelled)", hw::precision_name(in_prec));
    }
    d->fp16 = in_prec == hw::Precision::kFp16;
    d->esize = d->fp16 ? 2 : 1;
    d->depthwise = mode == 3;
    const bool rk356x = ctx.soc.arch == hw::NpuArch::kRk356x;
    if (rk356x) {
        d->atom_bytes = ctx.soc.atom_bytes;
        d->weight_oc_block = 16;
        if (d->fp16) return ctx.unsupported("fp16 convolutions on %s are not modelled", ctx.soc.name);
        if ((g.exec(f::CMAC_MISC_CFG_DW_EN) != 0) != d->depthwise)
            return ctx.bad_program("CNA CONV_MODE and CMAC MISC_CFG.DW_EN disagree");
        const uint32_t data = g.exec(f::CNA_CBUF_CON0_DATA_BANK), weight = g.exec(f::CNA_CBUF_CON0_WEIGHT_BANK);
        if (data == 0 || weight == 0 || data + weight > static_cast<uint32_t>(ctx.soc.cbuf_banks))
            return ctx.bad_program("CNA CBUF_CON0 gives %u data and %u weight banks of the %d", data, weight,
                                   ctx.soc.cbuf_banks);
    }
    const bool core_dw = g.exec(f::CORE_MISC_CFG_DW_EN) != 0;
    if (core_dw != d->depthwise) return ctx.bad_program("CNA CONV_MODE and CORE MISC_CFG.DW_EN disagree");
    const auto core_prec = static_cast<hw::Precision>(g.exec(f::CORE_MISC_CFG_PROC_PRECISION));
    if (core_prec != proc_prec) return ctx.bad_program("CORE MISC_CFG precision differs from CNA's");
    d->channel_packed = f::CNA_CONV_CON1_NONALIGN_DMA.get(con1) != 0;
    const uint32_t argb = f::CNA_CONV_CON1_ARGB_IN.get(con1);
    if (rk356x && (argb != 0 || d->channel_packed)) {
        // The RK356x reads a channel-packed image only in its ARGB mode (3 bytes a pixel).
        if (argb != hw::rk356x::kArgbIn || d->channel_packed)
            return ctx.unsupported("RK356x CNA ARGB_IN %u%s (ARGB_IN 10 alone, three channels, is modelled)", argb,
                                   d->channel_packed ? " with NONALIGN_DMA" : "");
        d->channel_packed = true;
    }

    const uint32_t con3 = g.exec(r::CNA_CONV_CON3);
    d->stride_x = static_cast<int>(f::CNA_CONV_CON3_CONV_X_STRIDE.get(con3));
    d->stride_y = static_cast<int>(f::CNA_CONV_CON3_CONV_Y_STRIDE.get(con3));
    if (d->stride_x == 0 || d->stride_y == 0) return ctx.bad_program("CNA CONV_CON3 stride of 0");
    if (f::CNA_CONV_CON3_ATROUS_X_DILATION.get(con3) || f::CNA_CONV_CON3_ATROUS_Y_DILATION.get(con3)) {
        return ctx.unsupported("CNA dilation is not modelled");
    }

    d->in_w = static_cast<int>(g.exec(f::CNA_DATA_SIZE0_DATAIN_WIDTH));
    d->in_h = static_cast<int>(g.exec(f::CNA_DATA_SIZE0_DATAIN_HEIGHT));
    d->in_c = static_cast<int>(g.exec(f::CNA_DATA_SIZE1_DATAIN_CHANNEL));
    d->in_c_real = static_cast<int>(g.exec(f::CNA_DATA_SIZE1_DATAIN_CHANNEL_REAL)) + 1;
    d->kw = static_cast<int>(g.exec(f::CNA_WEIGHT_SIZE2_WEIGHT_WIDTH));
    d->kh = static_cast<int>(g.exec(f::CNA_WEIGHT_SIZE2_WEIGHT_HEIGHT));
    d->kernels = static_cast<int>(g.exec(f::CNA_WEIGHT_SIZE2_WEIGHT_KERNELS));
    d->out_w = static_cast<int>(g.exec(f::CORE_DATAOUT_SIZE_0_DATAOUT_WIDTH)) + 1;
    d->out_h = static_cast<int>(g.exec(f::CORE_DATAOUT_SIZE_0_DATAOUT_HEIGHT)) + 1;
    d->out_c = static_cast<int>(g.exec(f::CORE_DATAOUT_SIZE_1_DATAOUT_CHANNEL)) + 1;
    if (d->in_w == 0 || d->in_h == 0 || d->in_c == 0) {
        return ctx.bad_program("CNA input cube %dx%dx%d is empty", d->in_w, d->in_h, d->in_c);
    }
    if (d->in_c_real > d->in_c) return ctx.bad_program("CNA real channels %d exceed the aligned %d", d->in_c_real, d->in_c);
    if (rk356x && d->channel_packed && (d->in_c_real != 3 || d->in_c != ctx.soc.atom_bytes || d->depthwise))
        return ctx.bad_program("RK356x ARGB task of %d real and %d declared channels%s (3 in one %d-byte atom)",
                               d->in_c_real, d->in_c, d->depthwise ? ", depthwise" : "", ctx.soc.atom_bytes);
    if (d->kw == 0 || d->kh == 0 || d->kw > kMaxKernel || d->kh > kMaxKernel) {
        return ctx.bad_program("CNA kernel %dx%d", d->kw, d->kh);
    }
    if (!d->depthwise && d->kernels == 0) return ctx.bad_program("CNA WEIGHT_KERNELS is 0");
    if (static_cast<int>(g.exec(f::CNA_DATA_SIZE2_DATAOUT_WIDTH)) != d->out_w) {
        return ctx.bad_program("CNA DATAOUT_WIDTH %u and CORE output width %d disagree",
                               g.exec(f::CNA_DATA_SIZE2_DATAOUT_WIDTH), d->out_w);
    }
    if (static_cast<int64_t>(g.exec(f::CNA_DATA_SIZE3_DATAOUT_ATOMICS)) != int64_t{d->out_w} * d->out_h) {
        return ctx.bad_program("CNA DATAOUT_ATOMICS %u is not output width x height (%d x %d)",
                               g.exec(f::CNA_DATA_SIZE3_DATAOUT_ATOMICS), d->out_w, d->out_h);
    }
    d->pad_top = static_cast<int>(g.exec(f::CNA_PAD_CON0_PAD_TOP));
    d->pad_left = static_cast<int>(g.exec(f::CNA_PAD_CON0_PAD_LEFT));
    // Bottom/right padding is whatever the output size needs.
    d->pad_bottom = std::max(0, (d->out_h - 1) * d->stride_y + d->kh - d->in_h - d->pad_top);
    d->pad_right = std::max(0, (d->out_w - 1) * d->stride_x + d->kw - d->in_w - d->pad_left);
    if (d->pad_bottom >= d->kh || d->pad_right >= d->kw || d->pad_top >= d->kh || d->pad_left >= d->kw) {
        return ctx.bad_program("CNA output %dx%d needs windows entirely in the padding of a %dx%d input",
                               d->out_w, d->out_h, d->in_w, d->in_h);
    }
    // RK356x depthwise tasks hold one group of at most 32 channels and always
    // announce 32 outputs (docs/rk3568.md 5).
    if (rk356x && d->depthwise && (d->in_c > 32 || d->out_c > 32))
        return ctx.bad_program("RK356x depthwise task of %d input and %d output channels (at most 32)", d->in_c, d->out_c);
    if (!rk356x && d->depthwise && d->out_c > d->in_c) {
        return ctx.bad_program("depthwise output channels %d exceed the input's %d", d->out_c, d->in_c);
    }
    if (!d->depthwise && d->out_c > (d->kernels + 31) / 32 * 32) {
        return ctx.bad_program("CORE output channels %d exceed the %d kernels", d->out_c, d->kernels);
    }
    // Garbage programs must not exhaust the host: the hardware could not run
    // a task this large in one go either (its CBUF bounds every tile).
    const uint64_t outputs = static_cast<uint64_t>(d->out_w) * d->out_h * d->out_c;
    const uint64_t macs = outputs * d->kh * d->kw * (d->depthwise ? 1u : static_cast<uint64_t>(d->in_c));
    if (outputs > kMaxAccumulators || macs > kMaxMacs) {
        return ctx.unsupported("a %dx%dx%d output from a %dx%dx%d input in one task is beyond what the emulator runs",
                               d->out_w, d->out_h, d->out_c, d->in_w, d->in_h, d->in_c);
    }
    d->pad_value = g.exec(r::CNA_PAD_CON1);
    if (rk356x) {  // one 16-bit value, the zero point in the int8 domain
        const auto zp = static_cast<int16_t>(g.exec(hw::rk356x::field::CNA_PAD_CON0_PAD_VALUE));
        if (zp < -128 || zp > 127) return ctx.bad_program("CNA PAD_CON0 pad value %d is not an int8 code", zp);
        const uint32_t byte = static_cast<uint8_t>(zp);
        d->pad_value = byte | (byte << 8);
    }

    d->input_base = g.exec(r::CNA_FEATURE_DATA_ADDR);
    const uint64_t line = g.exec(f::CNA_DMA_CON1_LINE_STRIDE);
    const uint64_t surf = g.exec(f::CNA_DMA_CON2_SURF_STRIDE);
    if (line == 0) return ctx.bad_program("CNA DMA_CON1 line stride is 0");
    if (d->channel_packed && rk356x) {
        // An ARGB image: LINE_STRIDE counts 8-byte units (11 for a 28-wide
        // image in the vendor's stream, ceil(3 x 28 / 8)).
        d->row_stride = line * static_cast<uint64_t>(d->atom_bytes);
        d->surf_stride = 0;
        if (d->row_stride < static_cast<uint64_t>(d->in_w) * 3)
            return ctx.bad_program("CNA LINE_STRIDE %llu units is shorter than a %d-pixel ARGB row",
                                   static_cast<unsigned long long>(line), d->in_w);
    } else if (d->channel_packed) {
        // LINE_STRIDE counts pixels of in_c_real elements: the phhusson
        // one-channel fp16 dumps (88 for an 85-wide image) and the vendor's
        // three-channel fp16 stream (224 for a 224-wide image) both fit.
        d->row_stride = line * static_cast<uint64_t>(d->in_c_real) * static_cast<uint64_t>(d->esize);
        d->surf_stride = 0;
    } else if (rk356x) {
        // Both strides count 8-byte units: W atoms per row, a padded surface.
        d->row_stride = line * static_cast<uint64_t>(d->atom_bytes);
        d->surf_stride = surf * static_cast<uint64_t>(d->atom_bytes);
        if (d->in_c > d->atom_bytes && d->surf_stride < d->row_stride * static_cast<uint64_t>(d->in_h))
            return ctx.bad_program("CNA SURF_STRIDE %llu units is less than the %d rows read",
                                   static_cast<unsigned long long>(surf), d->in_h);
    } else {
        d->row_stride = line * 4;
        // SURF_STRIDE is W (H - 4) in 28 bits: for H < 4 it wraps, and so does the sum.
        d->surf_stride = ((line + surf) & 0x0fffffffu) * kAtomBytes;
    }
    d->weight_base = g.exec(r::CNA_DCOMP_ADDR0);
    d->weight_bytes = g.exec(f::CNA_WEIGHT_SIZE0_WEIGHT_BYTES);
    if (g.exec(f::CNA_DCOMP_CTRL_DECOMP_CONTROL) != 0) return ctx.unsupported("CNA weight decompression is not modelled");

    d->clip_truncate = static_cast<int>(g.exec(f::CORE_CLIP_TRUNCATE_CLIP_TRUNCATE));
    d->truncate_rounding = g.exec(f::CORE_CLIP_TRUNCATE_ROUND_TYPE) ? Rounding::kHalfAway : Rounding::kHalfEven;

    const uint32_t cvt0 = g.exec(r::CNA_CVT_CON0);
    // RK356x: bit 0 switches the converter on (hw/rk356x_dialect.h); RK3588: it bypasses it.
    d->cvt_bypass = rk356x ? hw::rk356x::field::CNA_CVT_CON0_CVT_EN.get(cvt0) == 0
                           : f::CNA_CVT_CON0_CVT_BYPASS.get(cvt0) != 0;
    d->data_signed = d->cvt_bypass || f::CNA_CVT_CON0_DATA_SIGN.get(cvt0) != 0;
    const hw::Field truncs[4] = {f::CNA_CVT_CON0_CVT_TRUNCATE_0, f::CNA_CVT_CON0_CVT_TRUNCATE_1,
                                 f::CNA_CVT_CON0_CVT_TRUNCATE_2, f::CNA_CVT_CON0_CVT_TRUNCATE_3};
    const uint16_t cons[4] = {r::CNA_CVT_CON1, r::CNA_CVT_CON2, r::CNA_CVT_CON3, r::CNA_CVT_CON4};
    for (int i = 0; i < 4; ++i) {
        const uint32_t v = g.exec(cons[i]);
        d->cvt_offset[i] = static_cast<int16_t>(v & 0xffff);
        d->cvt_scale[i] = static_cast<int16_t>(v >> 16);
        d->cvt_truncate[i] = static_cast<int>(truncs[i].get(cvt0));
        if (!d->cvt_bypass && (d->cvt_offset[i] != 0 || d->cvt_scale[i] != 1 || d->cvt_truncate[i] != 0))
            d->cvt_identity = false;
    }
    if (!d->data_signed) d->cvt_identity = false;
    if (!d->cvt_bypass && d->fp16) return ctx.unsupported("the CNA input converter is modelled for int8 only");
    return Status::ok();
}

// The input with its padding, as a dense [row][column][channel] image.
struct PaddedImage {
    int width = 0;   // in_w + pad_left + pad_right
    int height = 0;
    int channels = 0;
};

// The bytes the task's input occupies from input_base.
uint64_t input_span(const ConvDesc& d) {
    uint64_t span;
    if (d.channel_packed) {
        span = static_cast<uint64_t>(d.in_h - 1) * d.row_stride +
               static_cast<uint64_t>(d.in_w) * static_cast<uint64_t>(d.in_c_real) * d.esize;
    } else {
        CubeLayout cube;
        cube.base = d.input_base;
        cube.width = d.in_w;
        cube.height = d.in_h;
        cube.channels = d.in_c;
        cube.elem_bytes = d.esize;
        cube.atom_bytes = d.atom_bytes;
        cube.row_stride = d.row_stride;
        cube.surf_stride = d.surf_stride;
        span = cube.span();
    }
    return span;
}

StatusOr<const uint8_t*> map_input(TaskContext& ctx, const ConvDesc& d) {
    RKNN_ASSIGN_OR_RETURN(uint8_t * p, ctx.map(d.input_base, input_span(d), false, "CNA feature data"));
    return static_cast<const uint8_t*>(p);
}

uint64_t input_offset(const ConvDesc& d, int c, int y, int x) {
    if (d.channel_packed) {
        return static_cast<uint64_t>(y) * d.row_stride +
               (static_cast<uint64_t>(x) * static_cast<uint64_t>(d.in_c_real) + static_cast<uint64_t>(c)) * d.esize;
    }
    const int c2 = d.atom_bytes / d.esize;
    return static_cast<uint64_t>(c / c2) * d.surf_stride + static_cast<uint64_t>(y) * d.row_stride +
           static_cast<uint64_t>(x) * d.atom_bytes + static_cast<uint64_t>(c % c2) * d.esize;
}

// int8 input as a padded HWC image of values biased by +128 (uint8).
// Rows [y0, y1) of the padded image.
RKNN_HOT_LOOP void image_rows_u8(const ConvDesc& d, const uint8_t* in, const PaddedImage* img,
                                 const std::vector<uint8_t>& pad, uint8_t* image, int y0, int y1) {
    const bool plain = d.cvt_identity && !d.channel_packed;
    const size_t pixel_bytes = static_cast<size_t>(img->channels);
    for (int y = y0; y < y1; ++y) {
        uint8_t* row = image + static_cast<size_t>(y) * img->width * pixel_bytes;
        const int iy = y - d.pad_top;
        const bool row_inside = iy >= 0 && iy < d.in_h;
        for (int x = 0; x < img->width; ++x) {
            const int ix = x - d.pad_left;
            if (!row_inside || ix < 0 || ix >= d.in_w) std::memcpy(row + x * pixel_bytes, pad.data(), pad.size());
        }
        if (!row_inside) continue;
        uint8_t* first = row + static_cast<size_t>(d.pad_left) * pixel_bytes;
        if (plain) {  // one surface row at a time: whole atoms, sign bits flipped
            for (int c0 = 0; c0 < d.in_c; c0 += d.atom_bytes) {
                const uint8_t* src = in + input_offset(d, c0, iy, 0);
                const int n = std::min(d.atom_bytes, d.in_c - c0);
                for (int ix = 0; ix < d.in_w; ++ix)
                    copy_sign_flipped(first + ix * pixel_bytes + c0, src + static_cast<size_t>(ix) * d.atom_bytes,
                                      static_cast<size_t>(n));
            }
            continue;
        }
        for (int ix = 0; ix < d.in_w; ++ix) {
            uint8_t* px = first + ix * pixel_bytes;
            for (int c = 0; c < d.in_c; ++c) {
                // The lanes a packed image lacks read as 0 (their weights are zero).
                const bool present = c < d.in_c_real || !d.channel_packed;
                px[c] = present ? static_cast<uint8_t>(convert_input(d, c, in[input_offset(d, c, iy, ix)]) + 128) : 128;
            }
        }
    }
}

void build_image_u8(const ConvDesc& d, const uint8_t* in, PaddedImage* img, UninitVector<uint8_t>* out) {
    img->width = d.in_w + d.pad_left + d.pad_right;
    img->height = d.in_h + d.pad_top + d.pad_bottom;
    img->channels = d.in_c;
    out->resize(static_cast<size_t>(img->width) * img->height * img->channels);
    std::vector<uint8_t> pad(static_cast<size_t>(d.in_c));
    for (int c = 0; c < d.in_c; ++c) pad[static_cast<size_t>(c)] = static_cast<uint8_t>(int8_pad_for_channel(d, c) + 128);
    const bool large = out->size() >= kParallelImageBytes;
    parallel_for(img->height, large ? 1 : img->height, [&](int64_t y0, int64_t y1) {
        image_rows_u8(d, in, img, pad, out->data(), static_cast<int>(y0), static_cast<int>(y1));
    });
}

// Rows [y0, y1) of the padded fp32 image; row y lands at `out` + (y - y_base)
// rows, so that a band can be built into a buffer of its own.
void image_rows_f32(const ConvDesc& d, const uint8_t* in, const PaddedImage& img, float pad, float* out, int y0,
                    int y1, int y_base = 0) {
    const int c2 = d.atom_bytes / d.esize;
    thread_local std::vector<float> atoms;  // one surface row of the input
    atoms.resize(static_cast<size_t>(d.in_w) * c2);
    for (int y = y0; y < y1; ++y) {
        const int iy = y - d.pad_top;
        if (!d.channel_packed && iy >= 0 && iy < d.in_h) {
            // An input row: padding pixels, then one surface row at a time (whole atoms).
            float* row = out + static_cast<size_t>(y - y_base) * img.width * img.channels;
            for (int x = 0; x < img.width; ++x) {
                const int ix = x - d.pad_left;
                if (ix < 0 || ix >= d.in_w) std::fill(row + static_cast<size_t>(x) * img.channels,
                                                      row + static_cast<size_t>(x + 1) * img.channels, pad);
            }
            for (int c0 = 0; c0 < d.in_c; c0 += c2) {
                const uint8_t* src = in + input_offset(d, c0, iy, 0);
                const int n = std::min(c2, d.in_c - c0);
                halves_to_floats(src, atoms.data(), atoms.size());
                float* dst = row + static_cast<size_t>(d.pad_left) * img.channels + c0;
                if (n == 8 && c2 == 8) {  // whole atoms: a fixed-size copy the compiler inlines
                    for (int ix = 0; ix < d.in_w; ++ix)
                        std::memcpy(dst + static_cast<size_t>(ix) * img.channels, atoms.data() + static_cast<size_t>(ix) * 8,
                                    8 * sizeof(float));
                } else {
                    for (int ix = 0; ix < d.in_w; ++ix)
                        std::copy_n(atoms.data() + static_cast<size_t>(ix) * c2, n, dst + static_cast<size_t>(ix) * img.channels);
                }
            }
            continue;
        }
        for (int x = 0; x < img.width; ++x) {
            float* px = out + (static_cast<size_t>(y - y_base) * img.width + x) * img.channels;
            const int ix = x - d.pad_left;
            const bool inside = iy >= 0 && iy < d.in_h && ix >= 0 && ix < d.in_w;
            for (int c = 0; c < d.in_c; ++c) {
                if (!inside) {
                    px[c] = pad;
                } else if (d.channel_packed && c >= d.in_c_real) {
                    px[c] = 0.0f;
                } else {
                    uint16_t h;
                    std::memcpy(&h, in + input_offset(d, c, iy, ix), 2);
                    px[c] = half_to_float(h);
                }
            }
        }
    }
}

void size_image(const ConvDesc& d, PaddedImage* img) {
    img->width = d.in_w + d.pad_left + d.pad_right;
    img->height = d.in_h + d.pad_top + d.pad_bottom;
    img->channels = d.in_c;
}

float fp16_pad(const ConvDesc& d) { return half_to_float(static_cast<uint16_t>(d.pad_value & 0xffff)); }

void build_image_f32(const ConvDesc& d, const uint8_t* in, PaddedImage* img, UninitVector<float>* out) {
    size_image(d, img);
    out->resize(static_cast<size_t>(img->width) * img->height * img->channels);
    const float pad = fp16_pad(d);
    const bool large = out->size() * sizeof(float) >= kParallelImageBytes;
    parallel_for(img->height, large ? 1 : img->height, [&](int64_t y0, int64_t y1) {
        image_rows_f32(d, in, *img, pad, out->data(), static_cast<int>(y0), static_cast<int>(y1));
    });
}

// Weights in the hardware layout (hw-facts 3.7): blocks of `oc_block`
// kernels by 32 input channels, each block [ky][kx][kernel][channel]; the
// last blocks hold what remains. Unpacked to [kernel][(ky * kw + kx) * in_c + c].
template <typename T>
void unpack_direct_weights(const ConvDesc& d, const T* w, int oc_block, std::vector<T>* out) {
    const size_t k = static_cast<size_t>(d.kh) * d.kw * d.in_c;
    out->assign(static_cast<size_t>(d.kernels) * k, T{});
    size_t pos = 0;
    for (int o0 = 0; o0 < d.kernels; o0 += oc_block) {
        const int on = std::min(oc_block, d.kernels - o0);
        for (int i0 = 0; i0 < d.in_c; i0 += kWeightIcBlock) {
            const int in = std::min(kWeightIcBlock, d.in_c - i0);
            for (int ky = 0; ky < d.kh; ++ky)
                for (int kx = 0; kx < d.kw; ++kx)
                    for (int o = 0; o < on; ++o) {
                        T* dst = out->data() + static_cast<size_t>(o0 + o) * k +
                                 (static_cast<size_t>(ky) * d.kw + kx) * d.in_c + i0;
                        std::memcpy(dst, w + pos, sizeof(T) * static_cast<size_t>(in));
                        pos += static_cast<size_t>(in);
                    }
        }
    }
}

// Depthwise weights: groups of 64 bytes of channels, each [ky][kx][channel].
// Unpacked to [(ky * kw + kx) * in_c + c]. A group is 64 bytes of weights as
// stored (64 int8 or 32 fp16 channels), whatever type they are unpacked to.
template <typename T>
void unpack_depthwise_weights(const ConvDesc& d, const T* w, std::vector<T>* out) {
    const int group = kDepthwiseGroupBytes / d.esize;
    out->assign(static_cast<size_t>(d.kh) * d.kw * d.in_c, T{});
    size_t pos = 0;
    for (int c0 = 0; c0 < d.in_c; c0 += group) {
        const int cn = std::min(group, d.in_c - c0);
        for (int t = 0; t < d.kh * d.kw; ++t) {
            std::memcpy(out->data() + static_cast<size_t>(t) * d.in_c + c0, w + pos, sizeof(T) * static_cast<size_t>(cn));
            pos += static_cast<size_t>(cn);
        }
    }
}

uint64_t expected_weight_bytes(const ConvDesc& d) {
    const uint64_t taps = static_cast<uint64_t>(d.kh) * d.kw;
    if (d.depthwise) return taps * d.in_c * d.esize;
    return taps * d.in_c * static_cast<uint64_t>(d.kernels) * d.esize;
}

// Largest total of cached weight bytes per core (then the cache starts over):
// room for a 4096 x 4096 float16 matmul's weights (32 MiB, 64 MiB packed).
constexpr size_t kWeightCacheBytes = size_t{192} << 20;

// Packs [kernel][k] weights, leaving out the units of `unit` consecutive
// columns that are zero in every kernel when they are more than a quarter of
// them (out->columns then lists the units kept).
void pack_direct_int8(const std::vector<int8_t>& w, int kernels, int k, int unit, DirectWeightsS8* out) {
    const size_t units = static_cast<size_t>(k / unit), width = static_cast<size_t>(unit);
    std::vector<uint8_t> live(units, 0);
    for (size_t o = 0; o < static_cast<size_t>(kernels); ++o) {
        const int8_t* row = w.data() + o * static_cast<size_t>(k);
        for (size_t j = 0; j < units * width; ++j) live[j / width] |= row[j] != 0;
    }
    out->columns.clear();
    for (size_t j = 0; j < units; ++j) {
        if (live[j]) out->columns.push_back(static_cast<uint32_t>(j));
    }
    if (out->columns.size() * 4 > units * 3) {
        out->columns.clear();
        pack_weights(w.data(), kernels, k, static_cast<size_t>(k), &out->gemm);
        return;
    }
    if (out->columns.empty()) out->columns.push_back(0);  // all zero: one unit keeps the product defined
    const size_t kept = out->columns.size() * width;
    std::vector<int8_t> compact(static_cast<size_t>(kernels) * kept);
    for (size_t o = 0; o < static_cast<size_t>(kernels); ++o) {
        for (size_t j = 0; j < out->columns.size(); ++j)
            std::memcpy(compact.data() + o * kept + j * width, w.data() + o * static_cast<size_t>(k) + out->columns[j] * width,
                        width);
    }
    pack_weights(compact.data(), kernels, static_cast<int>(kept), kept, &out->gemm);
}

// Whether two byte ranges are equal; large ones are compared on the host's
// threads (the weight cache compares every task's weights on every run).
bool same_bytes(const uint8_t* a, const uint8_t* b, size_t n) {
    constexpr size_t kChunk = size_t{64} << 10;
    if (n < 4 * kChunk) return std::memcmp(a, b, n) == 0;
    std::atomic<bool> differ{false};
    parallel_for(static_cast<int64_t>(n), static_cast<int64_t>(kChunk), [&](int64_t first, int64_t last) {
        if (!differ.load(std::memory_order_relaxed) &&
            std::memcmp(a + first, b + first, static_cast<size_t>(last - first)) != 0)
            differ.store(true, std::memory_order_relaxed);
    });
    return !differ.load();
}

// Packs [kernel][k] weights for the layout. A channel-packed image whose
// absent channels have weights falls back to the window layout.
void pack_for(WeightLayout layout, const ConvDesc& d, const std::vector<int8_t>& w, int kernels, int k,
              DirectWeightsS8* out) {
    out->columns.clear();
    if (layout == WeightLayout::kPackedImageRows && !pack_packed_image_weights(d, w, kernels, &out->gemm))
        layout = WeightLayout::kWindows;
    out->layout = layout;
    if (layout == WeightLayout::kPackedImageRows) return;
    pack_direct_int8(w, kernels, k, layout == WeightLayout::kCubeGroups ? PackedWeightsS8::kDepthGroup : 1, out);
}

using WeightKey = PackedWeightCache::Key;

// The cache's entry for `key` when it was made from the bytes now at wp:
// known unchanged while the buffer's version (DmaPort::content_version) stays
// the same, compared otherwise. nullptr when there is none.
PackedWeightCache::Entry* cached_weights(PackedWeightCache& cache, const WeightKey& key, const uint8_t* wp,
                                         uint64_t bytes, uint64_t version) {
    auto hit = cache.entries.find(key);
    if (hit == cache.entries.end() || hit->second.source.size() != bytes) return nullptr;
    PackedWeightCache::Entry& entry = hit->second;
    if (version != 0 && entry.version == version) return &entry;
    if (!same_bytes(entry.source.data(), wp, bytes)) return nullptr;
    entry.version = version;
    return &entry;
}

// A new entry for `key` holding a copy of the bytes at wp, counted as
// `charge` bytes in all; nullptr when that is too large to keep.
PackedWeightCache::Entry* remember_weights(PackedWeightCache& cache, const WeightKey& key, const uint8_t* wp,
                                           uint64_t bytes, uint64_t version, uint64_t charge) {
    if (cache.bytes + charge > kWeightCacheBytes) {
        cache.entries.clear();
        cache.bytes = 0;
    }
    if (charge > kWeightCacheBytes) return nullptr;
    PackedWeightCache::Entry& entry = cache.entries[key];
    cache.bytes -= entry.charge;
    entry.source.assign(wp, wp + bytes);
    entry.version = version;
    entry.charge = charge;
    cache.bytes += charge;
    return &entry;
}

// The packed weights of a direct int8 task, from the cache when the bytes
// at the weight address are the ones packed before.
const DirectWeightsS8& packed_int8_weights(const ConvDesc& d, const uint8_t* wp, uint64_t version, WeightLayout layout,
                                           ConvScratch* s) {
    const uint64_t bytes = expected_weight_bytes(d);
    const int k = d.kh * d.kw * d.in_c;
    // The packed-image layout also depends on the real channel count.
    const int real = layout == WeightLayout::kPackedImageRows ? d.in_c_real : 0;
    const WeightKey key{d.weight_base, d.kh, d.kw, d.in_c, d.kernels, d.out_c, static_cast<int>(layout), real};
    if (const auto* hit = cached_weights(s->weight_cache, key, wp, bytes, version)) return hit->packed;
    unpack_direct_weights(d, reinterpret_cast<const int8_t*>(wp), d.weight_oc_block, &s->weights);
    // Output channels beyond the kernels (the task announces more than it has
    // weights for) are packed as zero kernels: the GEMM writes their zeros
    // with the rest, so the accumulators need no zero fill first.
    s->weights.resize(static_cast<size_t>(std::max(d.kernels, d.out_c)) * k, 0);
    PackedWeightCache::Entry* entry = remember_weights(s->weight_cache, key, wp, bytes, version, 2 * bytes);
    DirectWeightsS8* packed = entry != nullptr ? &entry->packed : &s->packed;  // too large to keep: the scratch
    pack_for(layout, d, s->weights, d.out_c, k, packed);
    return *packed;
}

// A depthwise task's weights widened per surface (widen_depthwise_weights),
// cached like the direct ones.
const DepthwiseWeightsS8& widened_depthwise_weights(const ConvDesc& d, const uint8_t* wp, uint64_t version,
                                                      int channels, ConvScratch* s) {
    const uint64_t bytes = expected_weight_bytes(d);
    const WeightKey key{d.weight_base, d.kh, d.kw, d.in_c, channels, d.atom_bytes, kDepthwiseSurfaces, 0};
    if (const auto* hit = cached_weights(s->weight_cache, key, wp, bytes, version)) return hit->depthwise;
    unpack_depthwise_weights(d, reinterpret_cast<const int8_t*>(wp), &s->weights);
    // The widened form, and the tap-group form at about the same size.
    const uint64_t widened = 2 * static_cast<uint64_t>(channels + d.atom_bytes) * d.kh * d.kw * sizeof(int32_t);
    PackedWeightCache::Entry* entry = remember_weights(s->weight_cache, key, wp, bytes, version, bytes + widened);
    DepthwiseWeightsS8* out = entry != nullptr ? &entry->depthwise : &s->dw_weights;
    widen_depthwise_weights(d, s->weights.data(), channels, out);
    return *out;
}

// A direct fp16 task's weights as float32 GEMM panels, cached like the int8
// ones: the widening, unpacking and packing are as much work as the
// products when the task has few output pixels (a matmul of one row).
const PackedGemmB& packed_fp16_weights(const ConvDesc& d, const uint8_t* wp, uint64_t version, ConvScratch* s) {
    const uint64_t bytes = expected_weight_bytes(d);
    const int kernels = std::min(d.kernels, d.out_c);
    const WeightKey key{d.weight_base, d.kh, d.kw, d.in_c, d.kernels, kernels, kDirectFp16, 0};
    if (const auto* hit = cached_weights(s->weight_cache, key, wp, bytes, version)) return hit->fp16;
    std::vector<float> raw(bytes / 2);
    halves_to_floats(wp, raw.data(), raw.size());
    unpack_direct_weights(d, raw.data(), kWeightOcBlockFp16, &s->fweights);
    const int k = d.kh * d.kw * d.in_c;
    const uint64_t packed_bytes = static_cast<uint64_t>(k) * ((kernels + PackedGemmB::kPanel - 1) / PackedGemmB::kPanel) *
                                  PackedGemmB::kPanel * sizeof(float);
    PackedWeightCache::Entry* entry = remember_weights(s->weight_cache, key, wp, bytes, version, bytes + packed_bytes);
    PackedGemmB* packed = entry != nullptr ? &entry->fp16 : &s->fpacked;
    pack_gemm_b_transposed(s->fweights.data(), k, k, kernels, packed);
    return *packed;
}

// What one direct task's GEMM reads: the padded image, and per kept column
// its offset from a window's first byte (when columns were left out).
struct Im2col {
    const PaddedImage* img = nullptr;
    const uint8_t* image = nullptr;
    size_t row_bytes = 0;           // kw * in_c: one kernel row of a window
    std::vector<uint32_t> gather;   // empty: whole window rows
};

// The im2col rows of output pixels [p0, p0 + np) (and their window sums,
// over the whole window).
void im2col_batch(const ConvDesc& d, const Im2col& src, int p0, int np, size_t lda, bool want_sum, uint8_t* rows,
                  ConvOutput* out) {
    const PaddedImage& img = *src.img;
    const size_t image_row = static_cast<size_t>(img.width) * img.channels;
    for (int i = 0; i < np; ++i) {
        const int oy = (p0 + i) / d.out_w, ox = (p0 + i) % d.out_w;
        uint8_t* row = rows + static_cast<size_t>(i) * lda;
        const uint8_t* window = src.image + static_cast<size_t>(oy) * d.stride_y * image_row +
                                static_cast<size_t>(ox) * d.stride_x * img.channels;
        size_t used;
        if (src.gather.empty()) {
            for (int ky = 0; ky < d.kh; ++ky)
                std::memcpy(row + static_cast<size_t>(ky) * src.row_bytes, window + ky * image_row, src.row_bytes);
            used = static_cast<size_t>(d.kh) * src.row_bytes;
        } else {
            for (size_t j = 0; j < src.gather.size(); ++j) row[j] = window[src.gather[j]];
            used = src.gather.size();
        }
        std::memset(row + used, 128, lda - used);  // the padding to k_padded: zero once un-biased
        if (want_sum) {
            int32_t sum = 0;
            for (int ky = 0; ky < d.kh; ++ky) {
                const uint8_t* line = window + ky * image_row;
                for (size_t kk = 0; kk < src.row_bytes; ++kk) sum += line[kk];
            }
            out->window_sum[static_cast<size_t>(p0 + i)] = sum - 128 * d.kh * static_cast<int32_t>(src.row_bytes);
        }
    }
}

Status direct_int8(TaskContext& ctx, const ConvDesc& d, const uint8_t* in, bool want_sum, ConvScratch* s,
                   ConvOutput* out, ConvRowSink* sink) {
    RKNN_ASSIGN_OR_RETURN(uint8_t * wp, ctx.map(d.weight_base, expected_weight_bytes(d), false, "CNA weights"));
    const bool cube = cube_paths.load(std::memory_order_relaxed) && !want_sum;
    WeightLayout layout = WeightLayout::kWindows;
    if (cube && d.channel_packed && packed_image_fits(d)) {
        layout = WeightLayout::kPackedImageRows;
    } else if (cube && cube_offsets_fit(d)) {
        layout = WeightLayout::kCubeGroups;
    }
    const DirectWeightsS8& weights = packed_int8_weights(d, wp, ctx.dma.content_version(d.weight_base), layout, s);
    if (weights.layout == WeightLayout::kPackedImageRows) {
        cube_path_tasks.fetch_add(1, std::memory_order_relaxed);
        direct_int8_from_packed_image(d, in, weights.gemm, s, out, sink);
        return Status::ok();
    }
    if (weights.layout == WeightLayout::kCubeGroups) {
        cube_path_tasks.fetch_add(1, std::memory_order_relaxed);
        direct_int8_from_cube(d, in, weights, s, out, sink);
        return Status::ok();
    }
    const PackedWeightsS8& packed = weights.gemm;

    PaddedImage img;
    UninitVector<uint8_t>& image = s->image;
    build_image_u8(d, in, &img, &image);
    Im2col src;
    src.img = &img;
    src.image = image.data();
    src.row_bytes = static_cast<size_t>(d.kw) * d.in_c;
    for (uint32_t column : weights.columns) {
        const size_t ky = column / src.row_bytes;
        src.gather.push_back(static_cast<uint32_t>(ky * img.width * img.channels + column % src.row_bytes));
    }
    const size_t lda = static_cast<size_t>(packed.k_padded);
    const int pixels = d.out_w * d.out_h;
    const int batch = static_cast<int>(std::max<size_t>(1, std::min<size_t>(kPixelsPerBatch, kRowBatchBytes / lda)));
    // A 1x1 stride-1 task without padding reads each pixel's channels as the
    // image holds them: the image rows are the GEMM's rows, no im2col needed.
    const bool image_is_a = d.kh == 1 && d.kw == 1 && d.stride_x == 1 && d.stride_y == 1 && img.width == d.out_w &&
                            img.height == d.out_h && src.gather.empty() && lda == static_cast<size_t>(img.channels) &&
                            !want_sum;
    // The rows of pixels [p0, p0 + np), built in `rows` when needed.
    const auto a_rows = [&](int p0, int np, bool sums, std::vector<uint8_t>* rows) -> const uint8_t* {
        if (image_is_a) return image.data() + static_cast<size_t>(p0) * lda;
        rows->resize(static_cast<size_t>(np) * lda);
        im2col_batch(d, src, p0, np, lda, sums, rows->data(), out);
        return rows->data();
    };
    // Batches of output pixels are independent: large tasks share them out
    // over the host's threads (each with its own im2col rows).
    const uint64_t macs = static_cast<uint64_t>(pixels) * static_cast<uint64_t>(packed.k) * static_cast<uint64_t>(out->channels);
    const bool parallel = macs >= kParallelMacs && host_threads() > 1;
    const int block_pairs = packed.n_blocks / 2;
    if (parallel && pixels < batch * host_threads() && block_pairs > 1) {
        // Few pixels (the deep layers): share the output channels out instead,
        // each thread building the same few im2col rows.
        parallel_for(block_pairs, 1, [&](int64_t first, int64_t last) {
            thread_local std::vector<uint8_t> rows;
            for (int p0 = 0; p0 < pixels; p0 += batch) {
                const int np = std::min(batch, pixels - p0);
                const uint8_t* a = a_rows(p0, np, want_sum && first == 0, &rows);
                gemm_u8s8_blocks(np, a, lda, packed, static_cast<int>(2 * first), static_cast<int>(2 * last),
                                 out->acc.data() + static_cast<size_t>(p0) * out->channels,
                                 static_cast<size_t>(out->channels));
            }
        });
        return Status::ok();
    }
    const int64_t grain = parallel ? batch : pixels;
    parallel_for(pixels, grain, [&](int64_t first, int64_t last) {
        thread_local std::vector<uint8_t> rows;
        for (int p0 = static_cast<int>(first); p0 < last; p0 += batch) {
            const int np = std::min(batch, static_cast<int>(last) - p0);
            const uint8_t* a = a_rows(p0, np, want_sum, &rows);
            gemm_u8s8(np, a, lda, packed, out->acc.data() + static_cast<size_t>(p0) * out->channels,
                      static_cast<size_t>(out->channels));
        }
    });
    return Status::ok();
}

// Depthwise output rows [y0, y1), accumulated in place; the window sums only
// when the DPU asks for them.
RKNN_HOT_LOOP void depthwise_rows(const ConvDesc& d, const PaddedImage& img, const UninitVector<uint8_t>& image,
                                  const int8_t* weights, bool want_sum, ConvOutput* out, int y0, int y1) {
    const int ch = out->channels;
    const int live = std::min(ch, d.in_c);  // RK356x groups announce 32 outputs for fewer inputs
    for (int oy = y0; oy < y1; ++oy) {
        for (int ox = 0; ox < d.out_w; ++ox) {
            const size_t p = static_cast<size_t>(oy) * d.out_w + ox;
            int32_t* acc = out->acc.data() + p * ch;
            int32_t* sum = want_sum ? out->window_sum.data() + p * ch : nullptr;
            std::fill(acc, acc + ch, 0);
            if (sum != nullptr) std::fill(sum, sum + ch, 0);
            for (int ky = 0; ky < d.kh; ++ky) {
                const uint8_t* line = image.data() + ((static_cast<size_t>(oy) * d.stride_y + ky) * img.width +
                                                      static_cast<size_t>(ox) * d.stride_x) * img.channels;
                for (int kx = 0; kx < d.kw; ++kx) {
                    const uint8_t* px = line + static_cast<size_t>(kx) * img.channels;
                    const int8_t* w = weights + (static_cast<size_t>(ky) * d.kw + kx) * d.in_c;
                    // Each product fits in 16 bits (|x|, |w| <= 128): 16-bit multiplies, widened to add.
                    for (int c = 0; c < live; ++c)
                        acc[c] += static_cast<int16_t>(static_cast<int16_t>(px[c] - 128) * static_cast<int16_t>(w[c]));
                    if (sum != nullptr) {
                        for (int c = 0; c < live; ++c) sum[c] += static_cast<int32_t>(px[c]) - 128;
                    }
                }
            }
        }
    }
}

Status depthwise_int8(TaskContext& ctx, const ConvDesc& d, const uint8_t* in, bool want_sum, ConvScratch* s,
                      ConvOutput* out, ConvRowSink* sink) {
    RKNN_ASSIGN_OR_RETURN(uint8_t * wp, ctx.map(d.weight_base, expected_weight_bytes(d), false, "CNA weights"));
    if (cube_paths.load(std::memory_order_relaxed) && !want_sum && cube_offsets_fit(d)) {
        cube_path_tasks.fetch_add(1, std::memory_order_relaxed);
        const DepthwiseWeightsS8& weights =
            widened_depthwise_weights(d, wp, ctx.dma.content_version(d.weight_base), out->channels, s);
        depthwise_int8_from_cube(d, in, weights, s, out, sink);
        return Status::ok();
    }
    unpack_depthwise_weights(d, reinterpret_cast<const int8_t*>(wp), &s->weights);
    PaddedImage img;
    UninitVector<uint8_t>& image = s->image;
    build_image_u8(d, in, &img, &image);
    const uint64_t macs = static_cast<uint64_t>(d.out_w) * d.out_h * d.kh * d.kw * static_cast<uint64_t>(out->channels);
    parallel_for(d.out_h, macs >= kParallelMacs / 8 ? 1 : d.out_h, [&](int64_t y0, int64_t y1) {
        depthwise_rows(d, img, image, s->weights.data(), want_sum, out, static_cast<int>(y0), static_cast<int>(y1));
    });
    return Status::ok();
}

// fp16 direct convolution: im2col rows of the padded fp32 image, a band of
// output pixels at a time, times the kernels (base/gemm_f32.h: products and
// sums in fp32, each output summed over k in window order).
// A 1x1 window that steps one pixel over an unpadded image: its im2col rows
// are the image's own pixels, and output row y reads image row y only.
bool pointwise_fp16(const ConvDesc& d) {
    return d.kh == 1 && d.kw == 1 && d.stride_x == 1 && d.stride_y == 1 && d.pad_left == 0 && d.pad_right == 0 &&
           d.pad_top == 0 && d.pad_bottom == 0 && d.in_w == d.out_w && d.in_h == d.out_h;
}

Status direct_fp16(TaskContext& ctx, const ConvDesc& d, const uint8_t* in, ConvScratch* s, ConvOutput* out,
                   ConvRowSink* sink) {
    RKNN_ASSIGN_OR_RETURN(uint8_t * wp, ctx.map(d.weight_base, expected_weight_bytes(d), false, "CNA weights"));
    const PackedGemmB& weights = packed_fp16_weights(d, wp, ctx.dma.content_version(d.weight_base), s);
    const int k = d.kh * d.kw * d.in_c;
    const size_t row_len = static_cast<size_t>(d.kw) * d.in_c;
    const int64_t pixels = static_cast<int64_t>(d.out_w) * d.out_h;
    const uint64_t macs = static_cast<uint64_t>(pixels) * k * weights.n;
    const int64_t band = std::max<int64_t>(1, std::min<int64_t>(kFp16PixelsPerBand, kRowBatchBytes / (sizeof(float) * k)));
    const bool parallel = macs >= kParallelMacs / 8;
    const bool pointwise = pointwise_fp16(d);
    // Bands of whole output rows (about kFp16SinkPixels pixels, at least two
    // per host thread): the sink takes each while its accumulators are in
    // cache. Too few rows to share out: bands of pixels, the sink left to
    // run the whole output afterwards.
    const int threads = host_threads();
    const bool by_rows = !parallel || d.out_h >= 2 * threads;
    if (!by_rows) sink = nullptr;
    const int row_band = std::clamp(static_cast<int>(kFp16SinkPixels / d.out_w), 1, std::max(1, d.out_h / (2 * threads)));
    PaddedImage img;
    if (pointwise && by_rows) {
        // Each band converts its own image rows: no fp32 copy of the whole input.
        size_image(d, &img);
        const float pad = fp16_pad(d);
        parallel_for(d.out_h, parallel ? row_band : d.out_h, [&](int64_t first_row, int64_t last_row) {
            thread_local UninitVector<float> rows;
            for (int64_t y0 = first_row; y0 < last_row; y0 += row_band) {
                const int64_t y1 = std::min<int64_t>(last_row, y0 + row_band);
                rows.resize(static_cast<size_t>(y1 - y0) * d.out_w * k);
                image_rows_f32(d, in, img, pad, rows.data(), static_cast<int>(y0), static_cast<int>(y1),
                               static_cast<int>(y0));
                const int64_t p0 = y0 * d.out_w, p1 = y1 * d.out_w;
                for (int64_t b0 = p0; b0 < p1; b0 += band) {
                    gemm_f32_packed_halves(std::min(band, p1 - b0), rows.data() + static_cast<size_t>(b0 - p0) * k, k, weights,
                                    out->facc.data() + static_cast<size_t>(b0) * out->channels, out->channels, false);
                }
                if (sink != nullptr) sink->rows(static_cast<int>(y0), static_cast<int>(y1));
            }
        });
        out->rows_delivered = sink != nullptr;
        return Status::ok();
    }
    UninitVector<float> image;  // every element written
    build_image_f32(d, in, &img, &image);
    // Accumulators of pixels [p0, p1): im2col rows (a pointwise task's are
    // the image's pixels), a GEMM call per band.
    const auto gemm_pixels = [&](int64_t p0, int64_t p1, std::vector<float>* rows) {
        for (int64_t b0 = p0; b0 < p1; b0 += band) {
            const int64_t n = std::min(band, p1 - b0);
            if (pointwise) {
                gemm_f32_packed_halves(n, image.data() + static_cast<size_t>(b0) * k, k, weights,
                                       out->facc.data() + static_cast<size_t>(b0) * out->channels, out->channels, false);
                continue;
            }
            rows->resize(static_cast<size_t>(n) * k);
            for (int64_t i = 0; i < n; ++i) {
                const int oy = static_cast<int>((b0 + i) / d.out_w), ox = static_cast<int>((b0 + i) % d.out_w);
                for (int ky = 0; ky < d.kh; ++ky) {
                    const float* src = image.data() + ((static_cast<size_t>(oy) * d.stride_y + ky) * img.width +
                                                       static_cast<size_t>(ox) * d.stride_x) * img.channels;
                    std::copy(src, src + row_len, rows->data() + static_cast<size_t>(i) * k + ky * row_len);
                }
            }
            gemm_f32_packed_halves(n, rows->data(), k, weights, out->facc.data() + static_cast<size_t>(b0) * out->channels,
                            out->channels, false);
        }
    };
    if (sink == nullptr) {
        // Fewer bands than two per thread (a task of one or two output rows):
        // an even share of the pixels each, or one thread would do them all.
        int64_t share = band;
        if (parallel && pixels < 2 * threads * band) share = ((pixels + threads - 1) / threads + 3) & ~int64_t{3};
        parallel_for(pixels, parallel ? share : pixels, [&](int64_t p0, int64_t p1) {
            std::vector<float> rows;
            gemm_pixels(p0, p1, &rows);
        });
        return Status::ok();
    }
    parallel_for(d.out_h, parallel ? row_band : d.out_h, [&](int64_t first_row, int64_t last_row) {
        std::vector<float> rows;
        for (int64_t y0 = first_row; y0 < last_row; y0 += row_band) {
            const int64_t y1 = std::min<int64_t>(last_row, y0 + row_band);
            gemm_pixels(y0 * d.out_w, y1 * d.out_w, &rows);
            sink->rows(static_cast<int>(y0), static_cast<int>(y1));
        }
    });
    out->rows_delivered = true;
    return Status::ok();
}

// Rows [y0, y1) of an fp16 depthwise task from the padded fp32 image, a
// window tap at a time over a whole output row (contiguous channels, so the
// products run in vector lanes), in blocks of 64 channels so the row's sums
// stay in cache across the taps; each output still sums its taps in window
// order, and every accumulator is written. Image and weights are float16
// values, so the products are exact and may fuse with the sums.
RKNN_HOT_LOOP_EXACT_PRODUCTS void depthwise_rows_f32(const ConvDesc& d, const PaddedImage& img, const float* __restrict image,
                                      const float* __restrict weights, int channels, float* __restrict facc, int y0,
                                      int y1) {
    constexpr size_t kBlock = 64;
    const size_t pixel_step = static_cast<size_t>(d.stride_x) * img.channels;
    const size_t ch = static_cast<size_t>(channels);
    for (int oy = y0; oy < y1; ++oy) {
        float* __restrict row = facc + static_cast<size_t>(oy) * d.out_w * ch;
        for (size_t c0 = 0; c0 < ch; c0 += kBlock) {
            const size_t cn = std::min(kBlock, ch - c0);
            for (int ky = 0; ky < d.kh; ++ky) {
                const float* line = image + (static_cast<size_t>(oy) * d.stride_y + ky) * img.width * img.channels + c0;
                for (int kx = 0; kx < d.kw; ++kx) {
                    const float* __restrict w = weights + (static_cast<size_t>(ky) * d.kw + kx) * d.in_c + c0;
                    const float* __restrict px = line + static_cast<size_t>(kx) * img.channels;
                    float* __restrict out = row + c0;
                    if (ky == 0 && kx == 0) {
                        for (int ox = 0; ox < d.out_w; ++ox, px += pixel_step, out += ch)
                            for (size_t c = 0; c < cn; ++c) out[c] = px[c] * w[c];
                    } else {
                        for (int ox = 0; ox < d.out_w; ++ox, px += pixel_step, out += ch)
                            for (size_t c = 0; c < cn; ++c) out[c] += px[c] * w[c];
                    }
                }
            }
        }
    }
}

Status depthwise_fp16(TaskContext& ctx, const ConvDesc& d, const uint8_t* in, ConvScratch* s, ConvOutput* out,
                      ConvRowSink* sink) {
    const uint64_t bytes = expected_weight_bytes(d);
    RKNN_ASSIGN_OR_RETURN(uint8_t * wp, ctx.map(d.weight_base, bytes, false, "CNA weights"));
    std::vector<float> raw(bytes / 2);
    halves_to_floats(wp, raw.data(), raw.size());
    unpack_depthwise_weights(d, raw.data(), &s->fweights);
    const int ch = out->channels;
    if (ch > d.in_c) return ctx.unsupported("an fp16 depthwise task of %d outputs over %d input channels", ch, d.in_c);
    if (cube_paths.load(std::memory_order_relaxed) && depthwise_fp16_cube_fits(d)) {
        cube_path_tasks.fetch_add(1, std::memory_order_relaxed);
        depthwise_fp16_from_cube(d, in, s->fweights.data(), out, sink);
        return Status::ok();
    }
    PaddedImage img;
    UninitVector<float> image;  // every element written
    build_image_f32(d, in, &img, &image);
    const uint64_t macs = static_cast<uint64_t>(d.out_w) * d.out_h * d.kh * d.kw * static_cast<uint64_t>(ch);
    // With a sink, bands of rows (within each thread's share) go to it while
    // their accumulators are in cache.
    const int row_band = sink != nullptr ? std::max(1, static_cast<int>(kFp16SinkPixels / d.out_w)) : d.out_h;
    parallel_for(d.out_h, macs >= kParallelMacs / 8 ? 1 : d.out_h, [&](int64_t first_row, int64_t last_row) {
        for (int64_t y0 = first_row; y0 < last_row; y0 += row_band) {
            const int64_t y1 = std::min<int64_t>(last_row, y0 + row_band);
            depthwise_rows_f32(d, img, image.data(), s->fweights.data(), ch, out->facc.data(), static_cast<int>(y0),
                               static_cast<int>(y1));
            if (sink != nullptr) sink->rows(static_cast<int>(y0), static_cast<int>(y1));
        }
    });
    out->rows_delivered = sink != nullptr;
    return Status::ok();
}

}  // namespace

void set_conv_cube_paths(bool enabled) { cube_paths.store(enabled, std::memory_order_relaxed); }

uint64_t conv_cube_path_tasks() { return cube_path_tasks.load(std::memory_order_relaxed); }

Status run_conv_unit(TaskContext& ctx, bool want_window_sum, ConvScratch* scratch, ConvOutput* out,
                     ConvRowSink* sink) {
    ConvDesc d;
    RKNN_RETURN_IF_ERROR(decode(ctx, &d));
    const uint64_t weights_needed = expected_weight_bytes(d);
    if (!d.depthwise && d.weight_bytes != weights_needed) {
        return ctx.bad_program("CNA WEIGHT_BYTES %llu, but %d kernels of %dx%dx%d need %llu",
                               static_cast<unsigned long long>(d.weight_bytes), d.kernels, d.kw, d.kh, d.in_c,
                               static_cast<unsigned long long>(weights_needed));
    }
    RKNN_ASSIGN_OR_RETURN(const uint8_t* in, map_input(ctx, d));

    out->width = d.out_w;
    out->height = d.out_h;
    out->channels = d.out_c;
    out->is_float = d.fp16;
    out->window_sum_per_channel = d.depthwise;
    out->input_base = d.input_base;
    out->input_span = input_span(d);
    out->rows_delivered = false;
    const size_t elems = static_cast<size_t>(d.out_w) * d.out_h * d.out_c;
    const bool want_sum = want_window_sum && !d.fp16;
    // The int8 loops write every sum and accumulator (resize, not assign);
    // fp16 direct tasks leave the lanes of channels beyond the kernels.
    out->window_sum.resize(want_sum ? (d.depthwise ? elems : static_cast<size_t>(d.out_w) * d.out_h) : 0);
    bool by_rows = false;
    if (d.fp16) {
        out->acc.clear();
        // Both fp16 loops write every accumulator, except direct tasks with
        // fewer kernels than output channels (the lanes beyond stay zero).
        if (!d.depthwise && d.kernels < d.out_c) {
            out->facc.assign(elems, 0.0f);
        } else {
            out->facc.resize(elems);
        }
        if (sink != nullptr) RKNN_RETURN_IF_ERROR(sink->begin(*out, &by_rows));
        ConvRowSink* rows = by_rows ? sink : nullptr;
        return d.depthwise ? depthwise_fp16(ctx, d, in, scratch, out, rows) : direct_fp16(ctx, d, in, scratch, out, rows);
    }
    out->facc.clear();
    out->acc.resize(elems);  // direct tasks' weights hold a zero kernel for each channel beyond the kernels
    // Rows go to the sink as they are done, unless they still need CLIP_TRUNCATE.
    if (sink != nullptr && d.clip_truncate == 0) RKNN_RETURN_IF_ERROR(sink->begin(*out, &by_rows));
    ConvRowSink* rows = by_rows ? sink : nullptr;
    RKNN_RETURN_IF_ERROR(d.depthwise ? depthwise_int8(ctx, d, in, want_sum, scratch, out, rows)
                                     : direct_int8(ctx, d, in, want_sum, scratch, out, rows));
    if (d.clip_truncate > 0) {
        for (auto& v : out->acc) v = static_cast<int32_t>(shift_round(v, d.clip_truncate, d.truncate_rounding));
    }
    return Status::ok();
}

}  // namespace rknn::emulator
