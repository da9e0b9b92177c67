#include "matmul/matmul_context.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <string>

#include "base/log.h"
#include "matmul/matmul_layout.h"

namespace rknn::matmul {

namespace {

Status invalid(const std::string& message) {
    return Status(StatusCode::kInvalidArgument, message);
}

}  // namespace

// Keyed by the variables that choose the device, so that a change of them
// (tests switch the mock's SoC) opens the device they now name.
StatusOr<std::shared_ptr<driver::OpenedDriver>> shared_matmul_driver() {
    static std::mutex mutex;
    static std::map<std::string, std::weak_ptr<driver::OpenedDriver>> cached;
    std::string key;
    for (const char* name : {"RKNN_DEVICE", "RKNN_MOCK_SOC", "RKNN_MOCK_DRIVER"}) {
        const char* value = std::getenv(name);
        key += std::string(value != nullptr ? value : "") + "|";
    }
    std::lock_guard<std::mutex> lock(mutex);
    if (std::shared_ptr<driver::OpenedDriver> alive = cached[key].lock()) return alive;
    RKNN_ASSIGN_OR_RETURN(driver::OpenedDriver opened, driver::open_kernel_driver());
    auto driver = std::make_shared<driver::OpenedDriver>(std::move(opened));
    for (auto it = cached.begin(); it != cached.end();) it = it->second.expired() ? cached.erase(it) : std::next(it);
    if (driver->soc == nullptr)
        return Status(StatusCode::kUnimplemented,
                      "the matmul API needs the NPU's SoC, which this device does not report");
    cached[key] = driver;
    return driver;
}

namespace {

std::string shape_text(const rknn_matmul_shape& s) {
    return "M " + std::to_string(s.M) + ", K " + std::to_string(s.K) + ", N " + std::to_string(s.N);
}

// The text of a fixed-size name field, which need not end in a NUL.
template <size_t kSize>
std::string name_text(const char (&field)[kSize]) {
    return std::string(field, strnlen(field, kSize));
}

template <typename T>
T saturate(int64_t v) {
    return static_cast<T>(std::clamp<int64_t>(v, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
}

}  // namespace

StatusOr<std::unique_ptr<MatmulContext>> MatmulContext::create(const rknn_matmul_info& info,
                                                               const std::vector<rknn_matmul_shape>& shapes,
                                                               rknn_matmul_io_attr* io) {
    std::unique_ptr<MatmulContext> ctx(new MatmulContext());
    if (info.iommu_domain_id < 0 || info.iommu_domain_id > 15)
        return invalid("iommu_domain_id " + std::to_string(info.iommu_domain_id) + " is not within 0-15");
    RKNN_ASSIGN_OR_RETURN(ctx->driver_, shared_matmul_driver());
    if (info.iommu_domain_id != 0 && !ctx->driver_->driver->has_iommu_domains())
        return invalid("iommu_domain_id " + std::to_string(info.iommu_domain_id) + ": the " +
                       ctx->driver_->driver->backend_name() + " driver has one address space (domain 0 only)");
    RKNN_RETURN_IF_ERROR(check_info(info, ctx->soc(), &ctx->plan_));
    if (shapes.empty()) return invalid("no shape given");
    for (size_t i = 0; i < shapes.size(); ++i) {
        const rknn_matmul_shape& s = shapes[i];
        const Status shape_ok = check_shape(ctx->plan_, ctx->soc(), s.M, s.K, s.N);
        if (!shape_ok.is_ok())
            return Status(shape_ok.code(), (shapes.size() > 1 ? "shape " + std::to_string(i) + ": " : std::string()) +
                                               shape_ok.message());
        for (size_t j = 0; j < i; ++j)
            if (shapes[j].M == s.M && shapes[j].K == s.K && shapes[j].N == s.N)
                return invalid("shape " + std::to_string(i) + " (" + shape_text(s) + ") repeats shape " +
                               std::to_string(j));
        fill_io_attr(ctx->plan_, s.M, s.K, s.N, &io[i]);
    }
    ctx->shapes_ = shapes;
    ctx->iommu_domain_ = info.iommu_domain_id;
    int64_t max_k = 0;
    for (const rknn_matmul_shape& s : shapes) max_k = std::max<int64_t>(max_k, s.K);
    if (NpuMatmul::applies(ctx->plan_, ctx->soc(), max_k))
        ctx->npu_ = std::make_unique<NpuMatmul>(ctx->driver_, ctx->plan_, ctx->iommu_domain_);
    RKNN_LOG_AT(3, "matmul %s on %s: %zu shape(s), first %s; runs %s",
                get_matmul_type_string(static_cast<rknn_matmul_type>(ctx->plan_.type.raw)), ctx->soc().name,
                shapes.size(), shape_text(shapes[0]).c_str(), ctx->npu_ ? "as NPU tasks" : "on the host reference");
    return ctx;
}

StatusOr<std::shared_ptr<runtime::IoMemory>> MatmulContext::create_memory(uint64_t bytes, bool cacheable) {
    return runtime::IoMemory::create(driver_, bytes, cacheable, iommu_domain_);
}

Status MatmulContext::bind(const rknn_matmul_tensor_attr& attr, std::shared_ptr<runtime::IoMemory> memory,
                           uint64_t offset, uint64_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::string which = name_text(attr.name);
    RKNN_ASSIGN_OR_RETURN(const Matrix matrix, matrix_named(which, "attr->name"));
    const rknn_matmul_shape& s = shape();
    const Elem elem = matrix.elem;
    const uint64_t needed = which == "A"   ? a_bytes(plan_, s.M, s.K)
                            : which == "B" ? b_bytes(plan_, s.K, s.N)
                                           : c_bytes(plan_, s.M, s.N);
    Binding* binding = matrix.binding;
    int attr_type = 0;
    std::memcpy(&attr_type, &attr.type, sizeof(attr_type));
    if (attr_type != elem_tensor_type(elem))
        return invalid(which + ": attr->type " + std::to_string(attr_type) + " is not the " + elem_name(elem) +
                       " this matmul type takes");
    if (bytes < needed)
        return invalid(which + ": the memory holds " + std::to_string(bytes) + " bytes, the shape (" + shape_text(s) +
                       ") needs " + std::to_string(needed));
    // The NPU path packs B's kernels now: the API asks for set_io_mem after
    // every update of the data.
    if (binding == &b_ && npu_ != nullptr) RKNN_RETURN_IF_ERROR(npu_->set_b(memory->host() + offset, s.K, s.N));
    binding->memory = std::move(memory);
    binding->offset = offset;
    binding->bytes = bytes;
    return Status::ok();
}

StatusOr<MatmulContext::Matrix> MatmulContext::matrix_named(const std::string& which, const char* field) {
    if (which == "A") return Matrix{plan_.type.a, &a_, &a_quant_};
    if (which == "B") return Matrix{plan_.type.b, &b_, &b_quant_};
    if (which == "C") return Matrix{plan_.type.c, &c_, &c_quant_};
    return invalid(std::string(field) + " \"" + which + "\" names none of A, B and C");
}

Status MatmulContext::set_quant_params(const rknn_quant_params& params) {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::string which = name_text(params.name);
    RKNN_ASSIGN_OR_RETURN(const Matrix matrix, matrix_named(which, "params->name"));
    const Elem elem = matrix.elem;
    Quant* quant = matrix.quant;
    if (elem_is_float(elem)) return invalid(which + " is " + elem_name(elem) + ": it takes no quantisation parameters");
    if (which == "C" && elem != Elem::kInt8)
        return invalid(std::string("C is ") + elem_name(elem) +
                       ", the exact sum: only an int8 C takes quantisation parameters");
    const rknn_matmul_shape& s = shape();
    int64_t want = 1;
    const int quant_type = which == "B" ? plan_.b_quant : plan_.ac_quant;
    if (which == "B" &&
        (quant_type == RKNN_QUANT_TYPE_PER_CHANNEL_SYM || quant_type == RKNN_QUANT_TYPE_PER_CHANNEL_ASYM))
        want = s.N;
    if (which == "B" && (quant_type == RKNN_QUANT_TYPE_PER_GROUP_SYM || quant_type == RKNN_QUANT_TYPE_PER_GROUP_ASYM))
        want = int64_t{s.K} / plan_.group_size * s.N;
    const bool symmetric = quant_type % 2 == 0;
    if (params.scale == nullptr || params.scale_len != want)
        return invalid(which + ": " + std::to_string(want) + " scales wanted, scale_len is " +
                       std::to_string(params.scale_len) + (params.scale == nullptr ? " and scale is NULL" : ""));
    if (params.zp_len != 0 && (params.zp == nullptr || params.zp_len != want))
        return invalid(which + ": zp_len must be 0 or " + std::to_string(want) + " with zp set, not " +
                       std::to_string(params.zp_len));
    Quant next;
    next.scale.assign(params.scale, params.scale + want);
    next.zp.assign(static_cast<size_t>(want), 0);
    if (params.zp_len != 0) next.zp.assign(params.zp, params.zp + want);
    const int32_t lo = elem == Elem::kInt4 ? -8 : -128, hi = elem == Elem::kInt4 ? 7 : 127;
    for (int64_t i = 0; i < want; ++i) {
        const float scale = next.scale[static_cast<size_t>(i)];
        const int32_t zp = next.zp[static_cast<size_t>(i)];
        if (!(scale > 0.0f) || !std::isfinite(scale))
            return invalid(which + ": scale " + std::to_string(i) + " is not a positive finite number");
        if (symmetric && zp != 0)
            return invalid(which + ": zero point " + std::to_string(i) + " is " + std::to_string(zp) +
                           ", and the quantisation type is symmetric");
        if (zp < lo || zp > hi)
            return invalid(which + ": zero point " + std::to_string(zp) + " is outside the " + elem_name(elem) +
                           " range");
    }
    next.set = true;
    *quant = std::move(next);
    return Status::ok();
}

Status MatmulContext::get_quant_params(rknn_quant_params* params, float* scale) {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::string which = name_text(params->name);
    RKNN_ASSIGN_OR_RETURN(const Matrix matrix, matrix_named(which, "params->name"));
    const Quant* quant = matrix.quant;
    const std::vector<float> scales = quant->set ? quant->scale : std::vector<float>{1.0f};
    const std::vector<int32_t> zps = quant->set ? quant->zp : std::vector<int32_t>{0};
    // Everything is checked before anything is written.
    if (params->scale != nullptr && params->scale_len < static_cast<int32_t>(scales.size()))
        return invalid(which + ": scale_len " + std::to_string(params->scale_len) + " is short of the " +
                       std::to_string(scales.size()) + " scales");
    if (params->zp != nullptr && params->zp_len < static_cast<int32_t>(zps.size()))
        return invalid(which + ": zp_len " + std::to_string(params->zp_len) + " is short of the " +
                       std::to_string(zps.size()) + " zero points");
    // `scale` (runtime-spec 8.2): B's scales, one per column of C where B is
    // quantised per channel (N values), else one; A's scale times them is
    // what one unit of an int32 C is worth. Per-group scales have no one
    // value per column. Other names: the matrix's one scale.
    const bool per_group = which == "B" && quant->set && plan_.b_quant >= RKNN_QUANT_TYPE_PER_GROUP_SYM;
    if (scale != nullptr && per_group)
        return invalid("B is quantised per group: it has no one scale per column of C (read params->scale instead)");
    if (params->scale != nullptr) std::copy(scales.begin(), scales.end(), params->scale);
    if (params->zp != nullptr) std::copy(zps.begin(), zps.end(), params->zp);
    params->scale_len = static_cast<int32_t>(scales.size());
    params->zp_len = static_cast<int32_t>(zps.size());
    if (scale != nullptr) std::copy(scales.begin(), scales.end(), scale);
    return Status::ok();
}

Status MatmulContext::set_core_mask(int mask) {
    std::lock_guard<std::mutex> lock(mutex_);
    const hw::SocProfile& s = soc();
    if (s.num_cores <= 1 && mask != RKNN_NPU_CORE_AUTO)
        return invalid(std::string(s.name) + " has one NPU core: only RKNN_NPU_CORE_AUTO applies");
    if (mask != RKNN_NPU_CORE_AUTO && mask != RKNN_NPU_CORE_ALL && !s.core_mask_runs(static_cast<uint32_t>(mask)))
        return invalid("core mask " + std::to_string(mask) + " is not one " + s.name + " runs");
    core_mask_ = mask;
    return Status::ok();
}

Status MatmulContext::set_dynamic_shape(const rknn_matmul_shape& shape) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t i = 0; i < shapes_.size(); ++i)
        if (shapes_[i].M == shape.M && shapes_[i].K == shape.K && shapes_[i].N == shape.N) {
            current_ = i;
            return Status::ok();
        }
    return invalid("shape (" + shape_text(shape) + ") is not among the " + std::to_string(shapes_.size()) +
                   " the context was created with");
}

Status MatmulContext::check_bound(const Binding& binding, const char* name, uint64_t needed) const {
    if (binding.memory == nullptr)
        return Status(StatusCode::kFailedPrecondition,
                      std::string(name) + " has no memory: call rknn_matmul_set_io_mem before rknn_matmul_run");
    if (binding.bytes < needed)
        return Status(StatusCode::kFailedPrecondition, std::string(name) + "'s memory holds " +
                                                           std::to_string(binding.bytes) + " bytes, the shape (" +
                                                           shape_text(shape()) + ") needs " + std::to_string(needed) +
                                                           ": bind it again after rknn_matmul_set_dynamic_shape");
    return Status::ok();
}

Status MatmulContext::run() {
    std::lock_guard<std::mutex> lock(mutex_);
    const rknn_matmul_shape& s = shape();
    RKNN_RETURN_IF_ERROR(check_bound(a_, "A", a_bytes(plan_, s.M, s.K)));
    RKNN_RETURN_IF_ERROR(check_bound(b_, "B", b_bytes(plan_, s.K, s.N)));
    RKNN_RETURN_IF_ERROR(check_bound(c_, "C", c_bytes(plan_, s.M, s.N)));
    const uint8_t* a = a_.memory->host() + a_.offset;
    const uint8_t* b = b_.memory->host() + b_.offset;
    uint8_t* c = c_.memory->host() + c_.offset;
    if (npu_ != nullptr) {
        const uint32_t mask =
            core_mask_ == RKNN_NPU_CORE_ALL ? soc().all_cores_mask : static_cast<uint32_t>(core_mask_);
        const int32_t a_zp = a_quant_.set ? a_quant_.zp[0] : 0;
        Status on_npu;
        if (!npu_->integer()) {
            on_npu = npu_->run(a, c, c_sub(), s.M, s.K, s.N, mask);
        } else if (plan_.type.c == Elem::kInt32 && !b_zero_points()) {
            on_npu = npu_->run(a, c, c_sub(), s.M, s.K, s.N, mask, a_zp);  // the sums are C
        } else {
            // The NPU's sums, finished on the host.
            if (sums_.size() < static_cast<size_t>(s.M * s.N)) sums_.resize(static_cast<size_t>(s.M * s.N));
            on_npu = npu_->run(a, reinterpret_cast<uint8_t*>(sums_.data()), s.N, s.M, s.K, s.N, mask, a_zp);
            if (on_npu.is_ok()) return run_integer(a, b, c, sums_.data());
        }
        if (on_npu.code() != StatusCode::kUnimplemented) return on_npu;
        // A shape the convolution path cannot tile (K beyond the CNA's size
        // fields, say) runs on the host reference.
        RKNN_LOG_AT(3, "matmul (%s) runs on the host reference: %s", shape_text(s).c_str(), on_npu.message().c_str());
    }
    if (elem_is_float(plan_.type.a) != elem_is_float(plan_.type.b))
        return Status(StatusCode::kUnimplemented, "a float A with an integer B: not implemented");
    return elem_is_float(plan_.type.a) ? run_float(a, b, c) : run_integer(a, b, c, nullptr);
}

bool MatmulContext::b_zero_points() const {
    return b_quant_.set && std::any_of(b_quant_.zp.begin(), b_quant_.zp.end(), [](int32_t z) { return z != 0; });
}

int64_t MatmulContext::c_sub() const {
    return plan_.ac_layout == RKNN_MM_LAYOUT_NATIVE ? plan_.tiles.c_sub_n : shape().N;
}

Status MatmulContext::run_integer(const uint8_t* a, const uint8_t* b, uint8_t* c, const int32_t* npu_sums) {
    const rknn_matmul_shape& s = shape();
    const int64_t m = s.M, k = s.K, n = s.N;
    const Offsets at{&plan_, m, k, n};
    // Working rows, grown on the first run of a shape that needs more (a
    // context whose sums come from the NPU never makes A's and B's).
    if (raw_.size() < static_cast<size_t>(m * n)) raw_.resize(static_cast<size_t>(m * n));
    const bool need_real = plan_.type.c != Elem::kInt32 && plan_.type.c != Elem::kInt16;
    if (need_real && real_.size() < static_cast<size_t>(m * n)) real_.resize(static_cast<size_t>(m * n));
    if (npu_sums == nullptr) {
        if (a_int_.size() < static_cast<size_t>(m * k)) a_int_.resize(static_cast<size_t>(m * k));
        if (bt_int_.size() < static_cast<size_t>(k * n)) bt_int_.resize(static_cast<size_t>(k * n));
        for (int64_t row = 0; row < m; ++row)
            for (int64_t col = 0; col < k; ++col)
                a_int_[static_cast<size_t>(row * k + col)] = load_int(a, at.a(row, col), plan_.type.a);
        for (int64_t row = 0; row < k; ++row)
            for (int64_t col = 0; col < n; ++col)
                bt_int_[static_cast<size_t>(col * k + row)] = load_int(b, at.b(row, col), plan_.type.b);
    }
    // B's parameters as set, for this shape (per channel and per group
    // depend on N and K: set again after a shape change that alters them).
    cpu::MatmulBQuant& bq = b_params_;
    bq.mode = cpu::MatmulBQuant::Mode::kLayer;
    bq.group_size = 0;
    bq.scale.assign(1, 1.0f);
    bq.zp.assign(1, 0);
    if (b_quant_.set) {
        int64_t want = 1;
        if (plan_.b_quant == RKNN_QUANT_TYPE_PER_CHANNEL_SYM || plan_.b_quant == RKNN_QUANT_TYPE_PER_CHANNEL_ASYM) {
            bq.mode = cpu::MatmulBQuant::Mode::kChannel;
            want = n;
        } else if (plan_.b_quant >= RKNN_QUANT_TYPE_PER_GROUP_SYM) {
            bq.mode = cpu::MatmulBQuant::Mode::kGroup;
            bq.group_size = plan_.group_size;
            want = k / plan_.group_size * n;
        }
        if (static_cast<int64_t>(b_quant_.scale.size()) != want)
            return Status(StatusCode::kFailedPrecondition, "B's quantisation parameters were set for another shape (" +
                                                               std::to_string(b_quant_.scale.size()) +
                                                               " scales, this one needs " + std::to_string(want) + ")");
        bq.scale.assign(b_quant_.scale.begin(), b_quant_.scale.end());  // within the capacity after the first run
        bq.zp.assign(b_quant_.zp.begin(), b_quant_.zp.end());
    }
    const int32_t a_zp = a_quant_.set ? a_quant_.zp[0] : 0;
    const float a_scale = a_quant_.set ? a_quant_.scale[0] : 1.0f;
    const Elem out = plan_.type.c;
    if (npu_sums == nullptr) {
        cpu::matmul_int_reference(m, k, n, a_int_.data(), a_zp, a_scale, bt_int_.data(), bq, raw_.data(),
                                  need_real ? real_.data() : nullptr);
    } else {
        finish_npu_sums(a, npu_sums, bq, a_zp, a_scale, need_real);
    }
    const double c_scale = c_quant_.set ? c_quant_.scale[0] : 1.0;
    const int32_t c_zp = c_quant_.set ? c_quant_.zp[0] : 0;
    for (int64_t row = 0; row < m; ++row)
        for (int64_t col = 0; col < n; ++col) {
            const size_t i = static_cast<size_t>(row * n + col);
            const int64_t dst = at.c(row, col);
            switch (out) {
                case Elem::kInt32:
                    store_int(c, dst, out, saturate<int32_t>(raw_[i]));
                    break;
                case Elem::kInt16:
                    store_int(c, dst, out, saturate<int16_t>(raw_[i]));
                    break;
                case Elem::kInt8: {
                    const double q = std::nearbyint(real_[i] / c_scale) + c_zp;
                    store_int(c, dst, out, static_cast<int32_t>(std::clamp(q, -128.0, 127.0)));
                    break;
                }
                default:
                    store_float(c, dst, out, static_cast<float>(real_[i]));
                    break;
            }
        }
    return Status::ok();
}

void MatmulContext::finish_npu_sums(const uint8_t* a, const int32_t* sums, const cpu::MatmulBQuant& bq, int32_t a_zp,
                                    float a_scale, bool need_real) {
    // The NPU summed (a - zp_a) * b; B's zero points take zp_b * sum_k (a -
    // zp_a) off each. The real value is then the reference's one-group
    // product (per layer or per channel: applies() leaves groups to it).
    const rknn_matmul_shape& s = shape();
    const int64_t m = s.M, k = s.K, n = s.N;
    const Offsets at{&plan_, m, k, n};
    const bool b_zps = b_zero_points();
    for (int64_t row = 0; row < m; ++row) {
        int64_t a_sum = 0;
        if (b_zps)
            for (int64_t col = 0; col < k; ++col) a_sum += load_int(a, at.a(row, col), plan_.type.a) - a_zp;
        for (int64_t col = 0; col < n; ++col) {
            const size_t i = static_cast<size_t>(row * n + col);
            const int64_t q = bq.at(0, col, n);
            const int64_t raw = int64_t{sums[i]} - int64_t{bq.zp[static_cast<size_t>(q)]} * a_sum;
            raw_[i] = raw;
            if (need_real)
                real_[i] = 0.0 + static_cast<double>(a_scale) * static_cast<double>(bq.scale[static_cast<size_t>(q)]) *
                                     static_cast<double>(raw);
        }
    }
}

Status MatmulContext::run_float(const uint8_t* a, const uint8_t* b, uint8_t* c) {
    const rknn_matmul_shape& s = shape();
    const int64_t m = s.M, k = s.K, n = s.N;
    const Offsets at{&plan_, m, k, n};
    if (a_float_.size() < static_cast<size_t>(m * k)) a_float_.resize(static_cast<size_t>(m * k));
    if (bt_float_.size() < static_cast<size_t>(k * n)) bt_float_.resize(static_cast<size_t>(k * n));
    if (c_float_.size() < static_cast<size_t>(m * n)) c_float_.resize(static_cast<size_t>(m * n));
    for (int64_t row = 0; row < m; ++row)
        for (int64_t col = 0; col < k; ++col)
            a_float_[static_cast<size_t>(row * k + col)] = load_float(a, at.a(row, col), plan_.type.a);
    for (int64_t row = 0; row < k; ++row)
        for (int64_t col = 0; col < n; ++col)
            bt_float_[static_cast<size_t>(col * k + row)] = load_float(b, at.b(row, col), plan_.type.b);
    cpu::matmul_float_reference(m, k, n, a_float_.data(), bt_float_.data(), c_float_.data());
    for (int64_t row = 0; row < m; ++row)
        for (int64_t col = 0; col < n; ++col)
            store_float(c, at.c(row, col), plan_.type.c, c_float_[static_cast<size_t>(row * n + col)]);
    return Status::ok();
}

}  // namespace rknn::matmul
