// Cube <-> float32 conversions for custom ops (runtime/cube_float.h): the
// bytes and values of the two-step path (unpack_native_into then
// cpu::to_float32_into; cpu::from_float32 then pack_native), for int8 and
// float16 cubes whose channels fill their atoms or not, with garbage in the
// destination and NaN, infinities and ties among the floats.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "cpu/convert.h"
#include "runtime/cube_float.h"
#include "runtime/native_tensor.h"

namespace {

using rknn::cpu::HostTensor;
using rknn::graph::DType;

rknn::graph::Tensor cube_tensor(DType dtype, int channels, int h = 5, int w = 7) {
    rknn::graph::Tensor t;
    t.name = "t";
    t.dtype = dtype;
    t.shape = {1, channels, h, w};
    if (dtype == DType::kInt8) {
        t.quant.scales = {0.0371f};
        t.quant.zero_points = {-9};
    }
    return t;
}

std::vector<float> test_floats(size_t n, uint32_t seed, float scale) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> wide(-6.0f, 6.0f);
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) {
        switch (i % 9) {
        case 0: v[i] = (static_cast<float>(static_cast<int>(i % 300)) - 150.0f + 0.5f) * scale; break;  // ties
        case 1: v[i] = std::numeric_limits<float>::quiet_NaN(); break;
        case 2: v[i] = (i % 2 ? 1.0f : -1.0f) * std::numeric_limits<float>::infinity(); break;
        default: v[i] = wide(rng);
        }
    }
    return v;
}

void expect_two_step_results(DType dtype, int channels, int h = 5, int w = 7) {
    SCOPED_TRACE(std::string(dtype == DType::kInt8 ? "int8, " : "float16, ") + std::to_string(channels) + " channels, " +
                 std::to_string(h) + "x" + std::to_string(w));
    const rknn::runtime::NativeForm form;
    const rknn::graph::Tensor t = cube_tensor(dtype, channels, h, w);
    ASSERT_TRUE(rknn::runtime::cube_converts_to_float32(t, form, 0));
    const size_t n = static_cast<size_t>(channels) * static_cast<size_t>(h * w);
    const uint64_t bytes = rknn::runtime::native_cube_bytes(t, form);
    const std::vector<float> floats = test_floats(n, static_cast<uint32_t>(channels), 0.0371f);

    // float32 -> cube
    HostTensor source = HostTensor::borrow(DType::kFloat32, t.shape, floats.data());
    HostTensor typed(dtype, t.shape);
    typed.quant = t.quant;
    ASSERT_TRUE(rknn::cpu::from_float32(source, &typed).is_ok());
    std::vector<uint8_t> expected(bytes, 0x5a);
    ASSERT_TRUE(rknn::runtime::pack_native(typed, expected.data(), expected.size(), form).is_ok());
    std::vector<uint8_t> actual(bytes, 0xa5);
    ASSERT_TRUE(rknn::runtime::float32_to_cube(floats.data(), t, form, actual.data(), actual.size()).is_ok());
    EXPECT_EQ(actual, expected);

    // cube -> float32, with garbage in the padding lanes (nothing reads them)
    std::vector<uint8_t> cube = expected;
    const size_t element = dtype == DType::kInt8 ? 1 : 2, lanes = 16 / element, pixels = static_cast<size_t>(h * w);
    for (size_t atom = 0; atom < cube.size() / 16; ++atom)
        for (size_t lane = 0; lane < lanes; ++lane)
            if ((atom / pixels) * lanes + lane >= static_cast<size_t>(channels))
                for (size_t b = 0; b < element; ++b) cube[atom * 16 + lane * element + b] = 0x7b;
    HostTensor unpacked;
    ASSERT_TRUE(rknn::runtime::unpack_native_into(cube.data(), cube.size(), t, form, 0, &unpacked).is_ok());
    std::vector<float> want(n), got(n, -1.0f);
    rknn::cpu::to_float32_into(unpacked, want.data());
    ASSERT_TRUE(rknn::runtime::cube_to_float32(cube.data(), cube.size(), t, form, got.data()).is_ok());
    for (size_t i = 0; i < n; ++i) {
        if (std::isnan(want[i])) {
            ASSERT_TRUE(std::isnan(got[i])) << i;
        } else {
            ASSERT_EQ(got[i], want[i]) << i;
        }
    }
    EXPECT_FALSE(rknn::runtime::cube_to_float32(cube.data(), cube.size() - 1, t, form, got.data()).is_ok());
}

TEST(CubeFloat, GivesTheTwoStepPathsBytesAndValues) {
    for (int channels : {1, 8, 9, 16, 17, 40})
        for (DType dtype : {DType::kInt8, DType::kFloat16}) expect_two_step_results(dtype, channels);
    // Planes of several work units (512 pixels) with a tail, and exact blocks of 16.
    expect_two_step_results(DType::kInt8, 33, 23, 29);
    expect_two_step_results(DType::kInt8, 16, 32, 32);
    expect_two_step_results(DType::kFloat16, 12, 23, 29);
}

// The own-dtype moves (cube <-> NCHW in the cube's dtype) give the bytes of
// unpack_native_into and pack_native.
void expect_two_step_moves(DType dtype, int channels, int h, int w) {
    SCOPED_TRACE(std::string(dtype == DType::kInt8 ? "int8, " : "float16, ") + std::to_string(channels) + " channels, " +
                 std::to_string(h) + "x" + std::to_string(w));
    const rknn::runtime::NativeForm form;
    const rknn::graph::Tensor t = cube_tensor(dtype, channels, h, w);
    ASSERT_TRUE(rknn::runtime::cube_moves_as_nchw(t, form, 0));
    const size_t element = dtype == DType::kInt8 ? 1 : 2;
    const size_t n = static_cast<size_t>(channels) * static_cast<size_t>(h * w);
    HostTensor nchw(dtype, t.shape);
    nchw.quant = t.quant;
    std::mt19937 rng(static_cast<uint32_t>(channels * 131 + h));
    for (size_t i = 0; i < n * element; ++i) static_cast<uint8_t*>(nchw.raw())[i] = static_cast<uint8_t>(rng());
    const uint64_t bytes = rknn::runtime::native_cube_bytes(t, form);
    std::vector<uint8_t> expected(bytes, 0x5a), actual(bytes, 0xa5);
    ASSERT_TRUE(rknn::runtime::pack_native(nchw, expected.data(), expected.size(), form).is_ok());
    ASSERT_TRUE(rknn::runtime::nchw_to_cube(static_cast<const uint8_t*>(nchw.raw()), t, form, actual.data(),
                                            actual.size()).is_ok());
    EXPECT_EQ(actual, expected);
    std::vector<uint8_t> back(n * element, 0xee);
    ASSERT_TRUE(rknn::runtime::cube_to_nchw(actual.data(), actual.size(), t, form, back.data()).is_ok());
    EXPECT_EQ(0, std::memcmp(back.data(), nchw.raw(), back.size()));
    EXPECT_FALSE(rknn::runtime::cube_to_nchw(actual.data(), actual.size() - 1, t, form, back.data()).is_ok());
    EXPECT_FALSE(rknn::runtime::nchw_to_cube(back.data(), t, form, actual.data(), actual.size() - 1).is_ok());
}

TEST(CubeFloat, MovesInTheCubesOwnDtypeAsTheTwoStepPath) {
    for (int channels : {1, 9, 16, 17, 40})
        for (DType dtype : {DType::kInt8, DType::kFloat16}) expect_two_step_moves(dtype, channels, 5, 7);
    expect_two_step_moves(DType::kInt8, 33, 23, 29);
    expect_two_step_moves(DType::kInt8, 16, 32, 32);
    // Per-channel int8 moves too: no arithmetic on the codes.
    EXPECT_TRUE(rknn::runtime::cube_moves_as_nchw(cube_tensor(DType::kInt8, 4), rknn::runtime::NativeForm(), 0));
    EXPECT_FALSE(rknn::runtime::cube_moves_as_nchw(cube_tensor(DType::kFloat32, 4), rknn::runtime::NativeForm(), 0));
    EXPECT_FALSE(rknn::runtime::cube_moves_as_nchw(cube_tensor(DType::kInt8, 4), rknn::runtime::NativeForm{true}, 0));
}

TEST(CubeFloat, DeclinesWhatItDoesNotConvert) {
    const rknn::runtime::NativeForm dense, rk356x{true};
    rknn::graph::Tensor per_channel = cube_tensor(DType::kInt8, 4);
    per_channel.quant.scales = {0.1f, 0.2f, 0.3f, 0.4f};
    per_channel.quant.zero_points = {0, 0, 0, 0};
    per_channel.quant.axis = 1;
    EXPECT_FALSE(rknn::runtime::cube_converts_to_float32(per_channel, dense, 0));
    EXPECT_FALSE(rknn::runtime::cube_converts_to_float32(cube_tensor(DType::kInt8, 4), rk356x, 0));
    EXPECT_FALSE(rknn::runtime::cube_converts_to_float32(cube_tensor(DType::kInt8, 4), dense, 8)) << "packed image";
    EXPECT_FALSE(rknn::runtime::cube_converts_to_float32(cube_tensor(DType::kFloat32, 4), dense, 0));
    rknn::graph::Tensor row = cube_tensor(DType::kInt8, 4);
    row.shape = {1, 64};
    EXPECT_FALSE(rknn::runtime::cube_converts_to_float32(row, dense, 0));
}

}  // namespace
