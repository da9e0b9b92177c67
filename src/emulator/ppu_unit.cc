#include "emulator/ppu_unit.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "base/half.h"
#include "base/hot_loops.h"
#include "base/parallel.h"
#include "emulator/cube.h"
#include "emulator/fixed_point.h"

namespace rknn::emulator {

namespace f = hw::field;
namespace r = hw::reg;
using hw::Precision;

namespace {

constexpr int64_t kParallelTaps = int64_t{1} << 16;  // smaller pools run on one host thread

enum Method : uint32_t { kAverage = 0, kMax = 1, kMin = 2 };

struct Pool {
    Precision prec = Precision::kInt8;
    uint32_t method = kAverage;
    int kw = 1, kh = 1, sx = 1, sy = 1;
    int pad_l = 0, pad_t = 0, pad_r = 0, pad_b = 0;
    uint32_t pad_value = 0;
    uint32_t recip_w = 0, recip_h = 0;
    CubeLayout in, out;
};

Status decode(TaskContext& ctx, Pool* p) {
    const RegisterFile& g = ctx.regs;
    const uint32_t mode = g.exec(r::PPU_OPERATION_MODE_CFG);
    p->method = f::PPU_OPERATION_MODE_CFG_POOLING_METHOD.get(mode);
    if (p->method > kMin) return ctx.unsupported("PPU pooling method %u", p->method);
    if (f::PPU_OPERATION_MODE_CFG_INDEX_EN.get(mode)) return ctx.unsupported("PPU index output is not modelled");
    if (g.exec(f::PPU_DATA_FORMAT_DPU_FLYIN)) return ctx.unsupported("PPU input straight from the DPU is not modelled");
    p->prec = static_cast<Precision>(g.exec(f::PPU_DATA_FORMAT_PROC_PRECISION));
    if (p->prec != Precision::kInt8 && p->prec != Precision::kInt16 && p->prec != Precision::kFp16) {
        return ctx.unsupported("PPU precision %s", hw::precision_name(p->prec));
    }
    const int esize = hw::precision_bytes(p->prec);
    const int iw = static_cast<int>(g.exec(f::PPU_DATA_CUBE_IN_WIDTH_CUBE_IN_WIDTH)) + 1;
    const int ih = static_cast<int>(g.exec(f::PPU_DATA_CUBE_IN_HEIGHT_CUBE_IN_HEIGHT)) + 1;
    const int ic = static_cast<int>(g.exec(f::PPU_DATA_CUBE_IN_CHANNEL_CUBE_IN_CHANNEL)) + 1;
    const int ow = static_cast<int>(g.exec(f::PPU_DATA_CUBE_OUT_WIDTH_CUBE_OUT_WIDTH)) + 1;
    const int oh = static_cast<int>(g.exec(f::PPU_DATA_CUBE_OUT_HEIGHT_CUBE_OUT_HEIGHT)) + 1;
    const int oc = static_cast<int>(g.exec(f::PPU_DATA_CUBE_OUT_CHANNEL_CUBE_OUT_CHANNEL)) + 1;
    if (oc != ic) return ctx.bad_program("PPU output channels %d differ from input channels %d", oc, ic);
    if (static_cast<int>(g.exec(f::PPU_RDMA_RDMA_CUBE_IN_WIDTH_CUBE_IN_WIDTH)) + 1 != iw ||
        static_cast<int>(g.exec(f::PPU_RDMA_RDMA_CUBE_IN_HEIGHT_CUBE_IN_HEIGHT)) + 1 != ih ||
        static_cast<int>(g.exec(f::PPU_RDMA_RDMA_CUBE_IN_CHANNEL_CUBE_IN_CHANNEL)) + 1 != ic) {
        return ctx.bad_program("PPU_RDMA and PPU input cubes differ");
    }
    p->kw = static_cast<int>(g.exec(f::PPU_POOLING_KERNEL_CFG_KERNEL_WIDTH)) + 1;
    p->kh = static_cast<int>(g.exec(f::PPU_POOLING_KERNEL_CFG_KERNEL_HEIGHT)) + 1;
    p->sx = static_cast<int>(g.exec(f::PPU_POOLING_KERNEL_CFG_KERNEL_STRIDE_WIDTH)) + 1;
    p->sy = static_cast<int>(g.exec(f::PPU_POOLING_KERNEL_CFG_KERNEL_STRIDE_HEIGHT)) + 1;
    p->pad_l = static_cast<int>(g.exec(f::PPU_POOLING_PADDING_CFG_PAD_LEFT));
    p->pad_t = static_cast<int>(g.exec(f::PPU_POOLING_PADDING_CFG_PAD_TOP));
    p->pad_r = static_cast<int>(g.exec(f::PPU_POOLING_PADDING_CFG_PAD_RIGHT));
    p->pad_b = static_cast<int>(g.exec(f::PPU_POOLING_PADDING_CFG_PAD_BOTTOM));
    p->pad_value = g.exec(r::PPU_PADDING_VALUE_1_CFG);
    p->recip_w = g.exec(f::PPU_RECIP_KERNEL_WIDTH_RECIP_KERNEL_WIDTH);
    p->recip_h = g.exec(f::PPU_RECIP_KERNEL_HEIGHT_RECIP_KERNEL_HEIGHT);
    if ((ow - 1) * p->sx + p->kw > iw + p->pad_l + p->pad_r || (oh - 1) * p->sy + p->kh > ih + p->pad_t + p->pad_b) {
        return ctx.bad_program("PPU output %dx%d needs windows beyond the %dx%d input and its padding", ow, oh, iw, ih);
    }

    // RK356x: 8-byte atoms, strides in raw bytes (a one-pixel row is 8).
    const bool rk356x = ctx.soc.arch == hw::NpuArch::kRk356x;
    if (rk356x && p->prec != Precision::kInt8) return ctx.unsupported("PPU precision %s on %s", hw::precision_name(p->prec), ctx.soc.name);
    const uint32_t unit_mask = rk356x ? ~0u : ~0xfu;
    p->in = packed_cube(g.exec(r::PPU_RDMA_RDMA_SRC_BASE_ADDR), iw, ih, ic, esize, ctx.soc.atom_bytes);
    const uint64_t line = g.exec(r::PPU_RDMA_RDMA_SRC_LINE_STRIDE) & unit_mask;
    const uint64_t surf = g.exec(r::PPU_RDMA_RDMA_SRC_SURF_STRIDE) & unit_mask;
    if (line != 0) p->in.row_stride = line;
    if (surf != 0) p->in.surf_stride = surf;
    p->out = packed_cube(g.exec(r::PPU_DST_BASE_ADDR) & (rk356x ? ~0x7u : ~0xfu), ow, oh, oc, esize, ctx.soc.atom_bytes);
    const uint64_t dsurf = g.exec(r::PPU_DST_SURF_STRIDE) & unit_mask;
    if (dsurf != 0) p->out.surf_stride = dsurf;
    return Status::ok();
}

int64_t read_int(const uint8_t* p, int esize) {
    if (esize == 1) return static_cast<int8_t>(*p);
    int16_t v;
    std::memcpy(&v, p, 2);
    return v;
}

void write_int(uint8_t* p, int esize, int64_t v) {
    if (esize == 1) {
        *p = static_cast<uint8_t>(static_cast<int8_t>(saturate(v, -128, 127)));
        return;
    }
    const auto s = static_cast<int16_t>(saturate(v, -32768, 32767));
    std::memcpy(p, &s, 2);
}

float read_half(const uint8_t* p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return half_to_float(h);
}

// int8 max / min pools, one output row of one surface, whole atoms of kLanes
// channels per tap (the per-channel loop below gives the same bytes: a pad
// value beyond int8 saturates the result exactly as it would win or lose).
template <int kLanes>
RKNN_HOT_LOOP void pool_int8_row(const Pool& p, const uint8_t* in, uint8_t* out, int surface, int oy, int8_t pad) {
    const bool is_max = p.method == kMax;
    const int lanes = std::min(kLanes, p.in.channels - surface * kLanes);
    const uint8_t* plane = in + static_cast<uint64_t>(surface) * p.in.surf_stride;
    uint8_t* dst_row = out + static_cast<uint64_t>(surface) * p.out.surf_stride + static_cast<uint64_t>(oy) * p.out.row_stride;
    for (int ox = 0; ox < p.out.width; ++ox) {
        int8_t acc[kLanes];
        for (int i = 0; i < kLanes; ++i) acc[i] = is_max ? -128 : 127;
        for (int ky = 0; ky < p.kh; ++ky) {
            const int iy = oy * p.sy + ky - p.pad_t;
            for (int kx = 0; kx < p.kw; ++kx) {
                const int ix = ox * p.sx + kx - p.pad_l;
                int8_t tap[kLanes];
                if (iy >= 0 && iy < p.in.height && ix >= 0 && ix < p.in.width) {
                    std::memcpy(tap, plane + static_cast<uint64_t>(iy) * p.in.row_stride + static_cast<uint64_t>(ix) * kLanes, kLanes);
                } else {
                    for (int i = 0; i < kLanes; ++i) tap[i] = pad;
                }
                if (is_max) {
                    for (int i = 0; i < kLanes; ++i) acc[i] = std::max(acc[i], tap[i]);
                } else {
                    for (int i = 0; i < kLanes; ++i) acc[i] = std::min(acc[i], tap[i]);
                }
            }
        }
        std::memcpy(dst_row + static_cast<uint64_t>(ox) * kLanes, acc, static_cast<size_t>(lanes));
    }
}

// int8 average pools, one output row of one surface: the window's codes
// summed per lane (int32 holds any window of 5-bit kernel sizes), then the
// general path's rounding of sum x RECIP_W x RECIP_H >> 32.
template <int kLanes>
RKNN_HOT_LOOP void average_int8_row(const Pool& p, const uint8_t* in, uint8_t* out, int surface, int oy, int8_t pad) {
    const int lanes = std::min(kLanes, p.in.channels - surface * kLanes);
    const uint8_t* plane = in + static_cast<uint64_t>(surface) * p.in.surf_stride;
    uint8_t* dst_row = out + static_cast<uint64_t>(surface) * p.out.surf_stride + static_cast<uint64_t>(oy) * p.out.row_stride;
    const int64_t recip = static_cast<int64_t>(p.recip_w) * static_cast<int64_t>(p.recip_h);
    for (int ox = 0; ox < p.out.width; ++ox) {
        int32_t acc[kLanes] = {};
        // The taps inside the image summed a row run at a time (no test per
        // tap), the padded ones counted and added once: the same sums.
        const int first_x = ox * p.sx - p.pad_l;
        const int kx0 = std::max(0, -first_x), kx1 = std::min(p.kw, p.in.width - first_x);
        const int inside_row = std::max(0, kx1 - kx0);
        int32_t pad_taps = 0;
        for (int ky = 0; ky < p.kh; ++ky) {
            const int iy = oy * p.sy + ky - p.pad_t;
            if (iy < 0 || iy >= p.in.height) {
                pad_taps += p.kw;
                continue;
            }
            pad_taps += p.kw - inside_row;
            const auto* tap = reinterpret_cast<const int8_t*>(plane + static_cast<uint64_t>(iy) * p.in.row_stride +
                                                              static_cast<uint64_t>(first_x + kx0) * kLanes);
            for (int kx = 0; kx < inside_row; ++kx, tap += kLanes)
                for (int i = 0; i < kLanes; ++i) acc[i] += tap[i];
        }
        for (int i = 0; i < kLanes; ++i) acc[i] += pad_taps * pad;
        uint8_t* dst = dst_row + static_cast<uint64_t>(ox) * kLanes;
        for (int i = 0; i < lanes; ++i) write_int(dst + i, 1, shift_round(acc[i] * recip, 32));
    }
}

// The int8 fast paths over every surface and row (max / min pools on whole
// atoms, averages per lane); false when the task is not one of them.
bool pool_int8_atoms(const Pool& p, const uint8_t* in, uint8_t* out) {
    if (p.prec != Precision::kInt8) return false;
    // Averages: a pad value beyond int8 or a window beyond 31 taps a side takes the general path.
    const auto pad_value = static_cast<int32_t>(p.pad_value);
    const bool average = p.method == kAverage && pad_value >= -128 && pad_value <= 127 && p.kh <= 31 && p.kw <= 31;
    if (p.method != kMax && p.method != kMin && !average) return false;
    const int lanes = p.in.c2();
    if ((lanes != 16 && lanes != 8) || p.out.c2() != lanes) return false;
    const auto pad = static_cast<int8_t>(saturate(static_cast<int32_t>(p.pad_value), -128, 127));
    const int surfaces = p.in.surfaces();
    const int64_t work = static_cast<int64_t>(p.out.width) * p.out.height * p.kh * p.kw * p.in.channels;
    const int64_t rows = static_cast<int64_t>(surfaces) * p.out.height;
    parallel_for(rows, work >= kParallelTaps ? 1 : rows, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const int surface = static_cast<int>(r / p.out.height), oy = static_cast<int>(r % p.out.height);
            if (average) {
                if (lanes == 16) {
                    average_int8_row<16>(p, in, out, surface, oy, pad);
                } else {
                    average_int8_row<8>(p, in, out, surface, oy, pad);
                }
            } else if (lanes == 16) {
                pool_int8_row<16>(p, in, out, surface, oy, pad);
            } else {
                pool_int8_row<8>(p, in, out, surface, oy, pad);
            }
        }
    });
    return true;
}

}  // namespace

Status run_ppu_unit(TaskContext& ctx) {
    Pool p;
    RKNN_RETURN_IF_ERROR(decode(ctx, &p));
    RKNN_ASSIGN_OR_RETURN(uint8_t * in, map_cube(ctx, p.in, false, "PPU_RDMA input"));
    RKNN_ASSIGN_OR_RETURN(uint8_t * out, map_cube(ctx, p.out, true, "PPU output"));
    if (pool_int8_atoms(p, in, out)) return Status::ok();
    const bool fp = p.prec == Precision::kFp16;
    const int esize = p.in.elem_bytes;
    const int64_t pad_int = static_cast<int32_t>(p.pad_value);
    const float pad_fp = half_to_float(static_cast<uint16_t>(p.pad_value & 0xffff));
    const float recip_fp = half_to_float(static_cast<uint16_t>(p.recip_w)) * half_to_float(static_cast<uint16_t>(p.recip_h));
    // Channels are independent: large cubes share them out over the host's threads.
    const int64_t work = static_cast<int64_t>(p.out.width) * p.out.height * p.kh * p.kw * p.in.channels;
    parallel_for(p.in.channels, work >= kParallelTaps ? 1 : p.in.channels, [&](int64_t c0, int64_t c1) {
        for (int c = static_cast<int>(c0); c < c1; ++c) {
            for (int oy = 0; oy < p.out.height; ++oy) {
                for (int ox = 0; ox < p.out.width; ++ox) {
                    int64_t iacc = p.method == kAverage ? 0 : (p.method == kMax ? std::numeric_limits<int64_t>::min()
                                                                                 : std::numeric_limits<int64_t>::max());
                    float facc = p.method == kAverage ? 0.0f : (p.method == kMax ? -HUGE_VALF : HUGE_VALF);
                    for (int ky = 0; ky < p.kh; ++ky) {
                        const int iy = oy * p.sy + ky - p.pad_t;
                        for (int kx = 0; kx < p.kw; ++kx) {
                            const int ix = ox * p.sx + kx - p.pad_l;
                            const bool inside = iy >= 0 && iy < p.in.height && ix >= 0 && ix < p.in.width;
                            if (fp) {
                                const float v = inside ? read_half(in + p.in.offset(c, iy, ix)) : pad_fp;
                                facc = p.method == kAverage ? facc + v : (p.method == kMax ? std::max(facc, v) : std::min(facc, v));
                            } else {
                                const int64_t v = inside ? read_int(in + p.in.offset(c, iy, ix), esize) : pad_int;
                                iacc = p.method == kAverage ? iacc + v : (p.method == kMax ? std::max(iacc, v) : std::min(iacc, v));
                            }
                        }
                    }
                    uint8_t* dst = out + p.out.offset(c, oy, ox);
                    if (fp) {
                        if (p.method == kAverage) facc = std::ldexp(facc * recip_fp, -32);
                        const uint16_t h = float_to_half(facc);
                        std::memcpy(dst, &h, 2);
                    } else {
                        if (p.method == kAverage) {
                            iacc = shift_round(iacc * static_cast<int64_t>(p.recip_w) * static_cast<int64_t>(p.recip_h), 32);
                        }
                        write_int(dst, esize, iacc);
                    }
                }
            }
        }
    });
    return Status::ok();
}

}  // namespace rknn::emulator
