// Convolution tasks on the emulator, compared bit for bit with the int8
// reference (src/cpu/int8) on the same quantised tensors, and fp16
// convolutions within a documented tolerance of the float reference.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "base/half.h"
#include "common/quantized_conv.h"
#include "npu/native_layout.h"
#include "npu_harness.h"

namespace {

using rknn::graph::OpType;
namespace et = rknn::emutest;

constexpr uint64_t kStream = 0x10000, kInput = 0x100000, kWeights = 0x200000, kRecords = 0x300000,
                   kOutput = 0x400000, kResidual = 0x500000;

struct ConvCase {
    int c_in, c_out, h, w, k, stride, pad;
    bool depthwise;
    OpType activation;  // kIdentity for none
    bool residual;
    int32_t input_zp;
};

// The reference's description of a case.
rknn::testing::QuantConvSpec spec_of(const ConvCase& cc) {
    rknn::testing::QuantConvSpec spec;
    spec.c_in = cc.c_in;
    spec.c_out = cc.c_out;
    spec.h = cc.h;
    spec.w = cc.w;
    spec.kh = spec.kw = cc.k;
    spec.stride_h = spec.stride_w = cc.stride;
    spec.pad_top = spec.pad_left = spec.pad_bottom = spec.pad_right = cc.pad;
    spec.depthwise = cc.depthwise;
    spec.activation = cc.activation;
    spec.residual = cc.residual;
    spec.input_zp = cc.input_zp;
    return spec;
}

// Runs one case on the reference and on the emulator and compares every output byte.
void check_conv(const ConvCase& cc, uint32_t seed) {
    const rknn::testing::QuantConvSpec spec = spec_of(cc);
    SCOPED_TRACE(spec.describe());
    rknn::testing::QuantConvCase layer;
    const rknn::Status made = rknn::testing::make_quant_conv(spec, seed, &layer);
    ASSERT_TRUE(made.is_ok()) << made.message();
    const int oc = spec.out_c(), oh = spec.out_h(), ow = spec.out_w();
    const std::vector<int8_t>& w = layer.weights;
    et::EpilogueRegs regs = et::epilogue_regs(layer.epilogue, w.data(), oc, spec.taps_per_kernel(), cc.input_zp);
    regs.residual_addr = kResidual;

    et::ConvGeometry geo;
    geo.in_c = cc.c_in;
    geo.in_h = cc.h;
    geo.in_w = cc.w;
    geo.out_c = oc;
    geo.kh = geo.kw = cc.k;
    geo.stride = cc.stride;
    geo.pad_top = geo.pad_left = geo.pad_bottom = geo.pad_right = cc.pad;
    geo.depthwise = cc.depthwise;
    ASSERT_EQ(geo.out_h(), oh);
    et::ConvAddresses addr{kInput, kWeights, kRecords, kOutput};
    et::TaskEmitter b;
    et::emit_conv_int8(&b, geo, addr, regs, static_cast<int8_t>(cc.input_zp));
    b.tail(0, 0, 0x1d);
    ASSERT_TRUE(b.finish().is_ok()) << b.finish().message();

    et::Device dev;
    const int c_aligned = et::align_up(cc.c_in, 16);
    dev.put(kInput, et::pack_int8_cube(layer.input.data<int8_t>(), cc.c_in, cc.h, cc.w, c_aligned, 0).data(),
            static_cast<size_t>(c_aligned) * cc.h * cc.w);
    const std::vector<int8_t> packed = cc.depthwise ? et::pack_dw_weights_int8(w.data(), oc, cc.k, cc.k, c_aligned)
                                                    : et::pack_conv_weights_int8(w.data(), oc, cc.c_in, cc.k, cc.k, c_aligned);
    dev.put(kWeights, packed.data(), packed.size());
    const int oc_aligned = et::align_up(oc, 16);
    const std::vector<uint8_t> records = et::bs_records(regs, oc_aligned);
    dev.put(kRecords, records.data(), records.size());
    if (cc.residual) {
        const auto r = et::pack_int8_cube(layer.residual.data<int8_t>(), oc, oh, ow, oc_aligned, 0);
        dev.put(kResidual, r.data(), r.size());
    }
    uint8_t* out = dev.zeros(kOutput, static_cast<size_t>(oc_aligned) * oh * ow);
    dev.words(kStream, b.words());
    const auto result = dev.run(kStream, static_cast<uint32_t>(b.body_words()));
    ASSERT_TRUE(result.completed) << result.message;

    const std::vector<int8_t> got = et::unpack_int8_cube(out, oc, oh, ow, static_cast<uint64_t>(oh) * ow * 16);
    int differ = 0, worst = 0;
    for (size_t i = 0; i < got.size(); ++i) {
        const int d = std::abs(got[i] - layer.reference.data<int8_t>()[i]);
        differ += d != 0;
        worst = std::max(worst, d);
    }
    EXPECT_EQ(differ, 0) << "largest difference " << worst << " of " << got.size() << " outputs";
}

TEST(EmulatorConv, DirectConvolutionsMatchTheInt8Reference) {
    const ConvCase cases[] = {
        {3, 8, 9, 9, 3, 1, 1, false, OpType::kIdentity, false, -7},   // padded, 3 real channels of 16
        {16, 16, 8, 8, 3, 2, 1, false, OpType::kIdentity, false, 4},  // strided
        {32, 40, 6, 6, 1, 1, 0, false, OpType::kIdentity, false, 0},  // pointwise, two kernel blocks
        {48, 24, 7, 5, 3, 1, 1, false, OpType::kIdentity, false, -3}, // three input surfaces, non-square
        {8, 12, 11, 11, 5, 2, 2, false, OpType::kIdentity, false, 9}, // 5x5 with a pad of 2
        {64, 33, 5, 5, 3, 1, 0, false, OpType::kIdentity, false, -1}, // valid padding, odd channel count
    };
    uint32_t seed = 11;
    for (const ConvCase& c : cases) check_conv(c, seed += 17);
}

TEST(EmulatorConv, DepthwiseConvolutionsMatchTheInt8Reference) {
    const ConvCase cases[] = {
        {16, 16, 8, 8, 3, 1, 1, true, OpType::kIdentity, false, -5},
        {72, 72, 6, 6, 3, 2, 1, true, OpType::kIdentity, false, 2},  // two 64-channel weight groups
        {24, 24, 9, 7, 5, 1, 2, true, OpType::kRelu, false, 0},
    };
    uint32_t seed = 301;
    for (const ConvCase& c : cases) check_conv(c, seed += 13);
}

TEST(EmulatorConv, FusedActivationsMatchTheInt8Reference) {
    const OpType acts[] = {OpType::kRelu, OpType::kClip, OpType::kLeakyRelu,
                           OpType::kSigmoid, OpType::kTanh, OpType::kSilu};
    uint32_t seed = 500;
    for (OpType a : acts) check_conv({16, 16, 6, 6, 3, 1, 1, false, a, false, -2}, seed += 7);
}

TEST(EmulatorConv, FusedResidualAddMatchesTheInt8Reference) {
    check_conv({16, 16, 6, 6, 3, 1, 1, false, OpType::kIdentity, true, 3}, 700);
    check_conv({32, 32, 5, 5, 1, 1, 0, false, OpType::kRelu, true, -4}, 701);
    check_conv({16, 16, 6, 6, 3, 1, 1, false, OpType::kSilu, true, 1}, 702);
}

// One fp16 convolution task of `geo`: `input` at kInput, the packed weights
// at kWeights, the output cube (`out_bytes`) at `output` (kOutput, or an
// address inside the input's buffer). The output's bytes; empty, with a
// failure recorded, when the task is refused or does not complete.
std::vector<uint8_t> run_fp16_task(const et::ConvGeometry& geo, const std::vector<uint8_t>& input,
                                   const std::vector<uint16_t>& weights, size_t out_bytes, uint64_t output = kOutput) {
    et::Device dev;
    uint8_t* base = dev.put(kInput, input.data(), input.size());
    dev.put(kWeights, weights.data(), weights.size() * 2);
    uint8_t* out = output == kOutput ? dev.zeros(kOutput, out_bytes) : base + (output - kInput);
    et::TaskEmitter b;
    et::emit_conv_fp16(&b, geo, {static_cast<uint32_t>(kInput), static_cast<uint32_t>(kWeights), 0,
                                 static_cast<uint32_t>(output)}, false);
    b.tail(0, 0, 0x0d);
    EXPECT_TRUE(b.finish().is_ok()) << b.finish().message();
    if (!b.finish().is_ok()) return {};
    dev.words(kStream, b.words());
    const auto ran = dev.run(kStream, static_cast<uint32_t>(b.body_words()));
    EXPECT_TRUE(ran.completed) << ran.message;
    if (!ran.completed) return {};
    return std::vector<uint8_t>(out, out + out_bytes);
}

// fp16: products and sums in fp32, one rounding to fp16 at the output. The
// float reference accumulates in another order, so allow a few fp16 ulps.
TEST(EmulatorConv, Fp16ConvolutionStaysWithinTolerance) {
    et::ConvGeometry geo;
    geo.in_c = 12;
    geo.in_h = geo.in_w = 7;
    geo.out_c = 20;
    geo.kh = geo.kw = 3;
    geo.stride = 1;
    geo.pad_top = geo.pad_left = geo.pad_bottom = geo.pad_right = 1;
    geo.fp16 = true;
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> in(static_cast<size_t>(geo.in_c) * 49), w(static_cast<size_t>(geo.out_c) * geo.in_c * 9);
    for (float& v : in) v = rknn::round_to_half(dist(rng));
    for (float& v : w) v = rknn::round_to_half(dist(rng));
    const int c_aligned = et::align_up(geo.in_c, 8);
    const size_t out_bytes = static_cast<size_t>(et::align_up(geo.out_c, 8)) / 8 * 49 * 16;
    const std::vector<uint8_t> out =
        run_fp16_task(geo, et::pack_fp16_cube(in.data(), geo.in_c, 7, 7, c_aligned),
                      et::pack_conv_weights_fp16(w.data(), geo.out_c, geo.in_c, 3, 3, c_aligned), out_bytes);
    ASSERT_EQ(out.size(), out_bytes) << "the task ran";
    const std::vector<float> got = et::unpack_fp16_cube(out.data(), geo.out_c, 7, 7, 49 * 16);
    double worst_ulps = 0;
    for (int o = 0; o < geo.out_c; ++o)
        for (int yy = 0; yy < 7; ++yy)
            for (int xx = 0; xx < 7; ++xx) {
                double acc = 0;
                for (int c = 0; c < geo.in_c; ++c)
                    for (int ky = 0; ky < 3; ++ky)
                        for (int kx = 0; kx < 3; ++kx) {
                            const int iy = yy + ky - 1, ix = xx + kx - 1;
                            if (iy < 0 || iy >= 7 || ix < 0 || ix >= 7) continue;
                            acc += static_cast<double>(in[(static_cast<size_t>(c) * 7 + iy) * 7 + ix]) *
                                   w[((static_cast<size_t>(o) * geo.in_c + c) * 3 + ky) * 3 + kx];
                        }
                const double v = got[(static_cast<size_t>(o) * 7 + yy) * 7 + xx];
                const double ulp = std::ldexp(1.0, std::ilogb(std::max(std::fabs(acc), 6.1e-5)) - 10);
                worst_ulps = std::max(worst_ulps, std::fabs(v - acc) / ulp);
            }
    EXPECT_LE(worst_ulps, 2.0) << "fp16 conv differs from the exact result by more than 2 ulps";
}

// The DPU takes an fp16 task's rows as the convolution finishes them. An
// output over the input the convolution reads must still see the input as
// it was (today the fp32 image of the whole input is built first; the row
// sink also waits when the two overlap): a 3x3 and a 1x1 task written 8 rows
// past their own input give the bytes they give elsewhere.
TEST(EmulatorConv, Fp16OutputOverTheInputWaitsForTheConvolution) {
    constexpr int kC = 16, kSize = 64;
    for (int k : {1, 3}) {
        SCOPED_TRACE("kernel " + std::to_string(k));
        et::ConvGeometry geo;
        geo.in_c = geo.out_c = kC;
        geo.in_h = geo.in_w = kSize;
        geo.kh = geo.kw = k;
        geo.stride = 1;
        geo.pad_top = geo.pad_left = geo.pad_bottom = geo.pad_right = k / 2;
        geo.fp16 = true;
        std::mt19937 rng(7 + k);
        std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
        std::vector<float> in(static_cast<size_t>(kC) * kSize * kSize), w(static_cast<size_t>(kC) * kC * k * k);
        for (float& v : in) v = rknn::round_to_half(dist(rng));
        for (float& v : w) v = rknn::round_to_half(dist(rng));
        std::vector<uint8_t> memory = et::pack_fp16_cube(in.data(), kC, kSize, kSize, kC);
        const size_t cube_bytes = memory.size();
        const uint64_t shift = uint64_t{8} * kSize * 16;  // 8 rows of one surface
        memory.resize(cube_bytes + shift, 0);
        const auto pw = et::pack_conv_weights_fp16(w.data(), kC, kC, k, k, kC);
        const std::vector<uint8_t> elsewhere = run_fp16_task(geo, memory, pw, cube_bytes),
                                   over_input = run_fp16_task(geo, memory, pw, cube_bytes, kInput + shift);
        ASSERT_EQ(elsewhere.size(), cube_bytes);
        ASSERT_EQ(over_input.size(), cube_bytes);
        size_t differ = 0, changed = 0;
        for (size_t i = 0; i < cube_bytes; ++i) {
            differ += elsewhere[i] != over_input[i];
            changed += memory[i] != elsewhere[i];
        }
        EXPECT_EQ(differ, 0u) << differ << " of " << cube_bytes << " bytes differ";
        EXPECT_GT(changed, cube_bytes / 2) << "the convolution changed the bytes";
    }
}

// fp16 tasks sum their products in a fixed order in fp32: direct tasks from
// zero over the window (rows, then columns, then channels), depthwise tasks
// from the first tap's product over the taps. Their operands are float16
// values, so the fused multiply-adds the host may use give the floats of a
// separate multiply and add (this file builds with -ffp-contract=off): the
// bytes must equal that order computed here, padding taps included.
TEST(EmulatorConv, Fp16TasksGiveTheirOrderedSumsBitForBit) {
    struct Case {
        int c_in, c_out, h, w, k, pad;
        bool depthwise;
    };
    for (const Case& c : {Case{12, 20, 7, 9, 3, 1, false}, Case{40, 40, 9, 11, 3, 1, true}, Case{24, 24, 8, 10, 5, 2, true},
                          Case{16, 16, 30, 30, 1, 0, false},
                          // Too few rows to share out by rows: pixel bands, the DPU afterwards.
                          Case{64, 64, 2, 200, 1, 0, false}, Case{32, 48, 3, 120, 3, 1, false}}) {
        SCOPED_TRACE(std::string(c.depthwise ? "depthwise " : "direct ") + std::to_string(c.k) + "x" + std::to_string(c.k));
        et::ConvGeometry geo;
        geo.in_c = c.c_in;
        geo.out_c = c.c_out;
        geo.in_h = c.h;
        geo.in_w = c.w;
        geo.kh = geo.kw = c.k;
        geo.stride = 1;
        geo.pad_top = geo.pad_left = geo.pad_bottom = geo.pad_right = c.pad;
        geo.depthwise = c.depthwise;
        geo.fp16 = true;
        std::mt19937 rng(static_cast<uint32_t>(c.c_in * 100 + c.k));
        std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
        const int per_out = c.depthwise ? 1 : c.c_in;
        std::vector<float> in(static_cast<size_t>(c.c_in) * c.h * c.w), w(static_cast<size_t>(c.c_out) * per_out * c.k * c.k);
        for (float& v : in) v = rknn::round_to_half(dist(rng));
        for (float& v : w) v = rknn::round_to_half(dist(rng));
        const int ca = et::align_up(c.c_in, 8), oca = et::align_up(c.c_out, 8);
        const int oh = geo.out_h(), ow = geo.out_w();
        const size_t out_bytes = static_cast<size_t>(oca) / 8 * oh * ow * 16;
        const std::vector<uint8_t> out =
            run_fp16_task(geo, et::pack_fp16_cube(in.data(), c.c_in, c.h, c.w, ca),
                          c.depthwise ? rknn::npu::pack_dw_weights_fp16(w.data(), c.c_in, c.k, c.k, ca)
                                      : et::pack_conv_weights_fp16(w.data(), c.c_out, c.c_in, c.k, c.k, ca),
                          out_bytes);
        ASSERT_EQ(out.size(), out_bytes) << "the task ran";
        const auto pixel = [&](int ch, int iy, int ix) {
            const bool inside = iy >= 0 && iy < c.h && ix >= 0 && ix < c.w;
            return inside ? in[(static_cast<size_t>(ch) * c.h + iy) * c.w + ix] : 0.0f;  // the pad value 0
        };
        int checked = 0;
        for (int o = 0; o < c.c_out; ++o)
            for (int yy = 0; yy < oh; ++yy)
                for (int xx = 0; xx < ow; ++xx) {
                    float acc = 0.0f;
                    bool first = true;
                    for (int ky = 0; ky < c.k; ++ky)
                        for (int kx = 0; kx < c.k; ++kx)
                            for (int j = 0; j < per_out; ++j) {
                                const int ch = c.depthwise ? o : j;
                                const float product = pixel(ch, yy + ky - c.pad, xx + kx - c.pad) *
                                                      w[((static_cast<size_t>(o) * per_out + j) * c.k + ky) * c.k + kx];
                                acc = c.depthwise && first ? product : acc + product;
                                first = false;
                            }
                    const uint16_t want = rknn::float_to_half(acc * 1.0f + 0.0f);  // OUT_CVT: x 1 + 0
                    uint16_t got;
                    std::memcpy(&got, out.data() + ((static_cast<size_t>(o / 8) * oh + yy) * ow + xx) * 16 + (o % 8) * 2, 2);
                    ASSERT_EQ(got, want) << "output " << o << " at " << yy << "," << xx << ": " << rknn::half_to_float(got)
                                         << " against " << rknn::half_to_float(want);
                    ++checked;
                }
        EXPECT_GT(checked, 1000);
    }
}

// ---- the weight caches and DmaPort::content_version

// One layer's device bytes and expected output (int8 reference).
struct LayerBytes {
    std::vector<uint8_t> input, weights, records;
    std::vector<int8_t> reference;
    std::vector<uint64_t> stream;
    uint32_t body_words = 0;
    int oc = 0, oh = 0, ow = 0;
};

LayerBytes layer_bytes(const ConvCase& cc, uint32_t seed) {
    const rknn::testing::QuantConvSpec spec = spec_of(cc);
    rknn::testing::QuantConvCase layer;
    EXPECT_TRUE(rknn::testing::make_quant_conv(spec, seed, &layer).is_ok());
    LayerBytes l;
    l.oc = spec.out_c();
    l.oh = spec.out_h();
    l.ow = spec.out_w();
    const et::EpilogueRegs regs = et::epilogue_regs(layer.epilogue, layer.weights.data(), l.oc, spec.taps_per_kernel(), 0);
    et::ConvGeometry geo;
    geo.in_c = cc.c_in;
    geo.in_h = cc.h;
    geo.in_w = cc.w;
    geo.out_c = l.oc;
    geo.kh = geo.kw = cc.k;
    geo.stride = cc.stride;
    geo.pad_top = geo.pad_left = geo.pad_bottom = geo.pad_right = cc.pad;
    geo.depthwise = cc.depthwise;
    et::TaskEmitter b;
    et::emit_conv_int8(&b, geo, et::ConvAddresses{kInput, kWeights, kRecords, kOutput}, regs, 0);
    b.tail(0, 0, 0x1d);
    EXPECT_TRUE(b.finish().is_ok());
    l.stream = b.words();
    l.body_words = static_cast<uint32_t>(b.body_words());
    const int c_aligned = et::align_up(cc.c_in, 16);
    const auto input = et::pack_int8_cube(layer.input.data<int8_t>(), cc.c_in, cc.h, cc.w, c_aligned, 0);
    l.input.assign(input.begin(), input.end());
    const std::vector<int8_t> w =
        cc.depthwise ? et::pack_dw_weights_int8(layer.weights.data(), l.oc, cc.k, cc.k, c_aligned)
                     : et::pack_conv_weights_int8(layer.weights.data(), l.oc, cc.c_in, cc.k, cc.k, c_aligned);
    l.weights.assign(w.begin(), w.end());
    l.records = et::bs_records(regs, et::align_up(l.oc, 16));
    l.reference.assign(layer.reference.data<int8_t>(), layer.reference.data<int8_t>() + layer.reference.byte_size());
    return l;
}

// Runs `stream` with `input`, `weights` and `records` written in place on
// `dev` (buffers made on the first call) and returns the int8 output.
std::vector<int8_t> run_layer(et::Device* dev, const LayerBytes& stream, const LayerBytes& input,
                              const LayerBytes& weights, const LayerBytes& records) {
    const auto place = [&](uint64_t addr, const std::vector<uint8_t>& bytes) {
        uint8_t* p = dev->memory().buffer_at(addr);
        if (p == nullptr) p = dev->zeros(addr, bytes.size());
        std::memcpy(p, bytes.data(), bytes.size());
    };
    place(kInput, input.input);
    place(kWeights, weights.weights);
    place(kRecords, records.records);
    const size_t out_bytes = static_cast<size_t>(et::align_up(stream.oc, 16)) * stream.oh * stream.ow;
    uint8_t* out = dev->memory().buffer_at(kOutput);
    if (out == nullptr) out = dev->zeros(kOutput, out_bytes);
    if (dev->memory().buffer_at(kStream) == nullptr) dev->words(kStream, stream.stream);
    const auto result = dev->run(kStream, stream.body_words);
    EXPECT_TRUE(result.completed) << result.message;
    return et::unpack_int8_cube(out, stream.oc, stream.oh, stream.ow, static_cast<uint64_t>(stream.oh) * stream.ow * 16);
}

// While the port reports the same version the packed weights are reused
// without a look at the bytes (so weights changed behind its back are not
// seen: the port promised they had not changed); a new version, or none,
// makes the cache look again.
TEST(EmulatorConv, WeightCachesTrustAnUnchangedVersionOnly) {
    const ConvCase cases[] = {
        {32, 40, 6, 6, 1, 1, 0, false, OpType::kIdentity, false, 0},  // direct
        {48, 48, 7, 7, 3, 1, 1, true, OpType::kIdentity, false, 0},   // depthwise
    };
    uint32_t seed = 901;
    for (const ConvCase& cc : cases) {
        SCOPED_TRACE(cc.depthwise ? "depthwise" : "direct");
        const LayerBytes a = layer_bytes(cc, seed += 7), b = layer_bytes(cc, seed += 7);
        ASSERT_NE(a.weights, b.weights);
        // What B's input and records give with A's weights, on a fresh device.
        et::Device fresh;
        const std::vector<int8_t> a_weights_b_rest = run_layer(&fresh, a, b, a, b);
        ASSERT_NE(a_weights_b_rest, b.reference);

        et::Device dev;
        dev.set_content_version(7);
        EXPECT_EQ(run_layer(&dev, a, a, a, a), a.reference);
        EXPECT_EQ(run_layer(&dev, a, b, b, b), a_weights_b_rest);  // version 7 still: A's packing
        dev.set_content_version(8);
        EXPECT_EQ(run_layer(&dev, a, b, b, b), b.reference);
        dev.set_content_version(0);  // unknown: the bytes are compared
        EXPECT_EQ(run_layer(&dev, a, a, a, a), a.reference);
        EXPECT_EQ(run_layer(&dev, a, b, b, b), b.reference);
    }
}

}  // namespace
