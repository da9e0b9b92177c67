// The emulator's SIMD kernels, each implementation this CPU can run (not only
// the one the dispatcher picks), against plain scalar models: the GEMM with
// addressed rows, depthwise rows, and the LUT memo's lookups.
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "emulator/kernels/depthwise_s8.h"
#include "emulator/kernels/gemm_s8.h"
#include "emulator/kernels/lut_lookup.h"
#include "emulator/lut_memo.h"

namespace {

namespace em = rknn::emulator;

#if defined(__x86_64__)
bool cpu_has(const char* isa) {
    __builtin_cpu_init();
    if (std::string(isa) == "avx2") return __builtin_cpu_supports("avx2");
    if (std::string(isa) == "avx512") return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
    return false;
}
#endif

// ---- GEMM with addressed rows ------------------------------------------------

// A cube-like source: rows at scattered addresses, k groups at scattered offsets.
struct RowsProblem {
    int m = 0, k = 0, n = 0;
    std::vector<uint8_t> memory;
    std::vector<const uint8_t*> rows;
    std::vector<uint32_t> offsets;
    std::vector<int8_t> b;  // n x k
};

RowsProblem make_rows_problem(int m, int k, int n, std::mt19937& rng) {
    RowsProblem p;
    p.m = m;
    p.k = k;
    p.n = n;
    const int groups = k / 4;
    p.memory.resize(static_cast<size_t>(m) * 64 + static_cast<size_t>(groups) * 96 + 64);
    for (uint8_t& v : p.memory) v = static_cast<uint8_t>(rng());
    for (int r = 0; r < m; ++r) p.rows.push_back(p.memory.data() + static_cast<size_t>(rng() % (m * 64)));
    for (int g = 0; g < groups; ++g) p.offsets.push_back(static_cast<uint32_t>(g * 96 + rng() % 60));
    p.b.resize(static_cast<size_t>(n) * k);
    for (int8_t& w : p.b) w = static_cast<int8_t>(rng());
    return p;
}

int64_t rows_expected(const RowsProblem& p, uint8_t flip, int r, int col) {
    int64_t sum = 0;
    for (int j = 0; j < p.k; ++j) {
        const uint8_t a = p.rows[static_cast<size_t>(r)][p.offsets[static_cast<size_t>(j / 4)] + j % 4] ^ flip;
        sum += (int64_t{a} - 128) * p.b[static_cast<size_t>(col) * p.k + static_cast<size_t>(j)];
    }
    return sum;
}

TEST(EmulatorKernels, GemmWithAddressedRowsMatchesAPlainProduct) {
    std::mt19937 rng(91);
    const int shapes[][3] = {{1, 4, 1}, {9, 36, 17}, {67, 288, 40}, {530, 64, 96}, {20, 2304, 33}};
    for (const auto& s : shapes) {
        const RowsProblem p = make_rows_problem(s[0], s[1], s[2], rng);
        em::PackedWeightsS8 packed;
        em::pack_weights(p.b.data(), p.n, p.k, static_cast<size_t>(p.k), &packed);
        for (uint8_t flip : {uint8_t{0}, uint8_t{0x80}}) {
            em::GemmRows a;
            a.rows = p.rows.data();
            a.offsets = p.offsets.data();
            a.flip = flip;
            std::vector<int32_t> c(static_cast<size_t>(p.m) * p.n, -1);
            em::gemm_u8s8_rows(p.m, a, packed, 0, packed.n_blocks, c.data(), static_cast<size_t>(p.n));
            int differ = 0;
            for (int r = 0; r < p.m; ++r)
                for (int col = 0; col < p.n; ++col)
                    differ += c[static_cast<size_t>(r) * p.n + col] != rows_expected(p, flip, r, col);
            EXPECT_EQ(differ, 0) << em::gemm_u8s8_isa() << " m " << p.m << " k " << p.k << " n " << p.n
                                 << " flip " << int{flip};
            // The rows gathered for a row-major kernel (what AVX2 and portable builds run).
            std::vector<int32_t> g(c.size(), -1);
            em::detail::gemm_u8s8_rows_gathered_generic(p.m, a, packed, 0, packed.n_blocks, g.data(),
                                                        static_cast<size_t>(p.n));
            EXPECT_EQ(g, c) << "gathered rows, m " << p.m << " k " << p.k << " n " << p.n;
        }
    }
}

// ---- depthwise rows ------------------------------------------------------------

using DepthwiseFn = void (*)(const em::DepthwiseRow&);

std::vector<std::pair<const char*, DepthwiseFn>> depthwise_impls() {
    std::vector<std::pair<const char*, DepthwiseFn>> impls = {{"generic", em::detail::depthwise_row_s8_generic}};
#if defined(__x86_64__)
    if (cpu_has("avx2")) impls.emplace_back("avx2", em::detail::depthwise_row_s8_avx2);
    if (cpu_has("avx512")) impls.emplace_back("avx512", em::detail::depthwise_row_s8_avx512);
#endif
    return impls;
}

TEST(EmulatorKernels, DepthwiseRowsMatchAScalarModel) {
    std::mt19937 rng(92);
    std::vector<uint8_t> cube(64 * 1024);
    for (uint8_t& v : cube) v = static_cast<uint8_t>(rng());
    cube[100] = 0x80;  // -128 times -128 somewhere
    int cases = 0;
    for (int lanes : {8, 16}) {
        for (int taps : {1, 4, 9, 25}) {
            for (int store : {lanes, lanes - 3}) {
                for (int width : {1, 2, 7, 33}) {
                    std::vector<int64_t> offsets;
                    for (int t = 0; t < taps; ++t) offsets.push_back(static_cast<int64_t>(rng() % 8192) * lanes / 8);
                    std::vector<int32_t> weights(static_cast<size_t>(taps) * lanes);
                    for (int32_t& w : weights) w = static_cast<int32_t>(rng() % 256) - 128;
                    weights[0] = -128;
                    em::DepthwiseRow row;
                    row.origin = cube.data() + 16;
                    row.tap_offsets = offsets.data();
                    row.taps = taps;
                    row.step = 2 * lanes;
                    row.weights = weights.data();
                    row.lanes = lanes;
                    row.width = width;
                    row.out_stride = 40;
                    row.store_lanes = store;
                    std::vector<int32_t> want(static_cast<size_t>(width) * 40, -5);
                    for (int x = 0; x < width; ++x)
                        for (int l = 0; l < store; ++l) {
                            int32_t sum = 0;
                            for (int t = 0; t < taps; ++t)
                                sum += static_cast<int8_t>(row.origin[x * row.step + offsets[static_cast<size_t>(t)] + l]) *
                                       weights[static_cast<size_t>(t) * lanes + l];
                            want[static_cast<size_t>(x) * 40 + l] = sum;
                        }
                    for (const auto& [name, fn] : depthwise_impls()) {
                        std::vector<int32_t> got(want.size(), -5);
                        row.out = got.data();
                        fn(row);
                        EXPECT_EQ(got, want) << name << " lanes " << lanes << " taps " << taps << " store " << store
                                             << " width " << width;
                        ++cases;
                    }
                }
            }
        }
    }
    EXPECT_GE(cases, 64);
}

// ---- depthwise bands (tap groups) -------------------------------------------------

// One surface placed so that its last byte ends a readable page, the next
// page made unreadable: a load past the image faults instead of passing.
class SurfaceBeforeAGuardPage {
public:
    explicit SurfaceBeforeAGuardPage(size_t bytes) {
        const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
        size_ = (bytes + page - 1) / page * page + page;
        void* p = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        base_ = p == MAP_FAILED ? nullptr : static_cast<uint8_t*>(p);
        if (base_ != nullptr) ::mprotect(base_ + size_ - page, page, PROT_NONE);
        data_ = base_ == nullptr ? nullptr : base_ + size_ - page - bytes;
    }
    ~SurfaceBeforeAGuardPage() {
        if (base_ != nullptr) ::munmap(base_, size_);
    }
    uint8_t* data() const { return data_; }

private:
    uint8_t* base_ = nullptr;
    uint8_t* data_ = nullptr;
    size_t size_ = 0;
};

TEST(EmulatorKernels, DepthwiseBandsMatchAScalarModel) {
    if (!em::depthwise_band_s8_available()) GTEST_SKIP() << "the tap-group kernel needs AVX-512 VNNI and VBMI";
    constexpr int kLanes = 16;
    std::mt19937 rng(2026);
    const auto pick = [&](int lo, int hi) { return lo + static_cast<int>(rng() % static_cast<uint32_t>(hi - lo + 1)); };
    int cases = 0;
    for (int i = 0; i < 300; ++i) {
        em::DepthwiseBand b;
        b.kh = pick(1, em::kDepthwiseBandMaxKernel);
        b.kw = pick(1, em::kDepthwiseBandMaxKernel);
        b.stride_x = pick(1, 4);
        b.stride_y = pick(1, 4);
        b.in_w = pick(1, 23);
        b.in_h = pick(1, 9);
        b.pad_left = pick(0, b.kw - 1);
        b.pad_top = pick(0, b.kh - 1);
        const int pad_right = pick(0, b.kw - 1), pad_bottom = pick(0, b.kh - 1);
        const int padded_w = b.in_w + b.pad_left + pad_right, padded_h = b.in_h + b.pad_top + pad_bottom;
        if (padded_w < b.kw || padded_h < b.kh) continue;
        b.out_w = (padded_w - b.kw) / b.stride_x + 1;
        const int out_h = (padded_h - b.kh) / b.stride_y + 1;
        b.y0 = pick(0, out_h - 1);
        b.y1 = pick(b.y0 + 1, out_h);
        b.store_lanes = i % 5 == 0 ? pick(1, kLanes) : kLanes;
        b.row_bytes = static_cast<size_t>(b.in_w) * kLanes + (i % 2 == 0 ? 0 : 32);  // rows back to back, or apart
        const size_t bytes = b.row_bytes * static_cast<size_t>(b.in_h - 1) + static_cast<size_t>(b.in_w) * kLanes;
        SurfaceBeforeAGuardPage surface(bytes);
        ASSERT_NE(surface.data(), nullptr);
        for (size_t j = 0; j < bytes; ++j) surface.data()[j] = static_cast<uint8_t>(rng());
        surface.data()[0] = 0x80;  // -128 somewhere
        uint8_t pad[kLanes];
        for (uint8_t& v : pad) v = static_cast<uint8_t>(rng());
        std::vector<int32_t> widened(static_cast<size_t>(b.kh) * b.kw * kLanes);
        for (int32_t& w : widened) w = static_cast<int32_t>(rng() % 256) - 128;
        widened[0] = -128;
        std::vector<int32_t> packed(em::depthwise_band_weight_words(b.kh, b.kw));
        em::pack_depthwise_band_weights(widened.data(), b.kh, b.kw, packed.data());
        b.surface = surface.data();
        b.pad = pad;
        b.weights = packed.data();
        b.out_pixel_stride = kLanes + 3;
        b.out_row_stride = static_cast<size_t>(b.out_w) * b.out_pixel_stride + 5;
        const size_t out_size = static_cast<size_t>(b.y1 - b.y0) * b.out_row_stride;
        std::vector<int32_t> want(out_size, -7), got(out_size, -7);
        for (int y = b.y0; y < b.y1; ++y)
            for (int x = 0; x < b.out_w; ++x)
                for (int c = 0; c < b.store_lanes; ++c) {
                    int32_t sum = 0;
                    for (int ky = 0; ky < b.kh; ++ky)
                        for (int kx = 0; kx < b.kw; ++kx) {
                            const int iy = y * b.stride_y + ky - b.pad_top, ix = x * b.stride_x + kx - b.pad_left;
                            const bool inside = iy >= 0 && iy < b.in_h && ix >= 0 && ix < b.in_w;
                            const uint8_t v = inside ? b.surface[static_cast<size_t>(iy) * b.row_bytes +
                                                                 static_cast<size_t>(ix) * kLanes + c]
                                                     : pad[c];
                            sum += static_cast<int8_t>(v) * widened[static_cast<size_t>(ky * b.kw + kx) * kLanes + c];
                        }
                    want[static_cast<size_t>(y - b.y0) * b.out_row_stride + x * b.out_pixel_stride + c] = sum;
                }
        b.out = got.data();
        em::depthwise_band_s8(b);
        EXPECT_EQ(got, want) << "k " << b.kh << "x" << b.kw << " s " << b.stride_y << "x" << b.stride_x << " in "
                             << b.in_h << "x" << b.in_w << " pad t" << b.pad_top << " l" << b.pad_left << " rows "
                             << b.y0 << ".." << b.y1 << " lanes " << b.store_lanes;
        ++cases;
    }
    EXPECT_GE(cases, 200);
}

// ---- LUT memo ------------------------------------------------------------------

using LookupFn = int (*)(const em::LutMemoView&, const int32_t*, int, int8_t*);

std::vector<std::pair<const char*, LookupFn>> lookup_impls() {
    std::vector<std::pair<const char*, LookupFn>> impls = {{"generic", em::detail::lut_lookup_generic}};
#if defined(__x86_64__)
    if (cpu_has("avx2")) impls.emplace_back("avx2", em::detail::lut_lookup_avx2);
    if (cpu_has("avx512")) impls.emplace_back("avx512", em::detail::lut_lookup_avx512);
#endif
    return impls;
}

TEST(EmulatorKernels, LutLookupsStopAtTheFirstMiss) {
    std::vector<int16_t> table(1001, em::kLutMemoUnset);
    for (int i = 0; i < 1000; ++i)
        if (i % 97 != 5) table[static_cast<size_t>(i)] = static_cast<int16_t>((i * 7) % 256 - 128);
    em::LutMemoView view;
    view.table = table.data();
    view.first = -500;
    view.span = 1000;
    std::mt19937 rng(93);
    for (const auto& [name, fn] : lookup_impls()) {
        for (int trial = 0; trial < 200; ++trial) {
            std::vector<int32_t> values(static_cast<size_t>(1 + rng() % 70));
            for (int32_t& v : values) {
                const uint32_t pick = rng() % 100;
                v = pick == 0 ? static_cast<int32_t>(rng()) : -500 + static_cast<int32_t>(rng() % 1000);
            }
            // Where the scalar model stops, and the codes before it.
            size_t stop = 0;
            while (stop < values.size()) {
                const int64_t i = int64_t{values[stop]} + 500;
                if (i < 0 || i >= 1000 || table[static_cast<size_t>(i)] == em::kLutMemoUnset) break;
                ++stop;
            }
            std::vector<int8_t> codes(values.size(), 99);
            const int done = fn(view, values.data(), static_cast<int>(values.size()), codes.data());
            ASSERT_EQ(done, static_cast<int>(stop)) << name << " trial " << trial;
            for (size_t i = 0; i < stop; ++i)
                ASSERT_EQ(codes[i], table[static_cast<size_t>(values[i] + 500)]) << name << " value " << values[i];
        }
    }
}

// A LUT loaded with a ramp, its tail an OUT_CVT that scales it down.
em::LutTables ramp_tables(int slope) {
    em::LutTables t;
    t.write_access_cfg(1u << 17);  // write, table 0 (LE), address 0
    for (int i = 0; i < em::LutTables::kEntries; ++i) t.write_access_data(static_cast<uint32_t>((i - 256) * slope) & 0xffff);
    t.write_access_cfg((1u << 17) | (1u << 16));  // write, table 1 (LO)
    for (int i = 0; i < em::LutTables::kEntries; ++i) t.write_access_data(static_cast<uint32_t>(i * slope) & 0xffff);
    return t;
}

em::LutTail ramp_tail(int64_t uflow_scale, int64_t lo_end = 16384) {
    em::LutTail tail;
    tail.lut.le_start = -16384;
    tail.lut.lo_start = 0;
    tail.lut.lo_end = lo_end;
    tail.lut.le_select = 5;
    tail.lut.lo_select = 5;
    tail.lut.le_uflow_scale = uflow_scale;
    tail.lut.le_uflow_shift = 4;
    tail.out_scale = 1;
    tail.out_shift = 4;
    tail.out_offset = -2;
    return tail;
}

int8_t direct_code(const em::LutTables& t, const em::LutTail& tail, int64_t v) {
    const int64_t y = t.evaluate(tail.lut, v);
    return static_cast<int8_t>(
        em::saturate(em::shift_round(y * tail.out_scale, tail.out_shift, tail.out_round) + tail.out_offset, -128, 127));
}

TEST(EmulatorKernels, LutMemoGivesTheEvaluatedCodesEverywhere) {
    std::mt19937 rng(94);
    // Constant below the window, or a slope there; above it the LO table's
    // last entry (the window reaches it), or values short of it interpolated.
    for (const auto& [uflow, lo_end] : {std::pair<int64_t, int64_t>{0, 16384}, {5, 16384}, {0, 16000}}) {
        const em::LutTables tables = ramp_tables(3);
        const em::LutTail tail = ramp_tail(uflow, lo_end);
        em::LutMemo& memo = em::lut_memo_for(tables, tail);
        std::vector<int32_t> values;
        for (int i = 0; i < 20000; ++i) {
            const uint32_t pick = rng() % 10;
            values.push_back(pick == 0 ? static_cast<int32_t>(rng()) : -17000 + static_cast<int32_t>(rng() % 34000));
        }
        values.push_back(INT32_MIN);
        values.push_back(INT32_MAX);
        for (int pass = 0; pass < 2; ++pass) {  // the second pass reads filled entries
            std::vector<int8_t> codes(values.size());
            memo.codes(values.data(), static_cast<int>(values.size()), codes.data());
            int differ = 0;
            for (size_t i = 0; i < values.size(); ++i) differ += codes[i] != direct_code(tables, tail, values[i]);
            EXPECT_EQ(differ, 0) << "uflow scale " << uflow << " lo_end " << lo_end << " pass " << pass;
        }
        EXPECT_EQ(&em::lut_memo_for(tables, tail), &memo) << "the same tail and tables find the same memo";
    }
}

TEST(EmulatorKernels, LutMemoFollowsTheTableContents) {
    const em::LutTail tail = ramp_tail(0);
    const em::LutTables gentle = ramp_tables(2), steep = ramp_tables(9);
    const std::vector<int32_t> values = {-9000, -100, 0, 77, 5000, 16000};
    std::vector<int8_t> a(values.size()), b(values.size());
    em::lut_memo_for(gentle, tail).codes(values.data(), static_cast<int>(values.size()), a.data());
    em::lut_memo_for(steep, tail).codes(values.data(), static_cast<int>(values.size()), b.data());
    int differ = 0;
    for (size_t i = 0; i < values.size(); ++i) {
        EXPECT_EQ(a[i], direct_code(gentle, tail, values[i]));
        EXPECT_EQ(b[i], direct_code(steep, tail, values[i]));
        differ += a[i] != b[i];
    }
    EXPECT_GT(differ, 0) << "new table contents give new codes";
}

}  // namespace
