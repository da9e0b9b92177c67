// The matmul API through its C entry points, on the mock device: io attrs
// against runtime-spec 8.2's tables, every RK3588 type and layout against
// the definition computed here in double (its own packing code, written
// from the spec's formulas), per-group scales in the vendor demo's order,
// K segments of B, dynamic M, the rk-llama.cpp pattern on three threads,
// core masks, IOMMU domains, quantisation read-back, the NPU path's caches,
// 2000 live contexts at ulimit -n 1024, and bad input.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "base/half.h"
#include "base/log.h"
#include "common/mock_soc.h"
#include "driver/mock/mock_kernel.h"
#include "matmul/matmul_context.h"
#include "rknn_api.h"
#include "rknn_matmul_api.h"

namespace {

struct Elem {
    int bits;
    bool is_float;
};

Elem elem_of(rknn_tensor_type t) {
    switch (t) {
    case RKNN_TENSOR_INT4: return {4, false};
    case RKNN_TENSOR_INT8: return {8, false};
    case RKNN_TENSOR_INT16: return {16, false};
    case RKNN_TENSOR_INT32: return {32, false};
    case RKNN_TENSOR_FLOAT16: return {16, true};
    case RKNN_TENSOR_FLOAT32: return {32, true};
    default: return {0, false};
    }
}

// Offsets of element (r, c) in an attr's layout, from its dims: 2-D row
// major ([rows][cols] or, for TP_NORM B, [cols][rows]); 3-D [cols/s][rows][s]
// (A, C); 4-D [n/sn][k/sk][sn][sk] (B, one K segment of `segment` rows).
int64_t offset_of(const rknn_matmul_tensor_attr& attr, bool is_b, bool transposed, int64_t r, int64_t c, int64_t rows,
                  int64_t cols, int64_t segment = 0) {
    if (attr.n_dims == 2) return transposed ? c * rows + r : r * cols + c;
    if (attr.n_dims == 3) {
        const int64_t s = attr.dims[2];
        return (c / s) * rows * s + r * s + c % s;
    }
    EXPECT_TRUE(is_b);
    const int64_t sn = attr.dims[2], sk = attr.dims[3];
    const int64_t seg_rows = segment > 0 && rows > segment ? segment : rows;
    const int64_t seg = r / seg_rows, k = r % seg_rows;
    const int64_t here = std::min(seg_rows, rows - seg * seg_rows);
    const int64_t n_tiles = (cols + sn - 1) / sn;
    const int64_t base = seg * n_tiles * ((seg_rows + sk - 1) / sk) * sn * sk;
    return base + (c / sn) * ((here + sk - 1) / sk) * sn * sk + (k / sk) * sn * sk + (c % sn) * sk + k % sk;
}

void put(uint8_t* p, int64_t i, rknn_tensor_type t, double v) {
    switch (t) {
    case RKNN_TENSOR_INT4: {
        const uint8_t nib = static_cast<uint8_t>(static_cast<int>(v)) & 0xf;
        p[i / 2] = i % 2 ? static_cast<uint8_t>((p[i / 2] & 0x0f) | (nib << 4)) : static_cast<uint8_t>((p[i / 2] & 0xf0) | nib);
        break;
    }
    case RKNN_TENSOR_INT8: p[i] = static_cast<uint8_t>(static_cast<int8_t>(v)); break;
    case RKNN_TENSOR_FLOAT16: {
        const uint16_t h = rknn::float_to_half(static_cast<float>(v));
        std::memcpy(p + i * 2, &h, 2);
        break;
    }
    default: FAIL() << "no writer for type " << t;
    }
}

double get(const uint8_t* p, int64_t i, rknn_tensor_type t) {
    switch (t) {
    case RKNN_TENSOR_INT8: return static_cast<int8_t>(p[i]);
    case RKNN_TENSOR_INT16: {
        int16_t v;
        std::memcpy(&v, p + i * 2, 2);
        return v;
    }
    case RKNN_TENSOR_INT32: {
        int32_t v;
        std::memcpy(&v, p + i * 4, 4);
        return v;
    }
    case RKNN_TENSOR_FLOAT16: {
        uint16_t h;
        std::memcpy(&h, p + i * 2, 2);
        return rknn::half_to_float(h);
    }
    case RKNN_TENSOR_FLOAT32: {
        float f;
        std::memcpy(&f, p + i * 4, 4);
        return f;
    }
    default: ADD_FAILURE() << "no reader for type " << t; return 0;
    }
}

struct Case {
    rknn_matmul_type type;
    int m, k, n;
    int b_layout = RKNN_MM_LAYOUT_NORM, ac_layout = RKNN_MM_LAYOUT_NORM;
    int b_quant = RKNN_QUANT_TYPE_PER_LAYER_SYM, ac_quant = RKNN_QUANT_TYPE_PER_LAYER_SYM;
    int group_size = 0;
    int core_mask = RKNN_NPU_CORE_AUTO;
    int iommu_domain = 0;
};

class MatmulApi : public ::testing::Test {
protected:
    void SetUp() override { rknn::log::set_level(0); }
    void TearDown() override { rknn::log::set_level(rknn::log::kDefaultLevel); }
};

rknn_matmul_info info_of(const Case& c) {
    rknn_matmul_info info;
    std::memset(&info, 0, sizeof(info));
    info.M = c.m, info.K = c.k, info.N = c.n;
    info.type = c.type;
    info.B_layout = static_cast<int16_t>(c.b_layout);
    info.AC_layout = static_cast<int16_t>(c.ac_layout);
    info.B_quant_type = static_cast<int16_t>(c.b_quant);
    info.AC_quant_type = static_cast<int16_t>(c.ac_quant);
    info.group_size = static_cast<int16_t>(c.group_size);
    info.iommu_domain_id = c.iommu_domain;
    return info;
}

// Runs `c` with random operands and checks every element of C against the
// definition: exact for integer outputs, a rounding of it for float ones.
void run_and_check(const Case& c, uint32_t seed) {
    SCOPED_TRACE("type " + std::to_string(c.type) + " M " + std::to_string(c.m) + " K " + std::to_string(c.k) + " N " +
                 std::to_string(c.n) + " B_layout " + std::to_string(c.b_layout) + " AC_layout " +
                 std::to_string(c.ac_layout) + " B_quant " + std::to_string(c.b_quant));
    rknn_matmul_info info = info_of(c);
    rknn_matmul_io_attr io;
    rknn_matmul_ctx ctx = 0;
    ASSERT_EQ(rknn_matmul_create(&ctx, &info, &io), RKNN_SUCC);
    ASSERT_EQ(rknn_matmul_set_core_mask(ctx, static_cast<rknn_core_mask>(c.core_mask)), RKNN_SUCC);
    const rknn_tensor_type ta = io.A.type, tb = io.B.type, tc = io.C.type;
    const bool ints = !elem_of(ta).is_float;
    std::mt19937 rng(seed);
    const int lo = ta == RKNN_TENSOR_INT4 ? -8 : -128, hi = ta == RKNN_TENSOR_INT4 ? 7 : 127;
    std::uniform_int_distribution<int> code(lo, hi);
    std::uniform_real_distribution<float> real(-1.0f, 1.0f);
    std::vector<double> a(static_cast<size_t>(c.m) * c.k), b(static_cast<size_t>(c.k) * c.n);
    for (double& v : a) v = ints ? code(rng) : rknn::round_to_half(real(rng));
    for (double& v : b) v = ints ? code(rng) : rknn::round_to_half(real(rng));
    // Quantisation: A asymmetric per layer where asked, B per its type.
    double a_scale = 1, c_scale = 1;
    int a_zp = 0, c_zp = 0;
    std::vector<float> b_scale(1, 1.0f);
    std::vector<int32_t> b_zp(1, 0);
    const bool ac_asym = c.ac_quant == RKNN_QUANT_TYPE_PER_LAYER_ASYM;
    if (ints) {
        float s = 0.02f;
        int32_t z = ac_asym ? 3 : 0;
        rknn_quant_params qa{};
        std::strcpy(qa.name, "A");
        qa.scale = &s, qa.scale_len = 1, qa.zp = &z, qa.zp_len = 1;
        ASSERT_EQ(rknn_matmul_set_quant_params(ctx, &qa), RKNN_SUCC);
        a_scale = s, a_zp = z;
        const int64_t count = c.b_quant >= RKNN_QUANT_TYPE_PER_GROUP_SYM     ? int64_t{c.k} / c.group_size * c.n
                              : c.b_quant >= RKNN_QUANT_TYPE_PER_CHANNEL_SYM ? c.n
                                                                              : 1;
        b_scale.resize(static_cast<size_t>(count));
        b_zp.assign(static_cast<size_t>(count), 0);
        for (int64_t i = 0; i < count; ++i) {
            b_scale[static_cast<size_t>(i)] = 0.01f + 0.001f * static_cast<float>(i % 17);
            if (c.b_quant % 2 == 1) b_zp[static_cast<size_t>(i)] = static_cast<int32_t>(i % 5) - 2;
        }
        rknn_quant_params qb{};
        std::strcpy(qb.name, "B");
        qb.scale = b_scale.data(), qb.scale_len = static_cast<int32_t>(count);
        qb.zp = b_zp.data(), qb.zp_len = static_cast<int32_t>(count);
        ASSERT_EQ(rknn_matmul_set_quant_params(ctx, &qb), RKNN_SUCC);
        if (tc == RKNN_TENSOR_INT8) {
            float sc = static_cast<float>(0.02 * 0.015 * std::sqrt(c.k) * 40);
            int32_t zc = ac_asym ? -5 : 0;
            rknn_quant_params qc{};
            std::strcpy(qc.name, "C");
            qc.scale = &sc, qc.scale_len = 1, qc.zp = &zc, qc.zp_len = 1;
            ASSERT_EQ(rknn_matmul_set_quant_params(ctx, &qc), RKNN_SUCC);
            c_scale = sc, c_zp = zc;
        }
    }
    rknn_tensor_mem* ma = rknn_create_mem(ctx, io.A.size);
    rknn_tensor_mem* mb = rknn_create_mem(ctx, io.B.size);
    rknn_tensor_mem* mc = rknn_create_mem(ctx, io.C.size);
    ASSERT_TRUE(ma && mb && mc);
    std::memset(ma->virt_addr, 0, io.A.size);
    std::memset(mb->virt_addr, 0, io.B.size);
    auto* pa = static_cast<uint8_t*>(ma->virt_addr);
    auto* pb = static_cast<uint8_t*>(mb->virt_addr);
    const bool b_tp = c.b_layout == RKNN_MM_LAYOUT_TP_NORM;
    for (int64_t r = 0; r < c.m; ++r)
        for (int64_t k = 0; k < c.k; ++k) put(pa, offset_of(io.A, false, false, r, k, c.m, c.k), ta, a[r * c.k + k]);
    for (int64_t k = 0; k < c.k; ++k)
        for (int64_t n = 0; n < c.n; ++n) put(pb, offset_of(io.B, true, b_tp, k, n, c.k, c.n, 8192), tb, b[k * c.n + n]);
    ASSERT_EQ(rknn_matmul_set_io_mem(ctx, ma, &io.A), RKNN_SUCC);
    ASSERT_EQ(rknn_matmul_set_io_mem(ctx, mb, &io.B), RKNN_SUCC);
    ASSERT_EQ(rknn_matmul_set_io_mem(ctx, mc, &io.C), RKNN_SUCC);
    ASSERT_EQ(rknn_matmul_run(ctx), RKNN_SUCC);
    const auto* pc = static_cast<const uint8_t*>(mc->virt_addr);
    for (int64_t r = 0; r < c.m; ++r)
        for (int64_t n = 0; n < c.n; ++n) {
            double exact = 0, value = 0;
            const int64_t group = c.b_quant >= RKNN_QUANT_TYPE_PER_GROUP_SYM ? c.group_size : c.k;
            for (int64_t g0 = 0; g0 < c.k; g0 += group) {
                const size_t q = c.b_quant >= RKNN_QUANT_TYPE_PER_GROUP_SYM ? static_cast<size_t>(g0 / group * c.n + n)
                                 : c.b_quant >= RKNN_QUANT_TYPE_PER_CHANNEL_SYM ? static_cast<size_t>(n)
                                                                                 : 0;
                double sum = 0;
                for (int64_t k = g0; k < g0 + group; ++k) sum += (a[r * c.k + k] - a_zp) * (b[k * c.n + n] - b_zp[q]);
                exact += sum;
                value += a_scale * b_scale[q] * sum;
            }
            const double got = get(pc, offset_of(io.C, false, false, r, n, c.m, c.n), tc);
            switch (tc) {
            case RKNN_TENSOR_INT32: ASSERT_EQ(got, exact) << r << "," << n; break;
            case RKNN_TENSOR_INT16: ASSERT_EQ(got, std::max(-32768.0, std::min(32767.0, exact))) << r << "," << n; break;
            case RKNN_TENSOR_INT8: {
                const double q = std::max(-128.0, std::min(127.0, std::nearbyint(value / c_scale) + c_zp));
                ASSERT_NEAR(got, q, std::fabs(value / c_scale - std::trunc(value / c_scale)) > 0.499 ? 1 : 0) << r << "," << n;
                break;
            }
            case RKNN_TENSOR_FLOAT32:
                if (ints) {
                    ASSERT_EQ(got, static_cast<float>(value)) << r << "," << n;
                } else {
                    ASSERT_NEAR(got, exact, 1e-6 * c.k) << r << "," << n;
                }
                break;
            default: ASSERT_NEAR(got, exact, 2e-3 * (1 + std::fabs(exact)) + 1e-4 * c.k) << r << "," << n;  // float16
            }
        }
    rknn_destroy_mem(ctx, ma);
    rknn_destroy_mem(ctx, mb);
    rknn_destroy_mem(ctx, mc);
    EXPECT_EQ(rknn_matmul_destroy(ctx), RKNN_SUCC);
}

TEST_F(MatmulApi, IoAttrsFollowTheLayoutTables) {
    Case c{RKNN_INT8_MM_INT8_TO_INT32, 5, 64, 96, RKNN_MM_LAYOUT_NATIVE, RKNN_MM_LAYOUT_NATIVE};
    rknn_matmul_info info = info_of(c);
    rknn_matmul_io_attr io;
    rknn_matmul_ctx ctx = 0;
    ASSERT_EQ(rknn_matmul_create(&ctx, &info, &io), RKNN_SUCC);
    EXPECT_STREQ(io.A.name, "A");
    EXPECT_EQ(io.A.n_dims, 3u);
    EXPECT_EQ(std::vector<uint32_t>(io.A.dims, io.A.dims + 3), (std::vector<uint32_t>{4, 5, 16}));
    EXPECT_EQ(std::vector<uint32_t>(io.B.dims, io.B.dims + 4), (std::vector<uint32_t>{3, 2, 32, 32}));
    EXPECT_EQ(std::vector<uint32_t>(io.C.dims, io.C.dims + 3), (std::vector<uint32_t>{24, 5, 4}));
    EXPECT_EQ(io.A.size, 64u * 5);
    EXPECT_EQ(io.B.size, 64u * 96);
    EXPECT_EQ(io.C.size, 96u * 5 * 4);
    EXPECT_EQ(io.C.type, RKNN_TENSOR_INT32);
    EXPECT_EQ(rknn_matmul_destroy(ctx), RKNN_SUCC);

    Case f{RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT16, 3, 32, 64, RKNN_MM_LAYOUT_TP_NORM, RKNN_MM_LAYOUT_NATIVE};
    info = info_of(f);
    ASSERT_EQ(rknn_matmul_create(&ctx, &info, &io), RKNN_SUCC);
    EXPECT_EQ(std::vector<uint32_t>(io.A.dims, io.A.dims + 3), (std::vector<uint32_t>{4, 3, 8}));
    EXPECT_EQ(std::vector<uint32_t>(io.B.dims, io.B.dims + 2), (std::vector<uint32_t>{64, 32}));
    EXPECT_EQ(std::vector<uint32_t>(io.C.dims, io.C.dims + 3), (std::vector<uint32_t>{8, 3, 8}));
    EXPECT_EQ(io.B.size, 32u * 64 * 2);
    EXPECT_EQ(rknn_matmul_destroy(ctx), RKNN_SUCC);

    Case i4{RKNN_INT4_MM_INT4_TO_INT16, 2, 64, 128, RKNN_MM_LAYOUT_NATIVE, RKNN_MM_LAYOUT_NATIVE};
    info = info_of(i4);
    ASSERT_EQ(rknn_matmul_create(&ctx, &info, &io), RKNN_SUCC);
    EXPECT_EQ(std::vector<uint32_t>(io.A.dims, io.A.dims + 3), (std::vector<uint32_t>{2, 2, 32}));
    EXPECT_EQ(std::vector<uint32_t>(io.B.dims, io.B.dims + 4), (std::vector<uint32_t>{2, 2, 64, 32}));
    EXPECT_EQ(std::vector<uint32_t>(io.C.dims, io.C.dims + 3), (std::vector<uint32_t>{16, 2, 8}));
    EXPECT_EQ(io.A.size, 64u * 2 / 2);
    EXPECT_EQ(rknn_matmul_destroy(ctx), RKNN_SUCC);
}

TEST_F(MatmulApi, EveryRk3588TypeAndLayoutGivesTheDefinition) {
    const rknn_matmul_type types[] = {RKNN_INT8_MM_INT8_TO_INT32, RKNN_INT8_MM_INT8_TO_INT8, RKNN_INT8_MM_INT8_TO_FLOAT32,
                                      RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32, RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT16,
                                      RKNN_INT4_MM_INT4_TO_INT16};
    std::mt19937 rng(22);
    uint32_t seed = 1;
    for (rknn_matmul_type type : types)
        for (int b_layout : {RKNN_MM_LAYOUT_NORM, RKNN_MM_LAYOUT_NATIVE, RKNN_MM_LAYOUT_TP_NORM})
            for (int ac_layout : {RKNN_MM_LAYOUT_NORM, RKNN_MM_LAYOUT_NATIVE})
                for (int trial = 0; trial < 3; ++trial) {
                    const int n_step = type == RKNN_INT4_MM_INT4_TO_INT16 ? 64 : 32;
                    Case c{type, 1 + static_cast<int>(rng() % 20), 32 * (1 + static_cast<int>(rng() % 6)),
                           n_step * (1 + static_cast<int>(rng() % 3)), b_layout, ac_layout};
                    if (type != RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32 && type != RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT16) {
                        // Trial 2: A's zero point with a symmetric B (the NPU's bias path for int32).
                        c.ac_quant = trial == 0 ? RKNN_QUANT_TYPE_PER_LAYER_SYM : RKNN_QUANT_TYPE_PER_LAYER_ASYM;
                        c.b_quant = trial == 1 ? RKNN_QUANT_TYPE_PER_LAYER_ASYM : RKNN_QUANT_TYPE_PER_CHANNEL_SYM;
                    }
                    run_and_check(c, seed++);
                    if (HasFatalFailure()) return;
                }
}

// The int8 types run as NPU tasks (their int8 and float32 outputs finished
// from the NPU's sums): every core mask gives the definition, with A's and
// B's zero points and B's scales per channel.
TEST_F(MatmulApi, Int8TypesOnEveryCoreMaskGiveTheDefinition) {
    uint32_t seed = 100;
    for (rknn_matmul_type type : {RKNN_INT8_MM_INT8_TO_INT32, RKNN_INT8_MM_INT8_TO_INT8, RKNN_INT8_MM_INT8_TO_FLOAT32})
        for (int mask : {RKNN_NPU_CORE_0, RKNN_NPU_CORE_1, RKNN_NPU_CORE_2, RKNN_NPU_CORE_0_1, RKNN_NPU_CORE_0_1_2}) {
            Case c{type, 37, 320, 96, RKNN_MM_LAYOUT_TP_NORM, RKNN_MM_LAYOUT_NORM, RKNN_QUANT_TYPE_PER_CHANNEL_ASYM,
                   RKNN_QUANT_TYPE_PER_LAYER_ASYM};
            c.core_mask = mask;
            run_and_check(c, seed++);
            if (HasFatalFailure()) return;
        }
}

// Per-group scales index as the vendor demo writes them: scale[g * N + n].
TEST_F(MatmulApi, PerGroupScalesTakeTheDemosOrder) {
    for (int b_quant : {RKNN_QUANT_TYPE_PER_GROUP_SYM, RKNN_QUANT_TYPE_PER_GROUP_ASYM})
        for (rknn_matmul_type type : {RKNN_INT8_MM_INT8_TO_FLOAT32, RKNN_INT8_MM_INT8_TO_INT8}) {
            Case c{type, 3, 128, 64, RKNN_MM_LAYOUT_TP_NORM, RKNN_MM_LAYOUT_NORM, b_quant, RKNN_QUANT_TYPE_PER_LAYER_SYM,
                   32};
            run_and_check(c, 7);
        }
}

// get_quant_params reads back what was set (defaults where nothing was),
// gives B's per-channel scales in `scale`, and writes nothing when it refuses.
TEST_F(MatmulApi, GetQuantParamsReadsBackWhatWasSet) {
    constexpr int kN = 32;
    rknn_matmul_info info = info_of({RKNN_INT8_MM_INT8_TO_INT32, 4, 64, kN, RKNN_MM_LAYOUT_NORM, RKNN_MM_LAYOUT_NORM,
                                     RKNN_QUANT_TYPE_PER_CHANNEL_ASYM, RKNN_QUANT_TYPE_PER_LAYER_ASYM});
    rknn_matmul_io_attr io;
    rknn_matmul_ctx ctx = 0;
    ASSERT_EQ(rknn_matmul_create(&ctx, &info, &io), RKNN_SUCC);
    std::vector<float> set_scale(kN);
    std::vector<int32_t> set_zp(kN);
    for (int n = 0; n < kN; ++n) set_scale[n] = 0.5f + 0.25f * n, set_zp[n] = n % 7 - 3;
    rknn_quant_params q{};
    std::strcpy(q.name, "B");
    q.scale = set_scale.data(), q.scale_len = kN, q.zp = set_zp.data(), q.zp_len = kN;
    ASSERT_EQ(rknn_matmul_set_quant_params(ctx, &q), RKNN_SUCC);

    std::vector<float> got_scale(kN, -1.0f), per_column(kN, -1.0f);
    std::vector<int32_t> got_zp(kN, -99);
    rknn_quant_params r{};
    std::strcpy(r.name, "B");
    r.scale = got_scale.data(), r.scale_len = kN, r.zp = got_zp.data(), r.zp_len = kN;
    ASSERT_EQ(rknn_matmul_get_quant_params(ctx, &r, per_column.data()), RKNN_SUCC);
    EXPECT_EQ(got_scale, set_scale);
    EXPECT_EQ(got_zp, set_zp);
    EXPECT_EQ(per_column, set_scale);
    EXPECT_EQ(r.scale_len, kN);
    EXPECT_EQ(r.zp_len, kN);

    // Too short: refused, and nothing written.
    std::fill(got_scale.begin(), got_scale.end(), -1.0f);
    std::fill(per_column.begin(), per_column.end(), -1.0f);
    std::fill(got_zp.begin(), got_zp.end(), -99);
    r.scale_len = kN, r.zp_len = kN - 1;
    EXPECT_NE(rknn_matmul_get_quant_params(ctx, &r, per_column.data()), RKNN_SUCC);
    EXPECT_EQ(got_scale, std::vector<float>(kN, -1.0f));
    EXPECT_EQ(per_column, std::vector<float>(kN, -1.0f));
    EXPECT_EQ(got_zp, std::vector<int32_t>(kN, -99));
    EXPECT_EQ(r.zp_len, kN - 1);

    // A was never set: scale 1, zero point 0.
    rknn_quant_params qa{};
    std::strcpy(qa.name, "A");
    float a_scale = -1.0f, a_out = -1.0f;
    int32_t a_zp = -99;
    qa.scale = &a_scale, qa.scale_len = 1, qa.zp = &a_zp, qa.zp_len = 1;
    ASSERT_EQ(rknn_matmul_get_quant_params(ctx, &qa, &a_out), RKNN_SUCC);
    EXPECT_EQ(a_scale, 1.0f);
    EXPECT_EQ(a_zp, 0);
    EXPECT_EQ(a_out, 1.0f);

    std::strcpy(qa.name, "D");
    EXPECT_EQ(rknn_matmul_get_quant_params(ctx, &qa, &a_out), RKNN_ERR_PARAM_INVALID);
    EXPECT_EQ(rknn_matmul_get_quant_params(ctx, nullptr, &a_out), RKNN_ERR_PARAM_INVALID);
    EXPECT_EQ(rknn_matmul_destroy(ctx), RKNN_SUCC);
}

// Above 8192 K rows, RK3588's native B is one block per segment of 8192.
TEST_F(MatmulApi, NativeBIsSegmentedAlongKAbove8192) {
    Case c{RKNN_INT8_MM_INT8_TO_INT32, 2, 8192 + 64, 32, RKNN_MM_LAYOUT_NATIVE, RKNN_MM_LAYOUT_NORM};
    run_and_check(c, 3);
    rknn_matmul_info info = info_of(c);
    std::vector<int8_t> norm(static_cast<size_t>(c.k) * c.n), native(norm.size(), 0x55);
    for (size_t i = 0; i < norm.size(); ++i) norm[i] = static_cast<int8_t>(i * 7 % 251);
    ASSERT_EQ(rknn_B_normal_layout_to_native_layout(norm.data(), native.data(), c.k, c.n, &info), RKNN_SUCC);
    // B[8192][0] opens the second segment: after 8192 / 32 tiles of 32 x 32.
    EXPECT_EQ(native[8192 / 32 * 1024], norm[8192 * static_cast<size_t>(c.n)]);
    EXPECT_EQ(native[1], norm[1 * static_cast<size_t>(c.n)]) << "k fastest within a tile";
    EXPECT_EQ(native[32], norm[1]) << "then n";
}

// The dynamic-shape flow: B (TP_NORM) bound once, M varying, A and C bound
// again after each rknn_matmul_set_dynamic_shape.
// K above the CNA's 8192 channels (an LLM FFN's down-projection has
// K = 11008) runs on the NPU in parts whose partial sums the host adds:
// integer results exact, float ones within the float32 bound, per-channel B
// and an asymmetric A included. Nothing falls back to the host reference.
TEST_F(MatmulApi, KBeyondOneConvolutionRunsOnTheNpuInParts) {
    std::vector<std::string> lines;
    rknn::log::set_level(3);
    rknn::log::set_sink([&lines](const std::string& line) { lines.push_back(line); });
    uint32_t seed = 90;
    for (rknn_matmul_type type : {RKNN_INT8_MM_INT8_TO_INT32, RKNN_INT8_MM_INT8_TO_INT8, RKNN_INT8_MM_INT8_TO_FLOAT32,
                                  RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32, RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT16}) {
        run_and_check({type, 3, 11008, 32}, seed++);
        const bool ints = type == RKNN_INT8_MM_INT8_TO_INT32 || type == RKNN_INT8_MM_INT8_TO_INT8 ||
                          type == RKNN_INT8_MM_INT8_TO_FLOAT32;
        Case on_three_cores{type, 1, 8192 + 32, 64};
        on_three_cores.core_mask = RKNN_NPU_CORE_0_1_2;
        if (ints) {
            on_three_cores.b_quant = RKNN_QUANT_TYPE_PER_CHANNEL_SYM;
            on_three_cores.ac_quant = RKNN_QUANT_TYPE_PER_LAYER_ASYM;
        }
        run_and_check(on_three_cores, seed++);
    }
    rknn::log::set_sink(nullptr);
    for (const std::string& line : lines)
        EXPECT_EQ(line.find("runs on the host reference"), std::string::npos) << line;
}

TEST_F(MatmulApi, DynamicShapesVaryM) {
    rknn_matmul_shape shapes[3] = {{1, 64, 32}, {4, 64, 32}, {17, 64, 32}};
    rknn_matmul_info info = info_of({RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32, 0, 0, 0, RKNN_MM_LAYOUT_TP_NORM});
    rknn_matmul_io_attr io[3];
    rknn_matmul_ctx ctx = 0;
    ASSERT_EQ(rknn_matmul_create_dynamic_shape(&ctx, &info, 3, shapes, io), RKNN_SUCC);
    rknn_tensor_mem* a = rknn_create_mem(ctx, io[2].A.size);
    rknn_tensor_mem* b = rknn_create_mem(ctx, io[2].B.size);
    rknn_tensor_mem* c = rknn_create_mem(ctx, io[2].C.size);
    auto* pb = static_cast<uint16_t*>(b->virt_addr);
    for (int i = 0; i < 64 * 32; ++i) pb[i] = rknn::float_to_half(static_cast<float>(i % 7) - 3.0f);  // B[n][k]
    auto* pa = static_cast<uint16_t*>(a->virt_addr);
    for (int i = 0; i < 17 * 64; ++i) pa[i] = rknn::float_to_half(static_cast<float>(i % 5) * 0.5f);
    ASSERT_EQ(rknn_matmul_set_io_mem(ctx, b, &io[0].B), RKNN_SUCC);
    for (int s : {2, 0, 1}) {
        ASSERT_EQ(rknn_matmul_set_dynamic_shape(ctx, &shapes[s]), RKNN_SUCC);
        ASSERT_EQ(rknn_matmul_set_io_mem(ctx, a, &io[s].A), RKNN_SUCC);
        ASSERT_EQ(rknn_matmul_set_io_mem(ctx, c, &io[s].C), RKNN_SUCC);
        ASSERT_EQ(rknn_matmul_run(ctx), RKNN_SUCC);
        const auto* pc = static_cast<const float*>(c->virt_addr);
        for (int m = 0; m < shapes[s].M; ++m)
            for (int n = 0; n < 32; ++n) {
                double want = 0;
                for (int k = 0; k < 64; ++k)
                    want += rknn::half_to_float(pa[m * 64 + k]) * rknn::half_to_float(pb[n * 64 + k]);
                ASSERT_EQ(pc[m * 32 + n], static_cast<float>(want)) << "shape " << s << " " << m << "," << n;
            }
    }
    rknn_matmul_shape other{2, 64, 32};
    EXPECT_EQ(rknn_matmul_set_dynamic_shape(ctx, &other), RKNN_ERR_PARAM_INVALID);
    for (rknn_tensor_mem* mem : {a, b, c}) rknn_destroy_mem(ctx, mem);
    EXPECT_EQ(rknn_matmul_destroy(ctx), RKNN_SUCC);
}

// rk-llama.cpp: one weight buffer, each context's B a slice of it through
// rknn_create_mem_from_fd with an offset, bound once; A and C bound again on
// every call; three contexts on three threads, 1000 calls in all.
TEST_F(MatmulApi, RkLlamaPatternOnThreeThreads) {
    constexpr int kM = 1, kK = 64, kN = 32, kCalls = 334;
    Case c{RKNN_INT8_MM_INT8_TO_INT32, kM, kK, kN, RKNN_MM_LAYOUT_NATIVE, RKNN_MM_LAYOUT_NORM};
    rknn_matmul_info info = info_of(c);
    rknn_matmul_ctx ctxs[3] = {};
    rknn_matmul_io_attr io[3];
    for (int i = 0; i < 3; ++i) ASSERT_EQ(rknn_matmul_create(&ctxs[i], &info, &io[i]), RKNN_SUCC);
    const uint32_t slice = io[0].B.size;
    rknn_tensor_mem* weights = rknn_create_mem(ctxs[0], slice * 3);
    ASSERT_NE(weights, nullptr);
    auto* w = static_cast<int8_t*>(weights->virt_addr);
    for (uint32_t i = 0; i < slice * 3; ++i) w[i] = static_cast<int8_t>(i * 13 % 255 - 127);
    rknn_tensor_mem* b[3];
    for (int i = 0; i < 3; ++i) {
        b[i] = rknn_create_mem_from_fd(ctxs[i], weights->fd, weights->virt_addr, slice, static_cast<int32_t>(slice * i));
        ASSERT_NE(b[i], nullptr);
        ASSERT_EQ(rknn_matmul_set_io_mem(ctxs[i], b[i], &io[i].B), RKNN_SUCC);
    }
    ASSERT_EQ(rknn_matmul_set_core_mask(ctxs[1], RKNN_NPU_CORE_1), RKNN_SUCC);
    ASSERT_EQ(rknn_matmul_set_core_mask(ctxs[2], RKNN_NPU_CORE_2), RKNN_SUCC);
    rknn_tensor_mem* shared_a = rknn_create_mem(ctxs[0], io[0].A.size);
    auto* a = static_cast<int8_t*>(shared_a->virt_addr);
    for (int k = 0; k < kK; ++k) a[k] = static_cast<int8_t>(k % 9 - 4);
    std::vector<int> failures(3, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < 3; ++t)
        threads.emplace_back([&, t] {
            for (int call = 0; call < kCalls; ++call) {
                rknn_tensor_mem* out = rknn_create_mem(ctxs[t], io[t].C.size);
                if (out == nullptr || rknn_matmul_set_io_mem(ctxs[t], shared_a, &io[t].A) != RKNN_SUCC ||
                    rknn_matmul_set_io_mem(ctxs[t], out, &io[t].C) != RKNN_SUCC || rknn_matmul_run(ctxs[t]) != RKNN_SUCC) {
                    ++failures[t];
                } else {
                    // Column n of this context's B: native [1][2][32][32], k fastest.
                    const auto* cv = static_cast<const int32_t*>(out->virt_addr);
                    for (int n = 0; n < kN; ++n) {
                        int32_t want = 0;
                        for (int k = 0; k < kK; ++k)
                            want += a[k] * w[slice * t + (k / 32) * 1024 + n * 32 + k % 32];
                        if (cv[n] != want) ++failures[t];
                    }
                }
                if (out != nullptr) rknn_destroy_mem(ctxs[t], out);
            }
        });
    for (std::thread& th : threads) th.join();
    EXPECT_EQ(failures, (std::vector<int>{0, 0, 0}));
    for (int i = 0; i < 3; ++i) rknn_destroy_mem(ctxs[i], b[i]);
    rknn_destroy_mem(ctxs[0], shared_a);
    rknn_destroy_mem(ctxs[0], weights);
    for (rknn_matmul_ctx ctx : ctxs) EXPECT_EQ(rknn_matmul_destroy(ctx), RKNN_SUCC);
}

// Float16 types run as NPU tasks: a multi-core mask splits the work and
// gives the single core's bytes; three contexts submit from three threads.
TEST_F(MatmulApi, Float16OnTheNpuIsTheSameOnEveryCoreMaskAndThread) {
    constexpr int kM = 48, kK = 256, kN = 64;
    rknn_matmul_info info = info_of({RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32, kM, kK, kN, RKNN_MM_LAYOUT_NATIVE});
    std::vector<uint16_t> a(kM * kK), b_norm(kK * kN);
    for (size_t i = 0; i < a.size(); ++i) a[i] = rknn::float_to_half(static_cast<float>(i % 37) / 37.0f - 0.5f);
    for (size_t i = 0; i < b_norm.size(); ++i) b_norm[i] = rknn::float_to_half(static_cast<float>(i % 29) / 29.0f - 0.5f);
    const auto run_once = [&](rknn_matmul_ctx ctx, rknn_matmul_io_attr& io, std::vector<float>* out) {
        rknn_tensor_mem* ma = rknn_create_mem(ctx, io.A.size);
        rknn_tensor_mem* mb = rknn_create_mem(ctx, io.B.size);
        rknn_tensor_mem* mc = rknn_create_mem(ctx, io.C.size);
        std::memcpy(ma->virt_addr, a.data(), io.A.size);
        int ret = rknn_B_normal_layout_to_native_layout(b_norm.data(), mb->virt_addr, kK, kN, &info);
        if (ret == RKNN_SUCC) ret = rknn_matmul_set_io_mem(ctx, ma, &io.A);
        if (ret == RKNN_SUCC) ret = rknn_matmul_set_io_mem(ctx, mb, &io.B);
        if (ret == RKNN_SUCC) ret = rknn_matmul_set_io_mem(ctx, mc, &io.C);
        if (ret == RKNN_SUCC) ret = rknn_matmul_run(ctx);
        out->assign(static_cast<const float*>(mc->virt_addr), static_cast<const float*>(mc->virt_addr) + kM * kN);
        for (rknn_tensor_mem* m : {ma, mb, mc}) rknn_destroy_mem(ctx, m);
        return ret;
    };
    std::vector<float> single;
    for (int mask : {RKNN_NPU_CORE_0, RKNN_NPU_CORE_1, RKNN_NPU_CORE_2, RKNN_NPU_CORE_0_1, RKNN_NPU_CORE_0_1_2}) {
        rknn_matmul_io_attr io;
        rknn_matmul_ctx ctx = 0;
        ASSERT_EQ(rknn_matmul_create(&ctx, &info, &io), RKNN_SUCC);
        ASSERT_EQ(rknn_matmul_set_core_mask(ctx, static_cast<rknn_core_mask>(mask)), RKNN_SUCC);
        std::vector<float> c;
        ASSERT_EQ(run_once(ctx, io, &c), RKNN_SUCC) << "mask " << mask;
        if (single.empty()) {
            single = c;
            // Against the definition, within the float32 sums' reordering.
            for (int m = 0; m < kM; ++m)
                for (int n = 0; n < kN; ++n) {
                    double want = 0;
                    for (int k = 0; k < kK; ++k)
                        want += double{rknn::half_to_float(a[m * kK + k])} * rknn::half_to_float(b_norm[k * kN + n]);
                    ASSERT_NEAR(c[static_cast<size_t>(m * kN + n)], want, 1e-4) << m << "," << n;
                }
        }
        EXPECT_EQ(0, std::memcmp(c.data(), single.data(), c.size() * sizeof(float))) << "mask " << mask;
        EXPECT_EQ(rknn_matmul_destroy(ctx), RKNN_SUCC);
    }
    std::vector<int> failures(3, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < 3; ++t)
        threads.emplace_back([&, t] {
            rknn_matmul_io_attr io;
            rknn_matmul_ctx ctx = 0;
            if (rknn_matmul_create(&ctx, &info, &io) != RKNN_SUCC) {
                ++failures[t];
                return;
            }
            rknn_matmul_set_core_mask(ctx, static_cast<rknn_core_mask>(1 << t));
            for (int i = 0; i < 20; ++i) {
                std::vector<float> c;
                if (run_once(ctx, io, &c) != RKNN_SUCC || c != single) ++failures[t];
            }
            rknn_matmul_destroy(ctx);
        });
    for (std::thread& th : threads) th.join();
    EXPECT_EQ(failures, (std::vector<int>{0, 0, 0}));
}

// The NPU path keeps its linked stream and bias records between runs: a new
// zero point for A, new data in B (bound again) and a new C buffer each show.
TEST_F(MatmulApi, NpuRunsFollowNewParametersAndBuffers) {
    constexpr int kM = 3, kK = 64, kN = 32;
    rknn_matmul_info info = info_of({RKNN_INT8_MM_INT8_TO_INT32, kM, kK, kN, RKNN_MM_LAYOUT_NORM, RKNN_MM_LAYOUT_NORM,
                                     RKNN_QUANT_TYPE_PER_LAYER_SYM, RKNN_QUANT_TYPE_PER_LAYER_ASYM});
    rknn_matmul_io_attr io;
    rknn_matmul_ctx ctx = 0;
    ASSERT_EQ(rknn_matmul_create(&ctx, &info, &io), RKNN_SUCC);
    rknn_tensor_mem* a = rknn_create_mem(ctx, io.A.size);
    rknn_tensor_mem* b = rknn_create_mem(ctx, io.B.size);
    auto* pa = static_cast<int8_t*>(a->virt_addr);
    auto* pb = static_cast<int8_t*>(b->virt_addr);
    for (int i = 0; i < kM * kK; ++i) pa[i] = static_cast<int8_t>(i % 23 - 11);
    ASSERT_EQ(rknn_matmul_set_io_mem(ctx, a, &io.A), RKNN_SUCC);
    for (int round = 0; round < 4; ++round) {
        if (round % 2 == 0) {  // new B on even rounds; A's zero point changes every round
            for (int i = 0; i < kK * kN; ++i) pb[i] = static_cast<int8_t>((i * (round + 3)) % 31 - 15);
            ASSERT_EQ(rknn_matmul_set_io_mem(ctx, b, &io.B), RKNN_SUCC);
        }
        float scale = 1.0f;
        int32_t zp = round * 4 - 3;
        rknn_quant_params q{};
        std::strcpy(q.name, "A");
        q.scale = &scale, q.scale_len = 1, q.zp = &zp, q.zp_len = 1;
        ASSERT_EQ(rknn_matmul_set_quant_params(ctx, &q), RKNN_SUCC);
        rknn_tensor_mem* c = rknn_create_mem(ctx, io.C.size);
        ASSERT_EQ(rknn_matmul_set_io_mem(ctx, c, &io.C), RKNN_SUCC);
        ASSERT_EQ(rknn_matmul_run(ctx), RKNN_SUCC);
        const auto* pc = static_cast<const int32_t*>(c->virt_addr);
        for (int m = 0; m < kM; ++m)
            for (int n = 0; n < kN; ++n) {
                int32_t want = 0;
                for (int k = 0; k < kK; ++k) want += (pa[m * kK + k] - zp) * pb[k * kN + n];
                ASSERT_EQ(pc[m * kN + n], want) << "round " << round << " " << m << "," << n;
            }
        rknn_destroy_mem(ctx, c);
    }
    rknn_destroy_mem(ctx, a);
    rknn_destroy_mem(ctx, b);
    EXPECT_EQ(rknn_matmul_destroy(ctx), RKNN_SUCC);
}

// Float16: the emulator keeps B's packed kernels between runs (keyed by the
// buffer's content version); new data in the same B memory, bound again,
// shows in the result.
TEST_F(MatmulApi, Float16RunsFollowNewDataInTheSameB) {
    constexpr int kM = 1, kK = 64, kN = 64;
    rknn_matmul_info info = info_of({RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32, kM, kK, kN, RKNN_MM_LAYOUT_NORM});
    rknn_matmul_io_attr io;
    rknn_matmul_ctx ctx = 0;
    ASSERT_EQ(rknn_matmul_create(&ctx, &info, &io), RKNN_SUCC);
    rknn_tensor_mem* a = rknn_create_mem(ctx, io.A.size);
    rknn_tensor_mem* b = rknn_create_mem(ctx, io.B.size);
    rknn_tensor_mem* c = rknn_create_mem(ctx, io.C.size);
    auto* pa = static_cast<uint16_t*>(a->virt_addr);
    auto* pb = static_cast<uint16_t*>(b->virt_addr);
    for (int i = 0; i < kM * kK; ++i) pa[i] = rknn::float_to_half(static_cast<float>(i % 9) * 0.125f - 0.5f);
    ASSERT_EQ(rknn_matmul_set_io_mem(ctx, a, &io.A), RKNN_SUCC);
    ASSERT_EQ(rknn_matmul_set_io_mem(ctx, c, &io.C), RKNN_SUCC);
    for (int round = 0; round < 3; ++round) {
        for (int i = 0; i < kK * kN; ++i) pb[i] = rknn::float_to_half(static_cast<float>((i * (round + 2)) % 13) * 0.25f - 1.5f);
        ASSERT_EQ(rknn_matmul_set_io_mem(ctx, b, &io.B), RKNN_SUCC);
        for (int run = 0; run < 2; ++run) {
            ASSERT_EQ(rknn_matmul_run(ctx), RKNN_SUCC);
            const auto* pc = static_cast<const float*>(c->virt_addr);
            for (int n = 0; n < kN; ++n) {
                double want = 0;
                for (int k = 0; k < kK; ++k) want += double{rknn::half_to_float(pa[k])} * rknn::half_to_float(pb[k * kN + n]);
                ASSERT_NEAR(pc[n], want, 1e-4) << "round " << round << " run " << run << " column " << n;
            }
        }
    }
    for (rknn_tensor_mem* m : {a, b, c}) rknn_destroy_mem(ctx, m);
    EXPECT_EQ(rknn_matmul_destroy(ctx), RKNN_SUCC);
}

// iommu_domain_id places a context's memory and its NPU tasks in that IOMMU
// domain: the mock's domain holds its buffers, and the results are right
// (the tasks address them there).
TEST_F(MatmulApi, IommuDomainHoldsTheContextsMemory) {
    auto driver = rknn::matmul::shared_matmul_driver();
    ASSERT_TRUE(driver.is_ok());
    ASSERT_NE(driver.value()->mock, nullptr);
    rknn::driver::mock::MockKernel& kernel = *driver.value()->mock;
    for (rknn_matmul_type type : {RKNN_INT8_MM_INT8_TO_INT8, RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32}) {
        Case c{type, 5, 64, 32, RKNN_MM_LAYOUT_TP_NORM};
        c.iommu_domain = 7;
        run_and_check(c, 11);
        if (HasFatalFailure()) return;
    }
    const size_t before7 = kernel.domain_mappings(7), before0 = kernel.domain_mappings(0);
    rknn_matmul_info info = info_of({RKNN_INT8_MM_INT8_TO_INT32, 4, 64, 32});
    info.iommu_domain_id = 7;
    rknn_matmul_io_attr io;
    rknn_matmul_ctx ctx = 0;
    ASSERT_EQ(rknn_matmul_create(&ctx, &info, &io), RKNN_SUCC);
    rknn_tensor_mem* a = rknn_create_mem(ctx, io.A.size);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(kernel.domain_mappings(7), before7 + 1);
    EXPECT_EQ(kernel.domain_mappings(0), before0);
    rknn_destroy_mem(ctx, a);
    EXPECT_EQ(kernel.domain_mappings(7), before7);
    EXPECT_EQ(rknn_matmul_destroy(ctx), RKNN_SUCC);

    // Mainline rocket has one address space: refused at create.
    rknn::testing::MockDriver rocket("rocket");
    EXPECT_EQ(rknn_matmul_create(&ctx, &info, &io), RKNN_ERR_PARAM_INVALID);
    info.iommu_domain_id = 0;
    ASSERT_EQ(rknn_matmul_create(&ctx, &info, &io), RKNN_SUCC);
    EXPECT_EQ(rknn_matmul_destroy(ctx), RKNN_SUCC);
}

// Contexts share one opened device: 2000 live ones need no descriptor each.
TEST_F(MatmulApi, TwoThousandContextsAtUlimit1024) {
    rlimit before{};
    ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &before), 0);
    rlimit low = before;
    low.rlim_cur = std::min<rlim_t>(1024, before.rlim_max);
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
    rknn_matmul_info info = info_of({RKNN_INT8_MM_INT8_TO_INT32, 1, 32, 32});
    std::vector<rknn_matmul_ctx> ctxs(2000, 0);
    int created = 0;
    for (rknn_matmul_ctx& ctx : ctxs) {
        rknn_matmul_io_attr io;
        if (rknn_matmul_create(&ctx, &info, &io) != RKNN_SUCC) break;
        ++created;
    }
    for (rknn_matmul_ctx ctx : ctxs)
        if (ctx != 0) rknn_matmul_destroy(ctx);
    setrlimit(RLIMIT_NOFILE, &before);
    EXPECT_EQ(created, 2000);
}

TEST_F(MatmulApi, BadInputIsRefusedWithItsReason) {
    std::vector<std::string> lines;
    rknn::log::set_level(rknn::log::kDefaultLevel);
    rknn::log::set_sink([&lines](const std::string& line) { lines.push_back(line); });
    const auto logged = [&lines](const std::string& text) {
        for (const std::string& line : lines)
            if (line.find(text) != std::string::npos) return true;
        return false;
    };
    struct Bad {
        const char* what;
        Case c;
        const char* reason;
        int iommu = 0;
    };
    const Bad bads[] = {
        {"type not on RK3588", {RKNN_FLOAT16_MM_INT8_TO_FLOAT32, 1, 32, 32}, "does not run on rk3588"},
        {"no such type", {static_cast<rknn_matmul_type>(13), 1, 32, 32}, "is no rknn_matmul_type"},
        {"K not a multiple of 32", {RKNN_INT8_MM_INT8_TO_INT32, 1, 48, 32}, "K must be a multiple of 32"},
        {"N not a multiple of 32", {RKNN_INT8_MM_INT8_TO_INT32, 1, 32, 48}, "N must be a multiple of 32"},
        {"N too large", {RKNN_INT8_MM_INT8_TO_INT32, 1, 32, 4128}, "N must be at most 4096"},
        {"M zero", {RKNN_INT8_MM_INT8_TO_INT32, 0, 32, 32}, "must be positive"},
        {"AC TP_NORM", {RKNN_INT8_MM_INT8_TO_INT32, 1, 32, 32, 0, RKNN_MM_LAYOUT_TP_NORM}, "AC_layout 2"},
        {"per-group, no group size", {RKNN_INT8_MM_INT8_TO_FLOAT32, 1, 32, 32, 0, 0, RKNN_QUANT_TYPE_PER_GROUP_SYM},
         "group_size > 0"},
        {"per-channel float B", {RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32, 1, 32, 32, 0, 0, RKNN_QUANT_TYPE_PER_CHANNEL_SYM},
         "a float B takes no per-channel"},
        {"iommu domain 16", {RKNN_INT8_MM_INT8_TO_INT32, 1, 32, 32}, "iommu_domain_id 16", 16},
    };
    for (const Bad& bad : bads) {
        lines.clear();
        rknn_matmul_info info = info_of(bad.c);
        info.iommu_domain_id = bad.iommu;
        rknn_matmul_io_attr io;
        rknn_matmul_ctx ctx = 7;
        EXPECT_EQ(rknn_matmul_create(&ctx, &info, &io), RKNN_ERR_PARAM_INVALID) << bad.what;
        EXPECT_EQ(ctx, 0u) << bad.what;
        EXPECT_TRUE(logged(bad.reason)) << bad.what << ": no log line says \"" << bad.reason << "\"";
    }
    {
        const rknn::testing::MockSoc rk3568("rk3568");
        rknn_matmul_info info = info_of({RKNN_INT8_MM_INT8_TO_INT32, 1, 32, 32, RKNN_MM_LAYOUT_TP_NORM});
        rknn_matmul_io_attr io;
        rknn_matmul_ctx ctx = 0;
        EXPECT_EQ(rknn_matmul_create(&ctx, &info, &io), RKNN_ERR_PARAM_INVALID);
        EXPECT_TRUE(logged("TP_NORM does not run on rk3568"));
        info = info_of({RKNN_INT8_MM_INT8_TO_INT32, 1, 10240 + 32, 32});
        EXPECT_EQ(rknn_matmul_create(&ctx, &info, &io), RKNN_ERR_PARAM_INVALID);
        EXPECT_TRUE(logged("K must be at most 10240"));
    }

    rknn_matmul_info info = info_of({RKNN_INT8_MM_INT8_TO_INT8, 2, 32, 32});
    rknn_matmul_io_attr io;
    rknn_matmul_ctx ctx = 0;
    ASSERT_EQ(rknn_matmul_create(&ctx, &info, &io), RKNN_SUCC);
    EXPECT_EQ(rknn_matmul_run(ctx), RKNN_ERR_FAIL) << "run before set_io_mem";
    EXPECT_TRUE(logged("A has no memory"));
    float scales[2] = {0.1f, 0.2f};
    rknn_quant_params q{};
    std::strcpy(q.name, "D");
    q.scale = scales, q.scale_len = 1;
    EXPECT_EQ(rknn_matmul_set_quant_params(ctx, &q), RKNN_ERR_PARAM_INVALID);
    EXPECT_TRUE(logged("names none of A, B and C"));
    std::strcpy(q.name, "B");
    q.scale_len = 2;
    EXPECT_EQ(rknn_matmul_set_quant_params(ctx, &q), RKNN_ERR_PARAM_INVALID);
    EXPECT_TRUE(logged("1 scales wanted, scale_len is 2"));
    scales[0] = -1.0f;
    q.scale_len = 1;
    EXPECT_EQ(rknn_matmul_set_quant_params(ctx, &q), RKNN_ERR_PARAM_INVALID);
    rknn_tensor_mem* small = rknn_create_mem(ctx, io.A.size - 1);
    EXPECT_EQ(rknn_matmul_set_io_mem(ctx, small, &io.A), RKNN_ERR_PARAM_INVALID);
    EXPECT_TRUE(logged("needs 64"));
    rknn_matmul_tensor_attr wrong = io.A;
    wrong.type = RKNN_TENSOR_FLOAT16;
    rknn_tensor_mem* enough = rknn_create_mem(ctx, io.C.size);
    EXPECT_EQ(rknn_matmul_set_io_mem(ctx, enough, &wrong), RKNN_ERR_PARAM_INVALID);
    EXPECT_TRUE(logged("is not the int8 this matmul type takes"));
    rknn_matmul_shape shape{2, 32, 32};
    EXPECT_EQ(rknn_matmul_set_dynamic_shape(ctx, &shape), RKNN_SUCC) << "the created shape";
    shape.M = 3;
    EXPECT_EQ(rknn_matmul_set_dynamic_shape(ctx, &shape), RKNN_ERR_PARAM_INVALID);
    rknn_destroy_mem(ctx, small);
    rknn_destroy_mem(ctx, enough);
    EXPECT_EQ(rknn_matmul_destroy(ctx), RKNN_SUCC);
    EXPECT_EQ(rknn_matmul_destroy(ctx), RKNN_ERR_CTX_INVALID) << "destroyed twice";
    rknn::log::set_sink(nullptr);
}

}  // namespace
