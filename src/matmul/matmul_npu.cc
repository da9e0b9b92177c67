#include "matmul/matmul_npu.h"

#include <cstring>

#include "npu/conv_lowering.h"
#include "npu/native_layout.h"
#include "runtime/npu_segments.h"

namespace rknn::matmul {

namespace {

constexpr uint64_t kAtomBytes = 16;
constexpr int kHalvesPerAtom = 8, kFloatsPerAtom = 4;
constexpr uint32_t kTimeoutMs = 6000;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

enum Buffer : int32_t { kInput, kWeights, kRecords, kOutput };

}  // namespace

bool Fp16NpuMatmul::applies(const Plan& plan, const hw::SocProfile& soc) {
    return soc.arch == hw::NpuArch::kRk3588 && plan.type.a == Elem::kFloat16 && plan.type.b == Elem::kFloat16 &&
           (plan.type.c == Elem::kFloat16 || plan.type.c == Elem::kFloat32);
}

Status Fp16NpuMatmul::ensure(std::shared_ptr<runtime::IoMemory>* memory, uint64_t bytes) {
    if (*memory != nullptr && (*memory)->size() >= bytes) return Status::ok();
    memory->reset();
    RKNN_ASSIGN_OR_RETURN(*memory, runtime::IoMemory::create(driver_, std::max<uint64_t>(bytes, kAtomBytes), true));
    return Status::ok();
}

Status Fp16NpuMatmul::set_b(const uint8_t* b, int64_t k, int64_t n) {
    // The kernels as [N][K] rows of floats, which the packer lays out.
    const Offsets at{&plan_, 1, k, n};
    std::vector<float> rows(static_cast<size_t>(k * n));
    for (int64_t row = 0; row < k; ++row)
        for (int64_t col = 0; col < n; ++col)
            rows[static_cast<size_t>(col * k + row)] = load_float(b, at.b(row, col), Elem::kFloat16);
    const std::vector<uint16_t> packed = npu::pack_conv_weights_fp16(rows.data(), static_cast<int>(n), static_cast<int>(k), 1,
                                                                     1, static_cast<int>(ceil_div(k, 8) * 8));
    const std::vector<uint8_t> records = npu::float_bias_records({}, static_cast<int>(ceil_div(n, 8) * 8));
    RKNN_RETURN_IF_ERROR(ensure(&weights_, packed.size() * sizeof(uint16_t)));
    RKNN_RETURN_IF_ERROR(ensure(&records_, records.size()));
    std::memcpy(weights_->host(), packed.data(), packed.size() * sizeof(uint16_t));
    std::memcpy(records_->host(), records.data(), records.size());
    RKNN_RETURN_IF_ERROR(weights_->sync(driver::SyncDirection::kToDevice));
    RKNN_RETURN_IF_ERROR(records_->sync(driver::SyncDirection::kToDevice));
    b_k_ = k;
    b_n_ = n;
    return Status::ok();
}

Status Fp16NpuMatmul::run(const uint8_t* a, uint8_t* c, int64_t m, int64_t k, int64_t n, uint32_t core_mask) {
    if (b_k_ != k || b_n_ != n)
        return Status(StatusCode::kFailedPrecondition, "B was bound for K " + std::to_string(b_k_) + ", N " +
                                                           std::to_string(b_n_) + ": bind it again for this shape");
    const bool fp32_out = plan_.type.c == Elem::kFloat32;
    const int out_lanes = fp32_out ? kFloatsPerAtom : kHalvesPerAtom;
    RKNN_RETURN_IF_ERROR(ensure(&input_, static_cast<uint64_t>(ceil_div(k, kHalvesPerAtom) * m) * kAtomBytes));
    RKNN_RETURN_IF_ERROR(ensure(&output_, static_cast<uint64_t>(ceil_div(n, out_lanes) * m) * kAtomBytes));

    // A into the input cube [K/8][M][8] (K is a multiple of 32: no padding).
    const Offsets at{&plan_, m, k, n};
    auto* cube = input_->host();
    for (int64_t row = 0; row < m; ++row)
        for (int64_t col = 0; col < k; ++col)
            std::memcpy(cube + ((col / kHalvesPerAtom) * m * kHalvesPerAtom + row * kHalvesPerAtom + col % kHalvesPerAtom) * 2,
                        a + at.a(row, col) * 2, 2);
    RKNN_RETURN_IF_ERROR(input_->sync(driver::SyncDirection::kToDevice));

    const auto key = std::make_tuple(m, k, n, core_mask);
    auto found = programs_.find(key);
    if (found == programs_.end()) {
        npu::ConvGeometry geo;
        geo.fp16 = true;
        geo.in_c = static_cast<int>(k);
        geo.in_h = static_cast<int>(m);
        geo.in_w = 1;
        geo.out_c = static_cast<int>(n);
        const npu::ConvAddresses addresses{npu::BufferRef(kInput, 0), npu::BufferRef(kWeights, 0),
                                           npu::BufferRef(kRecords, 0), npu::BufferRef(kOutput, 0)};
        npu::ProgramBuilder builder(*driver_->soc);
        RKNN_RETURN_IF_ERROR(
            npu::lower_conv_fp16(geo, addresses, fp32_out, *driver_->soc, core_mask, &builder, npu::FloatEpilogue{}));
        found = programs_.emplace(key, builder.finish()).first;
    }
    const npu::Program& program = found->second;
    RKNN_RETURN_IF_ERROR(ensure(&stream_, program.bytes()));
    const std::vector<uint64_t> bases = {input_->device_address(), weights_->device_address(),
                                         records_->device_address(), output_->device_address()};
    RKNN_ASSIGN_OR_RETURN(std::vector<uint64_t> words, program.link(stream_->device_address(), bases));
    std::memcpy(stream_->host(), words.data(), words.size() * sizeof(uint64_t));
    RKNN_RETURN_IF_ERROR(stream_->sync(driver::SyncDirection::kToDevice));
    RKNN_ASSIGN_OR_RETURN(driver::SubmitResult result,
                          driver_->driver->submit(runtime::make_submit(program, stream_->device_address(), kTimeoutMs)));
    if (result.task_counter != program.tasks.size())
        return Status(StatusCode::kInternal, "the NPU completed " + std::to_string(result.task_counter) + " of " +
                                                 std::to_string(program.tasks.size()) + " matmul tasks");
    RKNN_RETURN_IF_ERROR(output_->sync(driver::SyncDirection::kFromDevice));

    // The output cube [N/lanes][M][lanes] into C's layout.
    const size_t element = fp32_out ? 4 : 2;
    const uint8_t* out = output_->host();
    for (int64_t row = 0; row < m; ++row)
        for (int64_t col = 0; col < n; ++col)
            std::memcpy(c + at.c(row, col) * static_cast<int64_t>(element),
                        out + ((col / out_lanes) * m * out_lanes + row * out_lanes + col % out_lanes) * static_cast<int64_t>(element),
                        element);
    return Status::ok();
}

}  // namespace rknn::matmul
