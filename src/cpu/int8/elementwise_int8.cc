// int8 element-wise binary ops with the NPU's arithmetic (DPU element-wise
// stage, hw-facts 3.8 and 4.1), with NumPy broadcasting:
//
//   Add/Sub:  y = sat(round_shift((a - za) * Ma +/- (b - zb) * Mb, S) + zy)
//   Mul:      y = sat(round_shift((a - za) * (b - zb) * M, S) + zy)
//   Max/Min:  y = sat(round_shift(max/min((a - za) * Ma, (b - zb) * Mb), S) + zy)
//
// Ma/2^S ~= sa/sy and Mb/2^S ~= sb/sy share one shift; M/2^S ~= sa*sb/sy.
// A single rounding at the end, as in the output converter.
#include <algorithm>
#include <vector>

#include "base/hot_loops.h"
#include "base/parallel.h"
#include "cpu/int8/epilogue.h"
#include "cpu/int8/int8_kernels.h"
#include "cpu/kernels/kernel_util.h"

namespace rknn::cpu::int8 {
namespace {

enum class Kind { kAdd, kSub, kMul, kMax, kMin };

// The zero points, multipliers and shift of one op, copied into the row
// loops' locals (the byte stores could otherwise alias them).
struct BinaryCodes {
    int64_t za, zb, zy, ma, mb;
    int shift;
};

// The op's sum before the shift, from the inputs less their zero points.
template <Kind kKind, typename T>
inline T combine(T da, T db, T ma, T mb) {
    switch (kKind) {
    case Kind::kAdd: return da * ma + db * mb;
    case Kind::kSub: return da * ma - db * mb;
    case Kind::kMul: return da * db * ma;
    case Kind::kMax: return std::max(da * ma, db * mb);
    case Kind::kMin: return std::min(da * ma, db * mb);
    }
    return 0;
}

template <Kind kKind>
void binary_row_of(const BinaryCodes& k, const int8_t* a, int64_t step_a, const int8_t* b, int64_t step_b, int8_t* out,
                   int64_t n) {
    const int64_t za = k.za, zb = k.zb, zy = k.zy, ma = k.ma, mb = k.mb;
    const int shift = k.shift;
    for (int64_t i = 0; i < n; ++i) {
        const int64_t v = combine<kKind, int64_t>(a[i * step_a] - za, b[i * step_b] - zb, ma, mb);
        out[i] = saturate_int8(round_shift(v, shift) + zy);
    }
}

// The same values in 32-bit lanes, the steps known at compile time, so the
// loop vectorises (8 to 16 lanes where row loops of int64s ran one at a
// time): |a - za| and |b - zb| <= 255 and |M| <= 32767 (requant.h), so every
// product and sum fits (a Mul's 255 * 255 * 32767 < 2^31), and the rounding
// shift is round_shift's for shifts of 1 to 30.
template <Kind kKind, int kStepA, int kStepB>
RKNN_HOT_LOOP void binary_row32(const BinaryCodes& k, const int8_t* a, const int8_t* b, int8_t* out, int64_t n) {
    const auto za = static_cast<int32_t>(k.za), zb = static_cast<int32_t>(k.zb), zy = static_cast<int32_t>(k.zy);
    const auto ma = static_cast<int32_t>(k.ma), mb = static_cast<int32_t>(k.mb);
    const int shift = k.shift;
    const int32_t half = int32_t{1} << (shift - 1);
    for (int64_t i = 0; i < n; ++i) {
        const int32_t v = combine<kKind, int32_t>(a[i * kStepA] - za, b[i * kStepB] - zb, ma, mb);
        const int32_t floor_div = v >> shift;
        const int32_t remainder = v - floor_div * (int32_t{1} << shift);  // in [0, 2^shift)
        // Round up past the half, and on the half when floor_div is odd, in
        // sign bits (the vectoriser takes no bool-to-int conversions here).
        const int32_t above = (half - remainder) >> 31;         // -1 when remainder > half
        const int32_t on = ((remainder ^ half) - 1) >> 31;       // -1 when remainder == half
        const int32_t y = floor_div + ((above | (on & floor_div)) & 1) + zy;
        out[i] = static_cast<int8_t>(std::min(127, std::max(-128, y)));
    }
}

template <Kind kKind>
bool binary_row32_of(const BinaryCodes& k, const int8_t* a, int64_t step_a, const int8_t* b, int64_t step_b,
                     int8_t* out, int64_t n) {
    if (step_a == 1 && step_b == 1) return binary_row32<kKind, 1, 1>(k, a, b, out, n), true;
    if (step_a == 1 && step_b == 0) return binary_row32<kKind, 1, 0>(k, a, b, out, n), true;
    if (step_a == 0 && step_b == 1) return binary_row32<kKind, 0, 1>(k, a, b, out, n), true;
    return false;
}

// Whether binary_row32 holds the op's values: 8-bit zero points, 16-bit
// multipliers, a shift of 1 to 30.
bool fits_32_bits(const BinaryCodes& k) {
    const auto byte = [](int64_t z) { return z >= -128 && z <= 127; };
    const auto mult = [](int64_t m) { return m >= -32767 && m <= 32767; };
    return byte(k.za) && byte(k.zb) && k.zy >= -(int64_t{1} << 20) && k.zy <= (int64_t{1} << 20) && mult(k.ma) &&
           mult(k.mb) && k.shift >= 1 && k.shift <= 30;
}

// n outputs from inputs stepping step_a / step_b elements (0: broadcast).
void binary_row(Kind kind, const BinaryCodes& k, const int8_t* a, int64_t step_a, const int8_t* b, int64_t step_b,
                int8_t* out, int64_t n) {
    if (n > 1 && fits_32_bits(k)) {
        bool done = false;
        switch (kind) {
        case Kind::kAdd: done = binary_row32_of<Kind::kAdd>(k, a, step_a, b, step_b, out, n); break;
        case Kind::kSub: done = binary_row32_of<Kind::kSub>(k, a, step_a, b, step_b, out, n); break;
        case Kind::kMul: done = binary_row32_of<Kind::kMul>(k, a, step_a, b, step_b, out, n); break;
        case Kind::kMax: done = binary_row32_of<Kind::kMax>(k, a, step_a, b, step_b, out, n); break;
        case Kind::kMin: done = binary_row32_of<Kind::kMin>(k, a, step_a, b, step_b, out, n); break;
        }
        if (done) return;
    }
    switch (kind) {
    case Kind::kAdd: return binary_row_of<Kind::kAdd>(k, a, step_a, b, step_b, out, n);
    case Kind::kSub: return binary_row_of<Kind::kSub>(k, a, step_a, b, step_b, out, n);
    case Kind::kMul: return binary_row_of<Kind::kMul>(k, a, step_a, b, step_b, out, n);
    case Kind::kMax: return binary_row_of<Kind::kMax>(k, a, step_a, b, step_b, out, n);
    case Kind::kMin: return binary_row_of<Kind::kMin>(k, a, step_a, b, step_b, out, n);
    }
}

Status binary(const KernelArgs& args, Kind kind) {
    if (args.inputs.size() != 2) return Status(StatusCode::kUnimplemented, "int8 element-wise ops take two inputs");
    const HostTensor& a = *args.inputs[0];
    const HostTensor& b = *args.inputs[1];
    HostTensor* y = args.outputs[0];
    RKNN_RETURN_IF_ERROR(require_int8(a, "input A"));
    RKNN_RETURN_IF_ERROR(require_int8(b, "input B"));
    RKNN_RETURN_IF_ERROR(require_int8(*y, "the output"));
    if (a.quant.per_channel() || b.quant.per_channel() || y->quant.per_channel())
        return Status(StatusCode::kUnimplemented, "per-tensor quantisation only");
    const double sa = a.quant.scale();
    const double sb = b.quant.scale();
    const double sy = y->quant.scale();
    const Requant r = kind == Kind::kMul ? make_requant(sa * sb / sy) : make_requant({sa / sy, sb / sy});
    const int64_t za = a.quant.zero_point();
    const int64_t zb = b.quant.zero_point();
    const int64_t zy = y->quant.zero_point();
    const std::vector<std::vector<int64_t>> strides = {kernels::broadcast_strides(a.shape(), y->shape()),
                                                       kernels::broadcast_strides(b.shape(), y->shape())};
    const int8_t* pa = a.data<int8_t>();
    const int8_t* pb = b.data<int8_t>();
    int8_t* po = y->data<int8_t>();
    const int64_t ma = r.multiplier(0), mb = kind == Kind::kMul ? 0 : r.multiplier(1);
    const BinaryCodes codes{za, zb, zy, ma, mb, r.shift};
    // Rows along the last dim, where each input steps by 0 or 1: a plain
    // loop per row (the broadcast bias of a classifier, a residual), rows
    // over the host's threads; the general odometer otherwise.
    const graph::Shape& shape = y->shape();
    const int64_t last = shape.empty() ? 1 : shape.back();
    const int64_t step_a = shape.empty() ? 0 : strides[0].back(), step_b = shape.empty() ? 0 : strides[1].back();
    if (last > 0 && (step_a == 0 || step_a == 1) && (step_b == 0 || step_b == 1)) {
        const int64_t rows = y->numel() / last;
        std::vector<int64_t> row_a(static_cast<size_t>(rows)), row_b(static_cast<size_t>(rows));
        {
            graph::Shape outer(shape.begin(), shape.end() - (shape.empty() ? 0 : 1));
            std::vector<std::vector<int64_t>> outer_strides = strides;
            for (auto& st : outer_strides)
                if (!st.empty()) st.pop_back();
            kernels::for_each_broadcast(outer, outer_strides, [&](int64_t i, int64_t oa, int64_t ob, int64_t) {
                row_a[static_cast<size_t>(i)] = oa;
                row_b[static_cast<size_t>(i)] = ob;
            });
        }
        const auto run_rows = [&](int64_t r0, int64_t r1) {
            for (int64_t row = r0; row < r1; ++row)
                binary_row(kind, codes, pa + row_a[static_cast<size_t>(row)], step_a, pb + row_b[static_cast<size_t>(row)],
                           step_b, po + row * last, last);
        };
        parallel_for(rows, y->numel() >= (int64_t{1} << 15) ? std::max<int64_t>(1, (int64_t{1} << 13) / last) : rows, run_rows);
        return Status::ok();
    }
    kernels::for_each_broadcast(y->shape(), strides, [&](int64_t i, int64_t oa, int64_t ob, int64_t) {
        binary_row(kind, codes, pa + oa, 0, pb + ob, 0, po + i, 1);
    });
    return Status::ok();
}

}  // namespace

Status add(const KernelArgs& args) { return binary(args, Kind::kAdd); }
Status sub(const KernelArgs& args) { return binary(args, Kind::kSub); }
Status mul(const KernelArgs& args) { return binary(args, Kind::kMul); }
Status max(const KernelArgs& args) { return binary(args, Kind::kMax); }
Status min(const KernelArgs& args) { return binary(args, Kind::kMin); }

}  // namespace rknn::cpu::int8
