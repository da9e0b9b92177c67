// Float32 pooling for CPU steps (fp16 layers of hybrid models widen to it):
// output rows shared out over the host's threads, and in each row the
// outputs whose windows lie inside the input done in blocks, vectorised
// across the block. Every output still adds (or compares) its taps in the
// reference order (pool.cc: kz, ky, kx, from 0.0f), so AveragePool and
// MaxPool give the reference's floats bit for bit; the outputs at the edges
// go through the reference's own loop.
//
// GlobalAveragePool keeps the reference's double sum but splits it into
// eight interleaved partial sums: the double total differs from the
// sequential one by a few units in its last place, so the float mean equals
// the reference's except where that lands on a float rounding boundary,
// and is then one float ulp away (tests/cpu/float_fast_paths_test.cc).
#pragma once

#include <cstdint>

#include "cpu/kernels/window.h"

namespace rknn::cpu::kernels {

// y[plane] = pool(x[plane]) for `planes` dense planes of g.in_size() inputs
// and g.out_size() outputs. The average divides by the taps inside the
// input, or by the window's taps inside the padded input (include_pad).
void average_pool_f32(const Window3& g, bool include_pad, const float* x, float* y, int64_t planes);
// The first tap inside the input, replaced by each later tap greater than
// it (a NaN first tap stays; later NaNs are passed over); the lowest float
// for a window wholly in the padding.
void max_pool_f32(const Window3& g, const float* x, float* y, int64_t planes);

// Whole planes of `size` values: the mean (0 for an empty plane), and the
// largest value (NaNs passed over; the lowest float when none is left).
void global_average_pool_f32(const float* x, float* y, int64_t planes, int64_t size);
void global_max_pool_f32(const float* x, float* y, int64_t planes, int64_t size);

}  // namespace rknn::cpu::kernels
