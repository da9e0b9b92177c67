// The runtime's table-driven and SIMD conversions against the generic ones
// they replace, on cube shapes with partial atoms and pixel counts that are
// not multiples of the 16-pixel blocks.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "base/sign_bits.h"
#include "cpu/convert.h"
#include "cpu/graph_executor.h"
#include "rknn_api.h"
#include "runtime/fast_io.h"
#include "runtime/io_convert.h"
#include "runtime/native_tensor.h"

namespace {

const rknn::runtime::NativeForm kRk3588{};  // the forms these conversions write

namespace graph = rknn::graph;
namespace runtime = rknn::runtime;

// The generic conversion of uint8 NHWC pixels into `t`, with `pre`'s normalisation.
rknn::StatusOr<rknn::cpu::HostTensor> nhwc_pixels_in(std::vector<uint8_t>& pixels, const graph::Tensor& t,
                                                     const graph::InputPreprocess& pre) {
    rknn_input in{};
    in.buf = pixels.data();
    in.size = static_cast<uint32_t>(pixels.size());
    in.type = RKNN_TENSOR_UINT8;
    in.fmt = RKNN_TENSOR_NHWC;
    return runtime::convert_input(in, t, &pre);
}

graph::Tensor int8_tensor(int c, int h, int w, float scale, int32_t zp) {
    graph::Tensor t;
    t.name = "t";
    t.dtype = graph::DType::kInt8;
    t.shape = {1, c, h, w};
    t.quant.scales = {scale};
    t.quant.zero_points = {zp};
    return t;
}

TEST(FastIo, CubeToFloatEqualsTheGenericDequantisation) {
    std::mt19937 rng(3);
    for (int c : {1, 5, 16, 17, 40}) {
        for (int hw : {1, 3, 5, 7, 13}) {
            const graph::Tensor t = int8_tensor(c, hw, hw + 2, 0.0173f, static_cast<int32_t>(rng() % 41) - 20);
            std::vector<uint8_t> cube(runtime::native_cube_bytes(t, kRk3588));
            for (uint8_t& b : cube) b = static_cast<uint8_t>(rng());
            auto value = runtime::unpack_native(cube.data(), cube.size(), t, kRk3588);
            ASSERT_TRUE(value.is_ok());
            const rknn::cpu::HostTensor expected = rknn::cpu::to_float32(value.value());
            auto rule = runtime::make_dequant(t);
            ASSERT_TRUE(rule.is_ok());
            std::vector<float> out(static_cast<size_t>(expected.numel()));
            runtime::cube_to_float_nchw(cube.data(), c, hw, hw + 2, rule.value(), out.data());
            EXPECT_EQ(std::memcmp(out.data(), expected.raw(), expected.byte_size()), 0) << c << " " << hw;
        }
    }
}

TEST(FastIo, PixelTablesEqualTheGenericInputConversion) {
    std::mt19937 rng(4);
    graph::InputPreprocess pre;
    pre.mean = {120.0f, 99.5f, 7.0f, 64.0f};
    pre.std = {58.0f, 60.5f, 3.0f, 127.0f};
    for (int c : {1, 3, 4}) {
        for (bool nhwc : {true, false}) {
            const graph::Tensor t = int8_tensor(c, 5, 19, 0.02f, -7);
            std::vector<uint8_t> pixels(static_cast<size_t>(c) * 5 * 19);
            for (uint8_t& p : pixels) p = static_cast<uint8_t>(rng());
            rknn_input in{};
            in.buf = pixels.data();
            in.size = static_cast<uint32_t>(pixels.size());
            in.type = RKNN_TENSOR_UINT8;
            in.fmt = nhwc ? RKNN_TENSOR_NHWC : RKNN_TENSOR_NCHW;
            auto generic = runtime::convert_input(in, t, &pre);
            ASSERT_TRUE(generic.is_ok());
            std::vector<uint8_t> expected(runtime::native_cube_bytes(t, kRk3588), 0);
            ASSERT_TRUE(runtime::pack_native(generic.value(), expected.data(), expected.size(), kRk3588).is_ok());

            auto codes = runtime::make_pixel_codes(t, &pre);
            ASSERT_TRUE(codes.is_ok());
            std::vector<uint8_t> cube(expected.size(), 0);
            runtime::pixels_to_cube(pixels.data(), nhwc, c, 5, 19, codes.value().data(), cube.data());
            EXPECT_EQ(cube, expected) << c << (nhwc ? " NHWC" : " NCHW");
            std::vector<int8_t> nchw(pixels.size());
            runtime::pixels_to_nchw(pixels.data(), nhwc, c, 5, 19, codes.value().data(), nchw.data());
            EXPECT_EQ(std::memcmp(nchw.data(), generic.value().raw(), nchw.size()), 0);
        }
    }
}

// Channel-packed images (the native form of 1/3/4-channel inputs): the
// tables, and the integer rule fitted to them (SIMD where the CPU has it),
// give the generic conversion's bytes for random normalisations, including
// ones that saturate, on widths that are not multiples of the SIMD step.
TEST(FastIo, PackedImagesEqualTheGenericInputConversion) {
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> mean(0.0f, 255.0f), stdev(0.5f, 130.0f), scale(0.002f, 0.05f);
    int rules = 0, cases = 0, narrow = 0, wide = 0;
    for (int trial = 0; trial < 48; ++trial) {
        const int c = trial % 3 == 0 ? 1 : (trial % 3 == 1 ? 3 : 4);
        const int h = 1 + static_cast<int>(rng() % 5), w = 1 + static_cast<int>(rng() % 70);
        graph::InputPreprocess pre;
        // The last trials flip the sign of the std: decreasing tables, which
        // only the wide form (signed multipliers) takes.
        const float sign = trial >= 40 ? -1.0f : 1.0f;
        for (int k = 0; k < c; ++k) pre.mean.push_back(mean(rng)), pre.std.push_back(sign * stdev(rng));
        const graph::Tensor t = int8_tensor(c, h, w, scale(rng), static_cast<int32_t>(rng() % 61) - 30);
        std::vector<uint8_t> pixels(static_cast<size_t>(c) * h * w);
        for (uint8_t& p : pixels) p = static_cast<uint8_t>(rng());
        auto generic = nhwc_pixels_in(pixels, t, pre);
        ASSERT_TRUE(generic.is_ok());
        const uint32_t pitch = runtime::packed_image_row_pixels(t, kRk3588);
        ASSERT_EQ(pitch % 16, 0u);
        ASSERT_GE(pitch, static_cast<uint32_t>(w));
        std::vector<uint8_t> expected(runtime::packed_image_bytes(t, kRk3588), 0);
        ASSERT_TRUE(runtime::pack_native(generic.value(), expected.data(), expected.size(), kRk3588, pitch).is_ok());
        auto back = runtime::unpack_native(expected.data(), expected.size(), t, kRk3588, pitch);
        ASSERT_TRUE(back.is_ok());
        EXPECT_EQ(std::memcmp(back.value().raw(), generic.value().raw(), pixels.size()), 0);

        auto codes = runtime::make_pixel_codes(t, &pre);
        ASSERT_TRUE(codes.is_ok());
        auto rule = runtime::fit_pixel_rule(codes.value(), c);
        if (rule.is_ok()) ++(rule.value().narrow ? narrow : wide);
        for (bool use_rule : {false, true}) {
            if (use_rule && !rule.is_ok()) continue;
            std::vector<uint8_t> image(expected.size(), 0);
            runtime::pixels_to_packed(pixels.data(), true, c, h, w, static_cast<int>(pitch), codes.value().data(),
                                      use_rule ? &rule.value() : nullptr, image.data());
            EXPECT_EQ(image, expected) << "trial " << trial << (use_rule ? " (rule)" : " (tables)");
            ++cases;
            rules += use_rule;
        }
    }
    std::printf("packed images: %d conversions compared, %d through the fitted rule (%d narrow, %d wide)\n", cases,
                rules, narrow, wide);
    EXPECT_GE(rules, 36);  // per-tensor affine quantisation is what the rule is for
    EXPECT_GE(narrow, 20);  // steep slopes (tiny std x scale) need the wide form
    EXPECT_GE(wide, 4);
}

// RK356x keeps only 3-channel int8 images packed (its CNA's ARGB mode):
// rows align(W, 8) pixels apart, each byte the int8 value + 128, which the
// pack/unpack pair and the biased tables of the pixel fast path agree on.
TEST(FastIo, Rk356xImagesHoldTheValuesBiased) {
    runtime::NativeForm rk356x;
    rk356x.rk356x = true;
    ASSERT_TRUE(runtime::packed_image_biased(rk356x));
    std::mt19937 rng(11);
    for (int trial = 0; trial < 24; ++trial) {
        const int h = 1 + static_cast<int>(rng() % 6), w = 1 + static_cast<int>(rng() % 40);
        graph::InputPreprocess pre;
        for (int k = 0; k < 3; ++k) pre.mean.push_back(static_cast<float>(rng() % 200)), pre.std.push_back(40.0f + k);
        const graph::Tensor t = int8_tensor(3, h, w, 0.02f, static_cast<int32_t>(rng() % 61) - 30);
        const uint32_t pitch = runtime::packed_image_row_pixels(t, rk356x);
        ASSERT_EQ(pitch, static_cast<uint32_t>((w + 7) / 8 * 8)) << w;
        ASSERT_EQ(runtime::packed_image_bytes(t, rk356x), static_cast<uint64_t>(h) * pitch * 3);
        std::vector<uint8_t> pixels(static_cast<size_t>(3) * h * w);
        for (uint8_t& p : pixels) p = static_cast<uint8_t>(rng());
        auto generic = nhwc_pixels_in(pixels, t, pre);
        ASSERT_TRUE(generic.is_ok());
        std::vector<uint8_t> image(runtime::packed_image_bytes(t, rk356x), 0);
        ASSERT_TRUE(runtime::pack_native(generic.value(), image.data(), image.size(), rk356x, pitch).is_ok());
        const int8_t* values = generic.value().data<int8_t>();  // NCHW
        for (int c = 0; c < 3; ++c)
            for (int y = 0; y < h; ++y)
                for (int x = 0; x < w; ++x)
                    ASSERT_EQ(image[(static_cast<size_t>(y) * pitch + x) * 3 + c],
                              static_cast<uint8_t>(values[(c * h + y) * w + x] + 128))
                        << "trial " << trial << " c " << c << " y " << y << " x " << x;
        auto back = runtime::unpack_native(image.data(), image.size(), t, rk356x, pitch);
        ASSERT_TRUE(back.is_ok());
        EXPECT_EQ(std::memcmp(back.value().raw(), values, pixels.size()), 0);
        // The pixel fast path: the int8 codes (tables or the fitted rule), then the bias.
        auto codes = runtime::make_pixel_codes(t, &pre);
        ASSERT_TRUE(codes.is_ok());
        auto rule = runtime::fit_pixel_rule(codes.value(), 3);
        for (bool use_rule : {false, true}) {
            if (use_rule && !rule.is_ok()) continue;
            std::vector<uint8_t> fast(image.size(), 0);
            runtime::pixels_to_packed(pixels.data(), true, 3, h, w, static_cast<int>(pitch), codes.value().data(),
                                      use_rule ? &rule.value() : nullptr, fast.data());
            rknn::copy_sign_flipped(fast.data(), fast.data(), fast.size());
            EXPECT_EQ(fast, image) << "trial " << trial << (use_rule ? " (rule)" : " (tables)");
        }
    }
    // No other images are packed there: 1 or 4 channels, fp16.
    EXPECT_EQ(runtime::packed_image_row_pixels(int8_tensor(1, 4, 4, 0.1f, 0), rk356x), 0u);
    EXPECT_EQ(runtime::packed_image_row_pixels(int8_tensor(4, 4, 4, 0.1f, 0), rk356x), 0u);
    graph::Tensor half = int8_tensor(3, 4, 4, 0.1f, 0);
    half.dtype = graph::DType::kFloat16;
    EXPECT_EQ(runtime::packed_image_row_pixels(half, rk356x), 0u);
}

}  // namespace
