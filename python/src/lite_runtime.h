// One rknn_context for the Python modules, in C++ terms: no Python types here,
// so that the binding (module.cc) only converts arrays and errors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "rknn_api.h"

namespace rknnlite {

// A C API call that failed: the function and its return code. The runtime has
// logged the reason already.
class CallError : public std::runtime_error {
public:
    CallError(const std::string& what, int code) : std::runtime_error(what), code_(code) {}
    int code() const { return code_; }

private:
    int code_;
};

// rknn_tensor_attr, as the Python side reads it.
struct TensorInfo {
    uint32_t index = 0;
    std::string name;
    std::vector<uint32_t> dims;
    rknn_tensor_format fmt = RKNN_TENSOR_UNDEFINED;
    rknn_tensor_type type = RKNN_TENSOR_FLOAT32;
    rknn_tensor_qnt_type qnt_type = RKNN_TENSOR_QNT_NONE;
    int32_t zp = 0;
    float scale = 1.0f;
    uint32_t n_elems = 0;
    uint32_t size = 0;
    uint32_t size_with_stride = 0;
};

// The shapes one input takes: the model's shape sets (none for a static
// model) and, where the model has one, a range (min, max and step per dim).
// 4-D shapes are NHWC, as rknn_set_input_shapes takes them.
struct InputShapes {
    std::vector<std::vector<uint32_t>> sets;
    std::vector<uint32_t> min, max, step;  // empty: no range
};

// One input of a run: bytes laid out as `type` and `fmt` say.
struct InputView {
    const void* data = nullptr;
    size_t size = 0;
    rknn_tensor_type type = RKNN_TENSOR_UINT8;
    rknn_tensor_format fmt = RKNN_TENSOR_NHWC;
    bool pass_through = false;
};

// Where a run writes one output as float32.
struct OutputView {
    float* data = nullptr;
    size_t size = 0;  // bytes
};

class LiteRuntime {
public:
    // rknn_init on a copy of `model` (the runtime copies the buffer once).
    LiteRuntime(const void* model, size_t size, uint32_t flags);
    ~LiteRuntime();
    LiteRuntime(const LiteRuntime&) = delete;
    LiteRuntime& operator=(const LiteRuntime&) = delete;

    // rknn_destroy; later calls raise CallError. Waits for a run in progress.
    void release();
    bool released();

    void set_core_mask(int mask);
    uint32_t n_inputs() const { return n_inputs_; }
    uint32_t n_outputs() const { return n_outputs_; }
    // current: the shapes set last (CURRENT_*_ATTR); otherwise the model's.
    // native: the layout pass-through bytes must have (NATIVE_INPUT_ATTR).
    TensorInfo input(uint32_t index, bool current, bool native = false);
    TensorInfo output(uint32_t index, bool current);
    InputShapes input_shapes(uint32_t index);
    // One dims list per input, 4-D as NHWC.
    void set_input_shapes(const std::vector<std::vector<uint32_t>>& dims);
    // rknn_inputs_set, rknn_run and rknn_outputs_get (float32, into `outputs`).
    // Returns the frame id rknn_outputs_get reported.
    uint64_t run(const std::vector<InputView>& inputs, const std::vector<OutputView>& outputs);
    // (API version, driver version).
    std::pair<std::string, std::string> sdk_version();
    // Microseconds of the last run (RKNN_QUERY_PERF_RUN).
    int64_t last_run_us();
    // The per-layer table of the last run (RKNN_QUERY_PERF_DETAIL; the
    // context needs RKNN_FLAG_COLLECT_PERF_MASK).
    std::string perf_detail();

private:
    void check_open(const char* function) const;
    TensorInfo tensor(rknn_query_cmd cmd, uint32_t index, uint32_t count);

    std::mutex mutex_;  // one call on the context at a time; release waits for a run
    rknn_context ctx_ = 0;
    uint32_t n_inputs_ = 0, n_outputs_ = 0;
};

}  // namespace rknnlite
