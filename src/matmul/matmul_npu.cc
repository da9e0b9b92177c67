#include "matmul/matmul_npu.h"

#include <cstring>

#include "npu/conv_lowering.h"
#include "npu/dpu_regs.h"
#include "npu/native_layout.h"
#include "runtime/npu_segments.h"

namespace rknn::matmul {

namespace {

constexpr uint64_t kAtomBytes = 16;
constexpr uint32_t kTimeoutMs = 6000;
constexpr int64_t kMaxInt8K = 65536;  // |a - zp| * |b| * K stays below 2^31

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

Status NpuMatmul::ensure(std::shared_ptr<runtime::IoMemory>* memory, uint64_t bytes) {
    if (*memory != nullptr && (*memory)->size() >= bytes) return Status::ok();
    memory->reset();
    RKNN_ASSIGN_OR_RETURN(*memory, runtime::IoMemory::create(driver_, std::max<uint64_t>(bytes, kAtomBytes), true, iommu_domain_));
    return Status::ok();
}

Status NpuMatmul::set_b(const uint8_t* b, int64_t k, int64_t n) {
    b_k_ = b_n_ = 0;  // until the new kernels are in place
    records_valid_ = false;
    const Offsets at{&plan_, 1, k, n};
    std::vector<uint8_t> packed;
    if (integer()) {
        // Kernels as [N][K] rows of codes, and each column's sum for the bias.
        std::vector<int8_t> rows(static_cast<size_t>(k * n));
        column_sums_.assign(static_cast<size_t>(n), 0);
        for (int64_t row = 0; row < k; ++row)
            for (int64_t col = 0; col < n; ++col) {
                const int32_t v = load_int(b, at.b(row, col), Elem::kInt8);
                rows[static_cast<size_t>(col * k + row)] = static_cast<int8_t>(v);
                column_sums_[static_cast<size_t>(col)] += v;
            }
        const std::vector<int8_t> w = npu::pack_conv_weights_int8(rows.data(), static_cast<int>(n), static_cast<int>(k),
                                                                  1, 1, static_cast<int>(ceil_div(k, 16) * 16));
        packed.assign(reinterpret_cast<const uint8_t*>(w.data()),
                      reinterpret_cast<const uint8_t*>(w.data()) + w.size());
    } else {
        std::vector<float> rows(static_cast<size_t>(k * n));
        for (int64_t row = 0; row < k; ++row)
            for (int64_t col = 0; col < n; ++col)
                rows[static_cast<size_t>(col * k + row)] = load_float(b, at.b(row, col), Elem::kFloat16);
        const std::vector<uint16_t> w = npu::pack_conv_weights_fp16(
            rows.data(), static_cast<int>(n), static_cast<int>(k), 1, 1, static_cast<int>(ceil_div(k, 8) * 8));
        packed.resize(w.size() * sizeof(uint16_t));
        std::memcpy(packed.data(), w.data(), packed.size());
        const std::vector<uint8_t> records = npu::float_bias_records({}, static_cast<int>(ceil_div(n, 8) * 8));
        RKNN_RETURN_IF_ERROR(ensure(&records_, records.size()));
        std::memcpy(records_->host(), records.data(), records.size());
        RKNN_RETURN_IF_ERROR(records_->sync(driver::SyncDirection::kToDevice));
    }
    RKNN_RETURN_IF_ERROR(ensure(&weights_, packed.size()));
    std::memcpy(weights_->host(), packed.data(), packed.size());
    RKNN_RETURN_IF_ERROR(weights_->sync(driver::SyncDirection::kToDevice));
    b_k_ = k;
    b_n_ = n;
    return Status::ok();
}

StatusOr<const npu::Program*> NpuMatmul::program(int64_t m, int64_t k, int64_t n, uint32_t core_mask) {
    const auto key = std::make_tuple(m, k, n, core_mask);
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
        RKNN_RETURN_IF_ERROR(npu::lower_conv_fp16(geo, addresses, plan_.type.c == Elem::kFloat32, soc, core_mask,
                                                  &builder, npu::FloatEpilogue{}));
    }
    return &programs_.emplace(key, builder.finish()).first->second;
}

Status NpuMatmul::run(const uint8_t* a, uint8_t* c, int64_t c_sub, int64_t m, int64_t k, int64_t n, uint32_t core_mask,
                      int32_t a_zp) {
    if (b_k_ != k || b_n_ != n)
        return Status(StatusCode::kFailedPrecondition, "B was bound for K " + std::to_string(b_k_) + ", N " +
                                                           std::to_string(b_n_) + ": bind it again for this shape");
    // The program first: a shape the convolution path cannot tile fails
    // (kUnimplemented) before anything is copied.
    RKNN_ASSIGN_OR_RETURN(const npu::Program* program, program(m, k, n, core_mask));
    // Elements per 16-byte atom: A's cube and C's.
    const size_t a_element = integer() ? 1 : 2, c_element = integer() ? 4 : elem_bits(plan_.type.c) / 8;
    const int64_t a_lanes = static_cast<int64_t>(kAtomBytes / a_element),
                  c_lanes = static_cast<int64_t>(kAtomBytes / c_element);
    RKNN_RETURN_IF_ERROR(ensure(&input_, static_cast<uint64_t>(ceil_div(k, a_lanes) * m) * kAtomBytes));
    RKNN_RETURN_IF_ERROR(ensure(&output_, static_cast<uint64_t>(ceil_div(n, c_lanes) * m) * kAtomBytes));

    // A into the input cube [K/lanes][M][lanes] (K is a multiple of 32: no
    // padding); a NATIVE A is a tiled layout of its own width.
    const int64_t a_sub = plan_.ac_layout == RKNN_MM_LAYOUT_NATIVE ? plan_.tiles.a_sub_k : k;
    copy_tiled(a, a_sub, input_->host(), a_lanes, m, k, a_element);
    RKNN_RETURN_IF_ERROR(input_->sync(driver::SyncDirection::kToDevice));
    if (integer() && (!records_valid_ || records_zp_ != a_zp)) {
        // Each column's bias takes A's zero point off: -zp_a * sum_k B[k][n].
        npu::EpilogueRegs e;
        e.bias.resize(static_cast<size_t>(n));
        e.mult.assign(static_cast<size_t>(n), 1);
        for (int64_t col = 0; col < n; ++col)
            e.bias[static_cast<size_t>(col)] =
                static_cast<int32_t>(-int64_t{a_zp} * column_sums_[static_cast<size_t>(col)]);
        const std::vector<uint8_t> records = npu::bs_records(e, static_cast<int>(ceil_div(n, 16) * 16));
        RKNN_RETURN_IF_ERROR(ensure(&records_, records.size()));
        std::memcpy(records_->host(), records.data(), records.size());
        RKNN_RETURN_IF_ERROR(records_->sync(driver::SyncDirection::kToDevice));
        records_valid_ = true;
        records_zp_ = a_zp;
    }

    RKNN_RETURN_IF_ERROR(ensure(&stream_, program->bytes()));
    const std::array<uint64_t, 5> addresses = {stream_->device_address(), input_->device_address(),
                                               weights_->device_address(), records_->device_address(),
                                               output_->device_address()};
    if (program != linked_program_ || addresses != linked_addresses_) {
        linked_program_ = nullptr;
        const std::vector<uint64_t> bases(addresses.begin() + 1, addresses.end());
        RKNN_ASSIGN_OR_RETURN(std::vector<uint64_t> words, program->link(addresses[0], bases));
        std::memcpy(stream_->host(), words.data(), words.size() * sizeof(uint64_t));
        RKNN_RETURN_IF_ERROR(stream_->sync(driver::SyncDirection::kToDevice));
        linked_program_ = program;
        linked_addresses_ = addresses;
    }
    driver::SubmitRequest submit = runtime::make_submit(*program, stream_->device_address(), kTimeoutMs);
    submit.iommu_domain = iommu_domain_;
    RKNN_ASSIGN_OR_RETURN(driver::SubmitResult result, driver_->driver->submit(submit));
    if (result.task_counter != program->tasks.size())
        return Status(StatusCode::kInternal, "the NPU completed " + std::to_string(result.task_counter) + " of " +
                                                 std::to_string(program->tasks.size()) + " matmul tasks");
    RKNN_RETURN_IF_ERROR(output_->sync(driver::SyncDirection::kFromDevice));

    // The output cube [N/lanes][M][lanes] into C's layout. A C of the cube's
    // width is copied whole, padding lanes included.
    if (c_sub == c_lanes) {
        std::memcpy(c, output_->host(), static_cast<size_t>(ceil_div(n, c_lanes) * m * c_lanes) * c_element);
    } else {
        copy_tiled(output_->host(), c_lanes, c, c_sub, m, n, c_element);
    }
    return Status::ok();
}

}  // namespace rknn::matmul
