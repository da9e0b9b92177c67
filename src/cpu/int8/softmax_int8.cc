// int8 Softmax for CPU steps (the NPU has no form of it). A row of int8
// codes takes at most 256 distinct values, so its exponentials are those of
// its distinct codes, and its output is a table of 256 codes looked up per
// element: a long row costs its max, a histogram and the lookup, where the
// float path widens, exponentiates and quantises every element. Rows shorter
// than the tables are widened and go through the float path's own row form
// (softmax_row_simd), giving the codes the float path gives.
//
// The long rows' arithmetic is the float reference form's (normalization.cc)
// between the conversions the executor would do around it (cpu/convert.cc):
// each code dequantised to float as to_float32 does, minus the row's
// largest value in float, its exp in double, the row's total in double, one
// division rounded to float, quantised as from_float32 does. In long rows
// the total is summed per code (count x exp) instead of element by element,
// which can move it by a few units in its last place: far inside the
// tolerance that the float path's vector form has (softmax_simd.h).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "base/parallel.h"
#include "cpu/convert.h"
#include "cpu/int8/epilogue.h"
#include "cpu/int8/int8_kernels.h"
#include "cpu/kernels/kernel_util.h"
#include "cpu/kernels/softmax_simd.h"

namespace rknn::cpu::int8 {
namespace {

// Rows at least this long go through the per-code tables.
constexpr int64_t kTableRow = 256;

}  // namespace

Status softmax(const KernelArgs& args) {
    const HostTensor& x = *args.inputs[0];
    HostTensor& y = *args.outputs[0];
    RKNN_RETURN_IF_ERROR(require_int8(x, "the input"));
    RKNN_RETURN_IF_ERROR(require_int8(y, "the output"));
    if (x.quant.per_channel() || y.quant.per_channel())
        return Status(StatusCode::kUnimplemented, "int8 Softmax takes per-tensor quantisation");
    RKNN_ASSIGN_OR_RETURN(const kernels::AxisSplit s, kernels::softmax_view(args));
    // Strided rows stay with the float kernel.
    if (s.inner != 1) return Status(StatusCode::kUnimplemented, "int8 Softmax over an axis that is not the last");
    const double in_scale = x.quant.scale(0), out_scale = y.quant.scale(0);
    if (!(in_scale > 0) || !std::isfinite(in_scale))
        return Status(StatusCode::kUnimplemented, "int8 Softmax with an input scale that is not positive and finite");
    // Every code's value, as to_float32 widens it.
    float value[256];
    for (int code = -128; code < 128; ++code)
        value[code + 128] = static_cast<float>((static_cast<double>(code) - x.quant.zero_point(0)) * in_scale);
    for (float v : value)
        if (!std::isfinite(v)) return Status(StatusCode::kUnimplemented, "int8 Softmax whose codes widen beyond float");
    const double out_zp = y.quant.zero_point(0);
    // As from_float32 quantises (a scale it cannot divide by gives the zero point).
    const auto quantize = [&](const float* v, int64_t count, int8_t* codes) {
        if (out_scale > 0) {
            quantize_int8(v, count, out_scale, out_zp, codes);
        } else {
            std::memset(codes, static_cast<int8_t>(std::clamp(std::nearbyint(out_zp), -128.0, 127.0)), static_cast<size_t>(count));
        }
    };
    const int8_t* in = x.data<int8_t>();
    int8_t* out = y.data<int8_t>();
    const int64_t n = s.axis;
    if (n == 0 || s.outer == 0) return Status::ok();  // nothing to write
    const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(n, 1));
    // Each code's softmax value in one row, as the reference form computes it
    // (the total summed per code); 0 for codes the row lacks.
    const auto per_code = [&](const int8_t* row, float* result) {
        uint32_t count[256] = {};
        for (int64_t i = 0, len = n; i < len; ++i) ++count[row[i] + 128];
        int largest = 255;
        while (count[largest] == 0) --largest;
        const float top = value[largest];  // the largest value: codes and values rise together
        double e[256];
        double total = 0.0;
        for (int c = 0; c < 256; ++c) {
            if (count[c] == 0) continue;
            e[c] = std::exp(static_cast<double>(value[c] - top));
            total += static_cast<double>(count[c]) * e[c];
        }
        for (int c = 0; c < 256; ++c) result[c] = count[c] != 0 ? static_cast<float>(e[c] / total) : 0.0f;
    };
    parallel_for(s.outer, grain, [&](int64_t r0, int64_t r1) {
        if (n < kTableRow) {
            // Short rows: widened, through the float kernel's own row form (its
            // vector exp), and quantised together; cheaper here than the tables.
            thread_local std::vector<float> widened, result;
            widened.resize(static_cast<size_t>(n));
            result.resize(static_cast<size_t>((r1 - r0) * n));
            for (int64_t r = r0; r < r1; ++r) {
                const int8_t* row = in + r * n;
                float* dst = result.data() + (r - r0) * n;
                for (int64_t i = 0; i < n; ++i) widened[static_cast<size_t>(i)] = value[row[i] + 128];
                if (kernels::softmax_row_simd(widened.data(), dst, n)) continue;
                float codes[256];  // a row the vector form refuses (finite values never are)
                per_code(row, codes);
                for (int64_t i = 0; i < n; ++i) dst[i] = codes[row[i] + 128];
            }
            quantize(result.data(), (r1 - r0) * n, out + r0 * n);
            return;
        }
        for (int64_t r = r0; r < r1; ++r) {
            const int8_t* row = in + r * n;
            float result[256];
            per_code(row, result);
            int8_t code[256];
            quantize(result, 256, code);
            int8_t* dst = out + r * n;
            for (int64_t i = 0, len = n; i < len; ++i) dst[i] = code[row[i] + 128];  // a local bound: int8 stores may alias the captured n
        }
    });
    return Status::ok();
}

}  // namespace rknn::cpu::int8
