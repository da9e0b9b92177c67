#include "matmul/matmul_npu.h"

#include <algorithm>
#include <cstring>

#include "base/half.h"
#include "npu/conv_lowering.h"
#include "npu/dpu_regs.h"
#include "npu/native_layout.h"
#include "runtime/npu_segments.h"

namespace rknn::matmul {

namespace {

constexpr uint64_t kAtomBytes = 16;
constexpr int64_t kMaxInt8K = 65536;  // |a - zp| * |b| * K stays below 2^31
constexpr int64_t kMaxConvK = 8192;   // the CNA's channel fields: one convolution's K
constexpr int64_t kPartAlign = 256;   // where each K part's kernels and records start

int64_t ceil_div(int64_t a, int64_t b) {
    return (a + b - 1) / b;
}

enum Buffer : int32_t { kInput, kWeights, kRecords, kOutput };

}  // namespace

bool NpuMatmul::applies(const Plan& plan, const hw::SocProfile& soc, int64_t max_k) {
    if (soc.arch != hw::NpuArch::kRk3588) return false;
    const TypeInfo& t = plan.type;
    if (t.a == Elem::kFloat16 && t.b == Elem::kFloat16) return t.c == Elem::kFloat16 || t.c == Elem::kFloat32;
    // Per-group scales need each group's own sum: the host reference.
    const bool per_group =
        plan.b_quant == RKNN_QUANT_TYPE_PER_GROUP_SYM || plan.b_quant == RKNN_QUANT_TYPE_PER_GROUP_ASYM;
    return t.a == Elem::kInt8 && t.b == Elem::kInt8 && !per_group && max_k <= kMaxInt8K;
}

Status NpuMatmul::ensure(std::shared_ptr<runtime::IoMemory>* memory, uint64_t bytes, bool* made) {
    if (made != nullptr) *made = false;
    if (*memory != nullptr && (*memory)->size() >= bytes) return Status::ok();
    if (made != nullptr) *made = true;
    memory->reset();
    RKNN_ASSIGN_OR_RETURN(*memory, runtime::IoMemory::create(driver_, std::max<uint64_t>(bytes, kAtomBytes), true, iommu_domain_));
    return Status::ok();
}

Status NpuMatmul::set_b(const uint8_t* b, int64_t k, int64_t n) {
    b_k_ = b_n_ = 0;  // until the new kernels are in place
    records_valid_ = false;
    const Offsets at{&plan_, 1, k, n};
    const std::vector<KPart> parts = k_parts(k);
    std::vector<std::vector<uint8_t>> packed(parts.size());
    if (integer()) column_sums_.assign(static_cast<size_t>(n), 0);
    for (size_t p = 0; p < parts.size(); ++p) {
        const int64_t first = parts[p].start, kc = parts[p].size;
        if (integer()) {
            // Kernels as [N][K] rows of codes, and each column's sum for the bias.
            std::vector<int8_t> rows(static_cast<size_t>(kc * n));
            for (int64_t row = 0; row < kc; ++row)
                for (int64_t col = 0; col < n; ++col) {
                    const int32_t v = load_int(b, at.b(first + row, col), Elem::kInt8);
                    rows[static_cast<size_t>(col * kc + row)] = static_cast<int8_t>(v);
                    column_sums_[static_cast<size_t>(col)] += v;
                }
            const std::vector<int8_t> w = npu::pack_conv_weights_int8(
                rows.data(), static_cast<int>(n), static_cast<int>(kc), 1, 1, static_cast<int>(ceil_div(kc, 16) * 16));
            packed[p].assign(reinterpret_cast<const uint8_t*>(w.data()),
                             reinterpret_cast<const uint8_t*>(w.data()) + w.size());
        } else {
            std::vector<float> rows(static_cast<size_t>(kc * n));
            for (int64_t row = 0; row < kc; ++row)
                for (int64_t col = 0; col < n; ++col)
                    rows[static_cast<size_t>(col * kc + row)] = load_float(b, at.b(first + row, col), Elem::kFloat16);
            const std::vector<uint16_t> w = npu::pack_conv_weights_fp16(
                rows.data(), static_cast<int>(n), static_cast<int>(kc), 1, 1, static_cast<int>(ceil_div(kc, 8) * 8));
            packed[p].resize(w.size() * sizeof(uint16_t));
            std::memcpy(packed[p].data(), w.data(), packed[p].size());
        }
    }
    if (!integer()) {
        const std::vector<uint8_t> records = npu::float_bias_records({}, static_cast<int>(ceil_div(n, 8) * 8));
        RKNN_RETURN_IF_ERROR(ensure(&records_, records.size()));
        std::memcpy(records_->host(), records.data(), records.size());
        RKNN_RETURN_IF_ERROR(records_->sync(driver::SyncDirection::kToDevice));
    }
    weight_offsets_.clear();
    uint64_t total = 0;
    for (const std::vector<uint8_t>& part : packed) {
        weight_offsets_.push_back(total);
        total += ceil_div(static_cast<int64_t>(part.size()), kPartAlign) * kPartAlign;
    }
    RKNN_RETURN_IF_ERROR(ensure(&weights_, total));
    for (size_t p = 0; p < packed.size(); ++p)
        std::memcpy(weights_->host() + weight_offsets_[p], packed[p].data(), packed[p].size());
    RKNN_RETURN_IF_ERROR(weights_->sync(driver::SyncDirection::kToDevice));
    b_k_ = k;
    b_n_ = n;
    return Status::ok();
}

std::vector<NpuMatmul::KPart> NpuMatmul::k_parts(int64_t k) {
    // Equal parts of whole 32-channel groups (K is a multiple of 32), each
    // within the CNA's channel fields.
    const int64_t count = ceil_div(k, kMaxConvK);
    const int64_t size = ceil_div(ceil_div(k, count), 32) * 32;
    std::vector<KPart> parts;
    for (int64_t start = 0; start < k; start += size) parts.push_back({start, std::min(size, k - start)});
    return parts;
}

StatusOr<const npu::Program*> NpuMatmul::program(int64_t m, int64_t k, int64_t n, uint32_t core_mask,
                                                 bool float32_out) {
    const auto key = std::make_tuple(m, k, n, core_mask, float32_out);
    auto found = programs_.find(key);
    if (found != programs_.end()) return &found->second;
    npu::ConvGeometry geo;
    geo.fp16 = !integer();
    geo.in_c = static_cast<int>(k);
    geo.in_h = static_cast<int>(m);
    geo.in_w = 1;
    geo.out_c = static_cast<int>(n);
    const npu::ConvAddresses addresses{npu::BufferRef(kInput, 0), npu::BufferRef(kWeights, 0),
                                       npu::BufferRef(kRecords, 0), npu::BufferRef(kOutput, 0)};
    const hw::SocProfile& soc = *driver_->soc;
    npu::ProgramBuilder builder(soc);
    if (integer()) {
        // The bias lives in the records (written per run); the program only
        // needs the counts and the identity multipliers.
        npu::Int8ConvLayer layer;
        layer.geometry = geo;
        layer.addresses = addresses;
        layer.epilogue.bias.assign(static_cast<size_t>(n), 0);
        layer.epilogue.mult.assign(static_cast<size_t>(n), 1);
        layer.epilogue.out_int32 = true;
        RKNN_RETURN_IF_ERROR(npu::lower_conv_int8(layer, soc, core_mask, &builder));
    } else {
        RKNN_RETURN_IF_ERROR(
            npu::lower_conv_fp16(geo, addresses, float32_out, soc, core_mask, &builder, npu::FloatEpilogue{}));
    }
    return &programs_.emplace(key, builder.finish()).first->second;
}

Status NpuMatmul::run(const uint8_t* a, uint8_t* c, int64_t c_sub, int64_t m, int64_t k, int64_t n, uint32_t core_mask,
                      int32_t a_zp) {
    if (b_k_ != k || b_n_ != n)
        return Status(StatusCode::kFailedPrecondition, "B was bound for K " + std::to_string(b_k_) + ", N " +
                                                           std::to_string(b_n_) + ": bind it again for this shape");
    // The programs first: a shape the convolution path cannot tile fails
    // (kUnimplemented) before anything is copied.
    const std::vector<KPart> parts = k_parts(k);
    const bool split = parts.size() > 1;
    const bool float32_out = !integer() && (split || plan_.type.c == Elem::kFloat32);
    std::vector<const npu::Program*> programs;
    uint64_t stream_stride = 0;
    for (const KPart& part : parts) {
        RKNN_ASSIGN_OR_RETURN(const npu::Program* p, program(m, part.size, n, core_mask, float32_out));
        programs.push_back(p);
        stream_stride = std::max<uint64_t>(stream_stride, ceil_div(static_cast<int64_t>(p->bytes()), 64) * 64);
    }
    // Elements per 16-byte atom: A's cube and the output's.
    const size_t a_element = integer() ? 1 : 2, out_element = integer() || float32_out ? 4 : 2;
    const int64_t a_lanes = static_cast<int64_t>(kAtomBytes / a_element),
                  out_lanes = static_cast<int64_t>(kAtomBytes / out_element);
    const uint64_t out_bytes = static_cast<uint64_t>(ceil_div(n, out_lanes) * m) * kAtomBytes;
    RKNN_RETURN_IF_ERROR(ensure(&input_, static_cast<uint64_t>(ceil_div(k, a_lanes) * m) * kAtomBytes));
    RKNN_RETURN_IF_ERROR(ensure(&output_, out_bytes));  // every part writes it in turn

    // A into the input cube [K/lanes][M][lanes] (K is a multiple of 32: no
    // padding); a NATIVE A is a tiled layout of its own width. Each K part
    // reads its run of whole surfaces.
    const int64_t a_sub = plan_.ac_layout == RKNN_MM_LAYOUT_NATIVE ? plan_.tiles.a_sub_k : k;
    copy_tiled(a, a_sub, input_->host(), a_lanes, m, k, a_element);
    RKNN_RETURN_IF_ERROR(input_->sync(driver::SyncDirection::kToDevice));
    if (integer() && (!records_valid_ || records_zp_ != a_zp)) {
        // Each column's bias takes A's zero point off: -zp_a * sum_k B[k][n].
        // Split over K parts, the first part adds it and the others a zero bias.
        npu::EpilogueRegs e;
        e.mult.assign(static_cast<size_t>(n), 1);
        e.bias.resize(static_cast<size_t>(n));
        for (int64_t col = 0; col < n; ++col)
            e.bias[static_cast<size_t>(col)] = static_cast<int32_t>(-int64_t{a_zp} * column_sums_[static_cast<size_t>(col)]);
        const std::vector<uint8_t> records = npu::bs_records(e, static_cast<int>(ceil_div(n, 16) * 16));
        records_stride_ = static_cast<uint64_t>(ceil_div(static_cast<int64_t>(records.size()), kPartAlign) * kPartAlign);
        RKNN_RETURN_IF_ERROR(ensure(&records_, records_stride_ * (split ? 2 : 1)));
        std::memcpy(records_->host(), records.data(), records.size());
        if (split) {
            e.bias.assign(static_cast<size_t>(n), 0);
            const std::vector<uint8_t> zero = npu::bs_records(e, static_cast<int>(ceil_div(n, 16) * 16));
            std::memcpy(records_->host() + records_stride_, zero.data(), zero.size());
        }
        RKNN_RETURN_IF_ERROR(records_->sync(driver::SyncDirection::kToDevice));
        records_valid_ = true;
        records_zp_ = a_zp;
    }
    const uint64_t zero_bias_records = integer() && split ? records_stride_ : 0;

    bool new_stream = false;
    RKNN_RETURN_IF_ERROR(ensure(&stream_, stream_stride * parts.size(), &new_stream));
    if (new_stream) linked_.clear();  // a new buffer may sit at the old address, empty
    linked_.resize(parts.size());
    bool relinked = false;
    // A stream is counted as linked only once it is synced to the device.
    struct Unlink {
        std::vector<Linked>* linked;
        bool armed = true;
        ~Unlink() {
            if (armed) linked->clear();
        }
    } unlink{&linked_};
    for (size_t p = 0; p < parts.size(); ++p) {
        const uint64_t input_offset = static_cast<uint64_t>(parts[p].start / a_lanes * m) * kAtomBytes;
        const std::array<uint64_t, 5> addresses = {
            stream_->device_address() + p * stream_stride, input_->device_address() + input_offset,
            weights_->device_address() + weight_offsets_[p], records_->device_address() + (p > 0 ? zero_bias_records : 0),
            output_->device_address()};
        Linked& linked = linked_[p];
        if (programs[p] == linked.program && addresses == linked.addresses) continue;
        linked.program = nullptr;
        const std::vector<uint64_t> bases(addresses.begin() + 1, addresses.end());
        RKNN_ASSIGN_OR_RETURN(std::vector<uint64_t> words, programs[p]->link(addresses[0], bases));
        std::memcpy(stream_->host() + p * stream_stride, words.data(), words.size() * sizeof(uint64_t));
        linked = Linked{programs[p], addresses};
        relinked = true;
    }
    if (relinked) RKNN_RETURN_IF_ERROR(stream_->sync(driver::SyncDirection::kToDevice));
    unlink.armed = false;
    // Part after part into the one output cube; with several parts, each
    // part's sums are added on the host in part order.
    const size_t values = out_bytes / out_element;
    if (split && integer()) int_sums_.assign(values, 0);
    if (split && !integer()) float_sums_.assign(values, 0.0f);
    for (size_t p = 0; p < parts.size(); ++p) {
        driver::SubmitRequest submit = runtime::make_submit(*programs[p], linked_[p].addresses[0], timeout_ms_);
        submit.iommu_domain = iommu_domain_;
        RKNN_ASSIGN_OR_RETURN(driver::SubmitResult result, driver_->driver->submit(submit));
        if (result.task_counter != programs[p]->tasks.size())
            return Status(StatusCode::kInternal, "the NPU completed " + std::to_string(result.task_counter) + " of " +
                                                     std::to_string(programs[p]->tasks.size()) + " matmul tasks");
        RKNN_RETURN_IF_ERROR(output_->sync(driver::SyncDirection::kFromDevice));
        if (!split) break;
        if (integer()) {
            const auto* part = reinterpret_cast<const int32_t*>(output_->host());
            for (size_t i = 0; i < values; ++i) int_sums_[i] += part[i];
        } else {
            const auto* part = reinterpret_cast<const float*>(output_->host());
            for (size_t i = 0; i < values; ++i) float_sums_[i] += part[i];
        }
    }
    uint8_t* out = !split ? output_->host()
                   : integer() ? reinterpret_cast<uint8_t*>(int_sums_.data())
                               : reinterpret_cast<uint8_t*>(float_sums_.data());
    int64_t c_lanes = out_lanes;
    size_t c_element = out_element;
    if (float32_out && plan_.type.c == Elem::kFloat16) {
        // float32 sums of several parts, rounded once into a float16 cube.
        c_lanes = 8;
        c_element = 2;
        const int64_t channels = ceil_div(n, c_lanes) * c_lanes;
        half_cube_.assign(static_cast<size_t>(channels * m), 0);
        const auto* sums = reinterpret_cast<const float*>(out);
        for (int64_t ch = 0; ch < n; ++ch)
            for (int64_t row = 0; row < m; ++row)
                half_cube_[static_cast<size_t>(((ch / c_lanes) * m + row) * c_lanes + ch % c_lanes)] =
                    float_to_half(sums[static_cast<size_t>(((ch / out_lanes) * m + row) * out_lanes + ch % out_lanes)]);
        out = reinterpret_cast<uint8_t*>(half_cube_.data());
    }
    // The output cube [N/lanes][M][lanes] into C's layout. A C of the cube's
    // width is copied whole, padding lanes included.
    if (c_sub == c_lanes) {
        std::memcpy(c, out, static_cast<size_t>(ceil_div(n, c_lanes) * m * c_lanes) * c_element);
    } else {
        copy_tiled(out, c_lanes, c, c_sub, m, n, c_element);
    }
    return Status::ok();
}

}  // namespace rknn::matmul
