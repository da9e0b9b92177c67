// One rknn_matmul_ctx: the checked plan, its shapes and their io attrs, the
// memory bound to A, B and C, the quantisation parameters, and the run.
//
// Float16 types and int8 x int8 (but per-group scales) run as NPU tasks on
// RK3588-class NPUs (matmul_npu.h), the int8 outputs finished on the host
// from the NPU's exact sums; the others execute the arithmetic of
// cpu/matmul_reference.h on the host, reading A and B and writing C through
// the bound memory in the layouts the context was created with
// (docs/matmul.md). Calls on one context are serialised; contexts are
// independent, so several threads may each run their own.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "base/status.h"
#include "cpu/matmul_reference.h"
#include "driver/kernel_driver_factory.h"
#include "matmul/matmul_npu.h"
#include "matmul/matmul_rules.h"
#include "rknn_matmul_api.h"
#include "runtime/io_memory.h"

namespace rknn::matmul {

// The opened device every matmul context of the process shares (one per
// device choice): a context costs no file descriptor of its own.
StatusOr<std::shared_ptr<driver::OpenedDriver>> shared_matmul_driver();

class MatmulContext {
public:
    // `shapes` holds one shape (rknn_matmul_create) or the dynamic list;
    // `io` receives one attr set per shape.
    static StatusOr<std::unique_ptr<MatmulContext>> create(const rknn_matmul_info& info,
                                                           const std::vector<rknn_matmul_shape>& shapes,
                                                           rknn_matmul_io_attr* io);

    // Device memory for rknn_create_mem on this context.
    StatusOr<std::shared_ptr<runtime::IoMemory>> create_memory(uint64_t bytes, bool cacheable);
    // rknn_matmul_set_io_mem: `bytes` of `memory` from `offset` hold the
    // matrix `attr` names, for the current shape.
    Status bind(const rknn_matmul_tensor_attr& attr, std::shared_ptr<runtime::IoMemory> memory, uint64_t offset,
                uint64_t bytes);
    Status set_quant_params(const rknn_quant_params& params);
    // `scale` (may be NULL) gets the matrix's scales: for B, N values where B
    // is quantised per channel, else one; refused for per-group B.
    Status get_quant_params(rknn_quant_params* params, float* scale);
    Status set_core_mask(int mask);
    Status set_dynamic_shape(const rknn_matmul_shape& shape);
    Status run();

    const hw::SocProfile& soc() const { return *driver_->soc; }

private:
    struct Binding {
        std::shared_ptr<runtime::IoMemory> memory;
        uint64_t offset = 0, bytes = 0;
    };
    struct Quant {
        std::vector<float> scale;
        std::vector<int32_t> zp;
        bool set = false;
    };

    // What a name field ("A", "B" or "C") refers to.
    struct Matrix {
        Elem elem;
        Binding* binding;
        Quant* quant;
    };

    MatmulContext() = default;
    StatusOr<Matrix> matrix_named(const std::string& which, const char* field);
    const rknn_matmul_shape& shape() const { return shapes_[current_]; }
    Status check_bound(const Binding& binding, const char* name, uint64_t needed) const;
    bool b_zero_points() const;  // any of B's zero points is not 0
    int64_t c_sub() const;       // C's tile width (copy_tiled) for the shape
    // `npu_sums` (M x N, or NULL: the host reference computes them): the
    // NPU's int32 sums of (a - zp_a) * b.
    Status run_integer(const uint8_t* a, const uint8_t* b, uint8_t* c, const int32_t* npu_sums);
    void finish_npu_sums(const uint8_t* a, const int32_t* sums, const cpu::MatmulBQuant& bq, int32_t a_zp,
                         float a_scale, bool need_real);
    Status run_float(const uint8_t* a, const uint8_t* b, uint8_t* c);

    std::mutex mutex_;
    std::shared_ptr<driver::OpenedDriver> driver_;
    Plan plan_;
    int iommu_domain_ = 0;
    std::vector<rknn_matmul_shape> shapes_;
    size_t current_ = 0;
    Binding a_, b_, c_;
    Quant a_quant_, b_quant_, c_quant_;
    int core_mask_ = RKNN_NPU_CORE_AUTO;
    // The host reference's working rows, grown at the first run of a shape
    // that needs more.
    std::vector<int32_t> a_int_, bt_int_;
    std::vector<float> a_float_, bt_float_, c_float_;
    std::vector<int64_t> raw_;
    std::vector<int32_t> sums_;  // the NPU's sums, where C is not them
    std::vector<double> real_;
    cpu::MatmulBQuant b_params_;
    // What runs as NPU tasks on an RK3588-class NPU (matmul_npu.h); the rest
    // runs on the host reference.
    std::unique_ptr<NpuMatmul> npu_;
};

}  // namespace rknn::matmul
