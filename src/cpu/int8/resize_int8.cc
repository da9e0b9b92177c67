// int8 nearest-neighbour Resize / Upsample. Each output element is one input
// element, so the quantised codes move as they are; when the output's
// quantisation differs, each code goes through a 256-entry table built with
// the same dequantise / quantise functions the float path uses, so the result
// equals what the float reference kernel gives. Linear and cubic modes, and
// crops that reach outside the input, are left to that kernel.
#include <algorithm>
#include <cstring>
#include <vector>

#include "base/parallel.h"

#include "cpu/convert.h"
#include "cpu/int8/epilogue.h"
#include "cpu/int8/int8_kernels.h"
#include "cpu/kernels/kernel_util.h"
#include "cpu/kernels/resize_taps.h"

namespace rknn::cpu::int8 {
namespace {

// code -> code for every int8 code: quantise(dequantise(code)).
StatusOr<std::vector<int8_t>> requant_table(const graph::QuantParams& from, const graph::QuantParams& to) {
    HostTensor codes(DType::kInt8, {256});
    for (int i = 0; i < 256; ++i) codes.data<int8_t>()[i] = static_cast<int8_t>(i - 128);
    codes.quant = from;
    HostTensor mapped(DType::kInt8, {256});
    mapped.quant = to;
    RKNN_RETURN_IF_ERROR(from_float32(to_float32(codes), &mapped));
    const int8_t* m = mapped.data<int8_t>();
    return std::vector<int8_t>(m, m + 256);
}

}  // namespace

Status resize(const KernelArgs& args) {
    const HostTensor& x = *args.inputs[0];
    HostTensor* y = args.outputs[0];
    RKNN_RETURN_IF_ERROR(require_int8(x, "the input"));
    RKNN_RETURN_IF_ERROR(require_int8(*y, "the output"));
    if (x.quant.per_channel() || y->quant.per_channel())
        return Status(StatusCode::kUnimplemented, "int8 Resize takes per-tensor quantisation");
    if (x.rank() == 0 || x.rank() != y->rank()) return Status(StatusCode::kUnimplemented, "int8 Resize needs equal ranks");
    RKNN_ASSIGN_OR_RETURN(const kernels::ResizeTaps plan, kernels::resize_taps(args));
    if (plan.mode != "nearest") return Status(StatusCode::kUnimplemented, "int8 Resize is nearest-neighbour only");
    const int64_t rank = x.rank();
    // Input offset contributed by each dim's output position.
    const std::vector<int64_t> in_strides = kernels::strides_of(x.shape());
    std::vector<std::vector<int64_t>> offsets(static_cast<size_t>(rank));
    for (int64_t d = 0; d < rank; ++d) {
        for (const auto& taps : plan.taps[d]) {
            if (taps.size() != 1) return Status(StatusCode::kUnimplemented, "a crop reaches outside the input");
            offsets[d].push_back(taps[0].index * in_strides[d]);
        }
    }
    const bool same = x.quant == y->quant;
    std::vector<int8_t> table;
    if (!same) {
        RKNN_ASSIGN_OR_RETURN(table, requant_table(x.quant, y->quant));
    }

    const int8_t* src = x.data<int8_t>();
    int8_t* dst = y->data<int8_t>();
    const std::vector<int64_t>& inner = offsets[rank - 1];
    const int64_t width = y->dim(rank - 1);
    const int64_t rows = width > 0 ? y->numel() / width : 0;
    // An integer upscale of the last axis (inner[i] = i / factor, factor 2, 4
    // or 8: the feature pyramids' upsamples): each input code, mapped once,
    // repeats `factor` times in a loop the compiler unrolls.
    int64_t factor = 0;
    for (int64_t f : {2, 4, 8}) {
        if (width % f != 0) continue;
        bool repeats = true;
        for (int64_t i = 0; i < width && repeats; ++i)
            repeats = inner[static_cast<size_t>(i)] == (i / f) * in_strides[static_cast<size_t>(rank - 1)];
        if (repeats) {
            factor = f;
            break;
        }
    }
    const auto repeat_row = [&](const int8_t* in, int8_t* out) {
        const int64_t n = width / factor;
        const auto code = [&](int64_t j) { return same ? in[j] : table[static_cast<uint8_t>(in[j] + 128)]; };
        switch (factor) {
        case 2: for (int64_t j = 0; j < n; ++j) out[2 * j] = out[2 * j + 1] = code(j); break;
        case 4: for (int64_t j = 0; j < n; ++j) std::memset(out + 4 * j, code(j), 4); break;
        default: for (int64_t j = 0; j < n; ++j) std::memset(out + 8 * j, code(j), 8); break;
        }
    };
    // Rows are independent: large resizes share them out over the host's
    // threads. A row that reads the same input row as the one before it (an
    // upsample's repeated rows) is a copy of it.
    const int64_t grain = y->numel() >= (int64_t{1} << 16) ? std::max<int64_t>(1, (int64_t{1} << 12) / std::max<int64_t>(width, 1)) : rows;
    parallel_for(rows, grain, [&](int64_t r0, int64_t r1) {
        std::vector<int64_t> index(static_cast<size_t>(rank - 1), 0);  // position in the outer dims
        for (int64_t d = rank - 2, rest = r0; d >= 0; --d) {
            index[static_cast<size_t>(d)] = rest % y->dim(d);
            rest /= y->dim(d);
        }
        int64_t previous = -1;
        for (int64_t row = r0; row < r1; ++row) {
            int64_t base = 0;
            for (int64_t d = 0; d + 1 < rank; ++d) base += offsets[d][index[d]];
            int8_t* out = dst + row * width;
            if (base == previous) {
                std::memcpy(out, out - width, static_cast<size_t>(width));
            } else if (factor > 0) {
                repeat_row(src + base, out);
            } else if (same) {
                for (int64_t i = 0; i < width; ++i) out[i] = src[base + inner[i]];
            } else {
                for (int64_t i = 0; i < width; ++i) out[i] = table[static_cast<uint8_t>(src[base + inner[i]] + 128)];
            }
            previous = base;
            for (int64_t d = rank - 2; d >= 0; --d) {
                if (++index[d] < y->dim(d)) break;
                index[d] = 0;
            }
        }
    });
    return Status::ok();
}

}  // namespace rknn::cpu::int8
