// The vector transpose between channel planes and 16-byte atoms, and the
// pack / unpack of cubes built on it, against element-by-element copies, on
// pixel counts that are not multiples of the transpose blocks and on cubes
// with a partial last surface.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cpu/host_tensor.h"
#include "npu/atom_transpose.h"
#include "runtime/native_tensor.h"

namespace {

namespace graph = rknn::graph;
namespace runtime = rknn::runtime;

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<uint8_t> v(n);
    for (uint8_t& b : v) b = static_cast<uint8_t>(rng());
    return v;
}

TEST(AtomTranspose, PlanesAndAtomsSwapEveryElement) {
    for (size_t elem : {size_t{1}, size_t{2}}) {
        const size_t lanes = 16 / elem;
        for (size_t channels : {lanes, lanes / 2 + 1, size_t{1}})
            for (size_t pixels : {size_t{1}, size_t{7}, size_t{8}, size_t{16}, size_t{17}, size_t{100}, size_t{255}}) {
                SCOPED_TRACE(std::to_string(elem) + "-byte elements, " + std::to_string(channels) + " channels, " +
                             std::to_string(pixels) + " pixels on " + rknn::npu::atom_transpose_target());
                const size_t plane_bytes = pixels * elem + 3 * elem;  // planes further apart than their pixels
                const std::vector<uint8_t> planes =
                    random_bytes(channels * plane_bytes, static_cast<uint32_t>(pixels * elem + channels));
                std::vector<uint8_t> atoms(pixels * 16, 0xEE);
                rknn::npu::planes_to_atoms(planes.data(), plane_bytes, elem, channels, pixels, atoms.data());
                for (size_t p = 0; p < pixels; ++p)
                    for (size_t c = 0; c < lanes; ++c) {
                        std::vector<uint8_t> want(elem, 0);  // lanes beyond the channels are zero
                        if (c < channels) std::memcpy(want.data(), planes.data() + c * plane_bytes + p * elem, elem);
                        ASSERT_EQ(std::memcmp(atoms.data() + p * 16 + c * elem, want.data(), elem), 0)
                            << "pixel " << p << " channel " << c;
                    }
                std::vector<uint8_t> back(planes.size() + 64, 0x55);  // nothing beyond the channels' planes is written
                rknn::npu::atoms_to_planes(atoms.data(), elem, channels, pixels, back.data(), plane_bytes);
                for (size_t c = 0; c < channels; ++c)
                    ASSERT_EQ(std::memcmp(back.data() + c * plane_bytes, planes.data() + c * plane_bytes, pixels * elem), 0)
                        << "channel " << c;
                for (size_t i = (channels - 1) * plane_bytes + pixels * elem; i < back.size(); ++i)
                    ASSERT_EQ(back[i], 0x55) << "byte " << i << " past the last plane";
            }
    }
}

// pack_native puts channel c of pixel p at surface c / c2, lane c % c2, and
// zero in the padding lanes; unpack_native gives the tensor back.
TEST(AtomTranspose, CubesPackAndUnpackChannelByChannel) {
    const runtime::NativeForm form{};
    for (graph::DType dtype : {graph::DType::kInt8, graph::DType::kFloat16}) {
        const size_t elem = dtype == graph::DType::kInt8 ? 1 : 2, c2 = 16 / elem;
        for (int channels : {3, 16, 24, 40}) {
            const int h = 5, w = 23;  // 115 pixels: whole blocks and a tail
            SCOPED_TRACE(std::to_string(channels) + " channels of " + std::to_string(elem) + " bytes");
            graph::Tensor t;
            t.name = "t";
            t.dtype = dtype;
            t.shape = {1, channels, h, w};
            rknn::cpu::HostTensor value(dtype, t.shape);
            const size_t plane = static_cast<size_t>(h) * w, bytes = static_cast<size_t>(channels) * plane * elem;
            std::vector<uint8_t> data = random_bytes(bytes, static_cast<uint32_t>(channels));
            // No float16 NaNs: unpack may quiet them (their exponent never all ones).
            if (elem == 2)
                for (size_t i = 1; i < bytes; i += 2) data[i] &= 0xBF;
            std::memcpy(value.raw(), data.data(), bytes);
            const size_t surfaces = (static_cast<size_t>(channels) + c2 - 1) / c2;
            std::vector<uint8_t> cube(surfaces * plane * 16, 0xEE);
            ASSERT_TRUE(runtime::pack_native(value, cube.data(), cube.size(), form).is_ok());
            for (size_t c = 0; c < surfaces * c2; ++c)
                for (size_t p = 0; p < plane; ++p) {
                    const uint8_t* got = cube.data() + (c / c2) * plane * 16 + p * 16 + (c % c2) * elem;
                    std::vector<uint8_t> want(elem, 0);
                    if (c < static_cast<size_t>(channels)) std::memcpy(want.data(), data.data() + (c * plane + p) * elem, elem);
                    ASSERT_EQ(std::memcmp(got, want.data(), elem), 0) << "channel " << c << " pixel " << p;
                }
            auto back = runtime::unpack_native(cube.data(), cube.size(), t, form);
            ASSERT_TRUE(back.is_ok()) << back.status().message();
            ASSERT_EQ(std::memcmp(back.value().raw(), data.data(), bytes), 0);
        }
    }
}

// A [rows][cols] matrix (a MatMul's operand or result) packs as a cube of
// cols channels with one pixel per row: element (r, c) at surface c / c2,
// pixel r, lane c % c2, the last surface's spare lanes zero.
TEST(AtomTranspose, MatricesPackAndUnpackRowByRow) {
    const runtime::NativeForm form{};
    for (graph::DType dtype : {graph::DType::kInt8, graph::DType::kFloat16}) {
        const size_t elem = dtype == graph::DType::kInt8 ? 1 : 2, c2 = 16 / elem;
        for (const graph::Shape& shape : {graph::Shape{1, 37, 70}, graph::Shape{5, 23}, graph::Shape{1, 40, 16}}) {
            const size_t rows = static_cast<size_t>(shape[shape.size() - 2]), cols = static_cast<size_t>(shape.back());
            SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols) + " of " + std::to_string(elem) + " bytes");
            graph::Tensor t;
            t.name = "m";
            t.dtype = dtype;
            t.shape = shape;
            rknn::cpu::HostTensor value(dtype, shape);
            std::vector<uint8_t> data = random_bytes(rows * cols * elem, static_cast<uint32_t>(rows * cols));
            if (elem == 2)
                for (size_t i = 1; i < data.size(); i += 2) data[i] &= 0xBF;  // no NaNs
            std::memcpy(value.raw(), data.data(), data.size());
            const size_t surfaces = (cols + c2 - 1) / c2, surface = rows * 16;
            std::vector<uint8_t> cube(surfaces * surface, 0xEE);
            ASSERT_TRUE(runtime::pack_native(value, cube.data(), cube.size(), form).is_ok());
            for (size_t r = 0; r < rows; ++r)
                for (size_t c = 0; c < surfaces * c2; ++c) {
                    std::vector<uint8_t> want(elem, 0);
                    if (c < cols) std::memcpy(want.data(), data.data() + (r * cols + c) * elem, elem);
                    ASSERT_EQ(std::memcmp(cube.data() + (c / c2) * surface + r * 16 + (c % c2) * elem, want.data(), elem), 0)
                        << "row " << r << " column " << c;
                }
            auto back = runtime::unpack_native(cube.data(), cube.size(), t, form);
            ASSERT_TRUE(back.is_ok()) << back.status().message();
            ASSERT_EQ(std::memcmp(back.value().raw(), data.data(), data.size()), 0);
        }
    }
}

}  // namespace
