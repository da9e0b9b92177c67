// Zero-copy I/O through the exported functions on the mock device: buffers
// from rknn_create_mem bound with rknn_set_io_mem, as the SDK's
// rknn_create_mem_demo and the RV1106 demos use them (spec/clients.md). The
// bound buffers must give exactly what rknn_inputs_set / rknn_outputs_get
// give for the same data, in every layout the binding asks for, run after run.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <vector>

#include "base/half.h"
#include "rknn_api.h"
#include "runtime/contract_models.h"

namespace {

namespace graph = rknn::graph;
using rknn::testing::conv_pool_model;
using rknn::testing::init_graph;
using rknn::testing::input_of;
using rknn::testing::pixels;
using rknn::testing::quantized_cnn;


class ZeroCopy : public ::testing::Test {
protected:
    // The context under test, and one of the same model that only the
    // general API uses (the reference for every comparison).
    void init(const graph::Graph& g) {
        ASSERT_EQ(init_graph(g, RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY, &ctx_), RKNN_SUCC);
        ASSERT_EQ(init_graph(g, RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY, &general_), RKNN_SUCC);
    }
    void TearDown() override {
        for (rknn_tensor_mem* m : mems_) {
            EXPECT_EQ(rknn_destroy_mem(ctx_, m), RKNN_SUCC);
        }
        if (ctx_ != 0) {
            EXPECT_EQ(rknn_destroy(ctx_), RKNN_SUCC);
        }
        if (general_ != 0) {
            EXPECT_EQ(rknn_destroy(general_), RKNN_SUCC);
        }
    }
    rknn_tensor_mem* create(uint32_t size) {
        rknn_tensor_mem* m = rknn_create_mem(ctx_, size);
        if (m != nullptr) mems_.push_back(m);
        return m;
    }
    rknn_tensor_attr query(rknn_query_cmd cmd, uint32_t index = 0) {
        rknn_tensor_attr attr{};
        attr.index = index;
        EXPECT_EQ(rknn_query(ctx_, cmd, &attr, sizeof(attr)), RKNN_SUCC);
        return attr;
    }
    // INPUT_ATTR turned into raw pixels (UINT8 NHWC), as the demos do.
    rknn_tensor_attr pixel_input_attr() {
        rknn_tensor_attr attr = query(RKNN_QUERY_INPUT_ATTR);
        attr.type = RKNN_TENSOR_UINT8;
        attr.fmt = RKNN_TENSOR_NHWC;
        return attr;
    }
    // The general API's output 0 for pixels `p` (on the other context):
    // float32 or the raw int8, NCHW.
    std::vector<uint8_t> general_output(const std::vector<uint8_t>& p, bool want_float) {
        std::vector<uint8_t> copy = p;
        rknn_input in = input_of(copy.data(), static_cast<uint32_t>(copy.size()), RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC);
        EXPECT_EQ(rknn_inputs_set(general_, 1, &in), RKNN_SUCC);
        EXPECT_EQ(rknn_run(general_, nullptr), RKNN_SUCC);
        rknn_output out{};
        out.want_float = want_float ? 1 : 0;
        EXPECT_EQ(rknn_outputs_get(general_, 1, &out, nullptr), RKNN_SUCC);
        std::vector<uint8_t> bytes(static_cast<const uint8_t*>(out.buf), static_cast<const uint8_t*>(out.buf) + out.size);
        EXPECT_EQ(rknn_outputs_release(general_, 1, &out), RKNN_SUCC);
        return bytes;
    }
    rknn_context ctx_ = 0;
    rknn_context general_ = 0;
    std::vector<rknn_tensor_mem*> mems_;
};

// rknn_create_mem_demo: INPUT_ATTR turned into UINT8 NHWC, OUTPUT_ATTR into
// FLOAT32, buffers of size_with_stride and n_elems * 4.
TEST_F(ZeroCopy, CreateMemDemoFlowGivesTheGeneralApisOutputs) {
    init(quantized_cnn());
    rknn_tensor_attr in_attr = pixel_input_attr();
    rknn_tensor_attr out_attr = query(RKNN_QUERY_OUTPUT_ATTR);
    out_attr.type = RKNN_TENSOR_FLOAT32;
    rknn_tensor_mem* in_mem = create(in_attr.size_with_stride);
    rknn_tensor_mem* out_mem = create(out_attr.n_elems * sizeof(float));
    ASSERT_NE(in_mem, nullptr);
    ASSERT_NE(out_mem, nullptr);
    EXPECT_NE(in_mem->virt_addr, nullptr);
    EXPECT_NE(in_mem->phys_addr, 0u) << "the NPU's address of the buffer";
    EXPECT_GE(in_mem->fd, 0) << "a dma-buf fd other devices can import";
    EXPECT_EQ(in_mem->size, in_attr.size_with_stride);
    EXPECT_EQ(in_mem->offset, 0);
    EXPECT_EQ(in_mem->flags, static_cast<int32_t>(RKNN_TENSOR_MEMORY_FLAGS_ALLOC_INSIDE));
    ASSERT_EQ(rknn_set_io_mem(ctx_, in_mem, &in_attr), RKNN_SUCC);
    ASSERT_EQ(rknn_set_io_mem(ctx_, out_mem, &out_attr), RKNN_SUCC);

    // Bound once, used by every run: each run picks up the buffer's new bytes.
    for (uint32_t seed : {5u, 6u, 7u}) {
        const std::vector<uint8_t> p = pixels(seed);
        std::memcpy(in_mem->virt_addr, p.data(), p.size());
        ASSERT_EQ(rknn_run(ctx_, nullptr), RKNN_SUCC);
        const std::vector<uint8_t> zero_copy(static_cast<const uint8_t*>(out_mem->virt_addr),
                                             static_cast<const uint8_t*>(out_mem->virt_addr) + out_mem->size);
        EXPECT_EQ(zero_copy, general_output(p, true)) << "seed " << seed;
    }
    // The two APIs are not mixed once buffers are bound (spec 4.7).
    std::vector<uint8_t> p = pixels(8);
    rknn_input general_in = input_of(p.data(), static_cast<uint32_t>(p.size()), RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC);
    EXPECT_EQ(rknn_inputs_set(ctx_, 1, &general_in), RKNN_ERR_FAIL);
    rknn_output general_out{};
    EXPECT_EQ(rknn_outputs_get(ctx_, 1, &general_out, nullptr), RKNN_ERR_FAIL);
    EXPECT_EQ(rknn_mem_sync(ctx_, out_mem, RKNN_MEMORY_SYNC_FROM_DEVICE), RKNN_SUCC);
    EXPECT_EQ(rknn_mem_sync(0, in_mem, RKNN_MEMORY_SYNC_BIDIRECTIONAL), RKNN_SUCC) << "ctx 0 is accepted";
}

// Rows at a wider pitch than the image (w_stride), as RGA writes them.
TEST_F(ZeroCopy, StridedInputRowsAreRead) {
    init(quantized_cnn());
    rknn_tensor_attr in_attr = pixel_input_attr();
    in_attr.w_stride = 13;  // pixels per row in the buffer; the image is 8 wide
    rknn_tensor_mem* in_mem = create(8 * 13 * 3);
    rknn_tensor_attr out_attr = query(RKNN_QUERY_OUTPUT_ATTR);
    rknn_tensor_mem* out_mem = create(out_attr.n_elems);
    ASSERT_NE(in_mem, nullptr);
    ASSERT_NE(out_mem, nullptr);
    ASSERT_EQ(rknn_set_io_mem(ctx_, in_mem, &in_attr), RKNN_SUCC);
    ASSERT_EQ(rknn_set_io_mem(ctx_, out_mem, &out_attr), RKNN_SUCC) << "the model's own int8 output";
    const std::vector<uint8_t> p = pixels(21);
    auto* rows = static_cast<uint8_t*>(in_mem->virt_addr);
    std::memset(rows, 0xEE, in_mem->size);  // what lies between rows must not be read
    for (int y = 0; y < 8; ++y) std::memcpy(rows + y * 13 * 3, p.data() + y * 8 * 3, 8 * 3);
    ASSERT_EQ(rknn_run(ctx_, nullptr), RKNN_SUCC);
    const std::vector<uint8_t> got(static_cast<const uint8_t*>(out_mem->virt_addr),
                                   static_cast<const uint8_t*>(out_mem->virt_addr) + out_attr.n_elems);
    EXPECT_EQ(got, general_output(p, false));

    in_attr.w_stride = 14;  // now 8 x 14 x 3 bytes are needed
    EXPECT_EQ(rknn_set_io_mem(ctx_, in_mem, &in_attr), RKNN_ERR_PARAM_INVALID) << "a buffer too small for the pitch";
}

// The RV1106 demos: the native NC1HWC2 output attr unchanged, and the NHWC one as float32.
TEST_F(ZeroCopy, NativeAndNhwcOutputs) {
    init(conv_pool_model());
    rknn_tensor_attr in_attr = pixel_input_attr();
    rknn_tensor_mem* in_mem = create(in_attr.size_with_stride);
    ASSERT_NE(in_mem, nullptr);
    ASSERT_EQ(rknn_set_io_mem(ctx_, in_mem, &in_attr), RKNN_SUCC);
    const std::vector<uint8_t> p = pixels(33);
    std::memcpy(in_mem->virt_addr, p.data(), p.size());

    const rknn_tensor_attr user = query(RKNN_QUERY_OUTPUT_ATTR);
    ASSERT_EQ(user.n_dims, 4u);
    const uint32_t c = user.dims[1], h = user.dims[2], w = user.dims[3];
    rknn_tensor_attr native = query(RKNN_QUERY_NATIVE_OUTPUT_ATTR);
    ASSERT_EQ(native.fmt, RKNN_TENSOR_NC1HWC2);
    rknn_tensor_mem* native_mem = create(native.size_with_stride);
    ASSERT_NE(native_mem, nullptr);
    ASSERT_EQ(rknn_set_io_mem(ctx_, native_mem, &native), RKNN_SUCC);
    ASSERT_EQ(rknn_run(ctx_, nullptr), RKNN_SUCC);
    const std::vector<uint8_t> cube(static_cast<const uint8_t*>(native_mem->virt_addr),
                                    static_cast<const uint8_t*>(native_mem->virt_addr) + native.size_with_stride);
    const std::vector<uint8_t> raw = general_output(p, false);  // NCHW int8
    ASSERT_EQ(raw.size(), static_cast<size_t>(c) * h * w);
    const uint32_t c2 = native.dims[4];
    size_t differ = 0;
    for (uint32_t ch = 0; ch < c; ++ch)
        for (uint32_t i = 0; i < h * w; ++i) differ += cube[(ch / c2) * h * w * c2 + i * c2 + ch % c2] != raw[ch * h * w + i];
    EXPECT_EQ(differ, 0u) << "NC1HWC2 cube against the NCHW output";

    // Rebinding the output replaces the binding: NHWC float32 now.
    rknn_tensor_attr nhwc = query(RKNN_QUERY_NATIVE_NHWC_OUTPUT_ATTR);
    ASSERT_EQ(nhwc.fmt, RKNN_TENSOR_NHWC);
    nhwc.type = RKNN_TENSOR_FLOAT32;
    rknn_tensor_mem* nhwc_mem = create(nhwc.n_elems * sizeof(float));
    ASSERT_NE(nhwc_mem, nullptr);
    ASSERT_EQ(rknn_set_io_mem(ctx_, nhwc_mem, &nhwc), RKNN_SUCC);
    ASSERT_EQ(rknn_run(ctx_, nullptr), RKNN_SUCC);
    std::vector<float> got(nhwc.n_elems);
    std::memcpy(got.data(), nhwc_mem->virt_addr, got.size() * sizeof(float));
    const std::vector<uint8_t> floats = general_output(p, true);
    std::vector<float> nchw(floats.size() / sizeof(float));
    std::memcpy(nchw.data(), floats.data(), floats.size());
    differ = 0;
    for (uint32_t ch = 0; ch < c; ++ch)
        for (uint32_t i = 0; i < h * w; ++i) differ += got[i * c + ch] != nchw[ch * h * w + i];
    EXPECT_EQ(differ, 0u) << "NHWC float32 against the NCHW float32 output";
}

// Float16 from an int8 model (spec 3.4), in the model's NCHW order.
TEST_F(ZeroCopy, Float16Outputs) {
    init(conv_pool_model());
    rknn_tensor_attr in_attr = pixel_input_attr();
    rknn_tensor_attr out_attr = query(RKNN_QUERY_OUTPUT_ATTR);
    out_attr.type = RKNN_TENSOR_FLOAT16;
    rknn_tensor_mem* in_mem = create(in_attr.size_with_stride + 100);  // larger than needed: fine
    rknn_tensor_mem* out_mem = create(out_attr.n_elems * 2);
    ASSERT_NE(in_mem, nullptr);
    ASSERT_NE(out_mem, nullptr);
    ASSERT_EQ(rknn_set_io_mem(ctx_, in_mem, &in_attr), RKNN_SUCC);
    ASSERT_EQ(rknn_set_io_mem(ctx_, out_mem, &out_attr), RKNN_SUCC);
    const std::vector<uint8_t> p = pixels(44);
    std::memcpy(in_mem->virt_addr, p.data(), p.size());
    ASSERT_EQ(rknn_run(ctx_, nullptr), RKNN_SUCC);
    const std::vector<uint8_t> floats = general_output(p, true);
    ASSERT_EQ(floats.size(), out_attr.n_elems * sizeof(float));
    const auto* halves = static_cast<const uint16_t*>(out_mem->virt_addr);
    size_t differ = 0;
    for (uint32_t i = 0; i < out_attr.n_elems; ++i) {
        float f;
        std::memcpy(&f, floats.data() + i * sizeof(float), sizeof(float));
        differ += halves[i] != rknn::float_to_half(f);
    }
    EXPECT_EQ(differ, 0u);
}

// Memory the client owns: a dma-buf fd (here another buffer's, as
// rknn_internal_mem_reuse_demo re-wraps one; mapped by the runtime when no
// mapping is given), and physically contiguous memory with its mapping.
TEST_F(ZeroCopy, ClientMemoryFromFdAndPhys) {
    init(quantized_cnn());
    rknn_tensor_attr in_attr = pixel_input_attr();
    rknn_tensor_attr out_attr = query(RKNN_QUERY_OUTPUT_ATTR);
    out_attr.type = RKNN_TENSOR_FLOAT32;
    rknn_tensor_mem* pool = create(4096);
    ASSERT_NE(pool, nullptr);
    ASSERT_GE(pool->fd, 0);
    // The input at offset 1024 of the pool's fd, mapped by the runtime.
    rknn_tensor_mem* in_mem = rknn_create_mem_from_fd(ctx_, pool->fd, nullptr, 192, 1024);
    ASSERT_NE(in_mem, nullptr);
    mems_.push_back(in_mem);
    EXPECT_EQ(in_mem->flags, static_cast<int32_t>(RKNN_TENSOR_MEMORY_FLAGS_FROM_FD));
    EXPECT_EQ(in_mem->offset, 1024);
    // The output in "physical" memory the client mapped (the runtime only uses the mapping).
    std::vector<float> phys_block(out_attr.n_elems, -1.0f);
    rknn_tensor_mem* out_mem =
        rknn_create_mem_from_phys(ctx_, 0x40000000u, phys_block.data(), out_attr.n_elems * sizeof(float));
    ASSERT_NE(out_mem, nullptr);
    mems_.push_back(out_mem);
    EXPECT_EQ(out_mem->phys_addr, 0x40000000u);
    ASSERT_EQ(rknn_set_io_mem(ctx_, in_mem, &in_attr), RKNN_SUCC);
    ASSERT_EQ(rknn_set_io_mem(ctx_, out_mem, &out_attr), RKNN_SUCC);

    // Written through the pool's own mapping, read through the runtime's.
    const std::vector<uint8_t> p = pixels(55);
    std::memcpy(static_cast<uint8_t*>(pool->virt_addr) + 1024, p.data(), p.size());
    ASSERT_EQ(rknn_run(ctx_, nullptr), RKNN_SUCC);
    const std::vector<uint8_t> floats = general_output(p, true);
    ASSERT_EQ(floats.size(), phys_block.size() * sizeof(float));
    EXPECT_EQ(std::memcmp(phys_block.data(), floats.data(), floats.size()), 0);
    EXPECT_EQ(rknn_mem_sync(ctx_, in_mem, RKNN_MEMORY_SYNC_BIDIRECTIONAL), RKNN_SUCC);
    EXPECT_EQ(rknn_mem_sync(ctx_, out_mem, RKNN_MEMORY_SYNC_TO_DEVICE), RKNN_SUCC);
    EXPECT_EQ(rknn_create_mem_from_fd(ctx_, -1, nullptr, 192, 0), nullptr);
    EXPECT_EQ(rknn_create_mem_from_phys(ctx_, 0, nullptr, 64), nullptr);
}

TEST_F(ZeroCopy, MisuseIsRefused) {
    init(quantized_cnn());
    rknn_tensor_attr in_attr = pixel_input_attr();
    EXPECT_EQ(rknn_create_mem(ctx_, 0), nullptr);
    EXPECT_EQ(rknn_create_mem(0, 64), nullptr) << "no context";
    rknn_tensor_mem* small = create(191);
    rknn_tensor_mem* mem = create(192);
    ASSERT_NE(small, nullptr);
    ASSERT_NE(mem, nullptr);
    EXPECT_EQ(rknn_set_io_mem(ctx_, small, &in_attr), RKNN_ERR_PARAM_INVALID) << "one byte short";
    EXPECT_EQ(rknn_set_io_mem(ctx_, mem, nullptr), RKNN_ERR_PARAM_INVALID);
    rknn_tensor_attr nameless = in_attr;
    nameless.name[0] = '\0';
    EXPECT_EQ(rknn_set_io_mem(ctx_, mem, &nameless), RKNN_ERR_PARAM_INVALID);
    rknn_tensor_attr unknown = in_attr;
    std::strcpy(unknown.name, "no such tensor");
    EXPECT_EQ(rknn_set_io_mem(ctx_, mem, &unknown), RKNN_ERR_PARAM_INVALID);
    rknn_tensor_attr wrong_index = in_attr;
    wrong_index.index = 1;
    EXPECT_EQ(rknn_set_io_mem(ctx_, mem, &wrong_index), RKNN_ERR_PARAM_INVALID);
    rknn_tensor_attr bool_input = in_attr;
    bool_input.type = RKNN_TENSOR_BOOL;
    EXPECT_EQ(rknn_set_io_mem(ctx_, mem, &bool_input), RKNN_ERR_PARAM_INVALID);
    rknn_tensor_attr out_attr = query(RKNN_QUERY_OUTPUT_ATTR);
    out_attr.type = RKNN_TENSOR_INT16;
    EXPECT_EQ(rknn_set_io_mem(ctx_, mem, &out_attr), RKNN_ERR_PARAM_INVALID) << "int16 from an int8 output is not offered";
    rknn_tensor_mem forged = *mem;
    EXPECT_EQ(rknn_set_io_mem(ctx_, &forged, &in_attr), RKNN_ERR_PARAM_INVALID) << "a descriptor we did not make";
    EXPECT_EQ(rknn_mem_sync(ctx_, &forged, RKNN_MEMORY_SYNC_TO_DEVICE), RKNN_ERR_PARAM_INVALID);

    // Destroying the memory while bound: the context keeps the buffer until it goes.
    ASSERT_EQ(rknn_set_io_mem(ctx_, mem, &in_attr), RKNN_SUCC);
    const std::vector<uint8_t> p = pixels(2);
    std::memcpy(mem->virt_addr, p.data(), p.size());
    mems_.pop_back();
    EXPECT_EQ(rknn_destroy_mem(ctx_, mem), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy_mem(ctx_, mem), RKNN_ERR_PARAM_INVALID) << "destroyed twice";
    EXPECT_EQ(rknn_run(ctx_, nullptr), RKNN_SUCC);
}

}  // namespace
