#include "lite_runtime.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "rknn_openrknn_ext.h"

namespace rknnlite {

namespace {

void check(int ret, const char* function) {
    if (ret != RKNN_SUCC) throw CallError(std::string(function) + " failed: " + std::to_string(ret), ret);
}

// rknn_tensor_attr.dims holds at most RKNN_MAX_DIMS values whatever n_dims says.
std::vector<uint32_t> dims_of(const uint32_t* dims, uint32_t n_dims) {
    return std::vector<uint32_t>(dims, dims + std::min<uint32_t>(n_dims, RKNN_MAX_DIMS));
}

}  // namespace

LiteRuntime::LiteRuntime(const void* model, size_t size, uint32_t flags) {
    // size 0 would make rknn_init read `model` as a path.
    if (size == 0 || size > std::numeric_limits<uint32_t>::max())
        throw CallError("rknn_init: the model is empty or larger than 4 GiB", RKNN_ERR_MODEL_INVALID);
    rknn_context ctx = 0;
    check(rknn_init(&ctx, const_cast<void*>(model), static_cast<uint32_t>(size), flags, nullptr), "rknn_init");
    ctx_ = ctx;
    rknn_input_output_num io{};
    const int ret = rknn_query(ctx_, RKNN_QUERY_IN_OUT_NUM, &io, sizeof(io));
    if (ret != RKNN_SUCC) {
        release();
        check(ret, "rknn_query(IN_OUT_NUM)");
    }
    n_inputs_ = io.n_input;
    n_outputs_ = io.n_output;
}

LiteRuntime::~LiteRuntime() { release(); }

void LiteRuntime::release() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (ctx_ != 0) rknn_destroy(ctx_);
    ctx_ = 0;
}

bool LiteRuntime::released() {
    std::lock_guard<std::mutex> lock(mutex_);
    return ctx_ == 0;
}

void LiteRuntime::check_open(const char* function) const {
    if (ctx_ == 0) throw CallError(std::string(function) + ": the runtime was released", RKNN_ERR_CTX_INVALID);
}

void LiteRuntime::set_core_mask(int mask) {
    std::lock_guard<std::mutex> lock(mutex_);
    check_open("rknn_set_core_mask");
    // rknn_core_mask's enumerators span 0..0x10000: a wider int is not one of its values.
    if (mask < 0 || mask > RKNN_NPU_CORE_UNDEFINED)
        throw CallError("rknn_set_core_mask: " + std::to_string(mask) + " is not a core mask", RKNN_ERR_PARAM_INVALID);
    check(rknn_set_core_mask(ctx_, static_cast<rknn_core_mask>(mask)), "rknn_set_core_mask");
}

TensorInfo LiteRuntime::tensor(rknn_query_cmd cmd, uint32_t index, uint32_t count) {
    std::lock_guard<std::mutex> lock(mutex_);
    check_open("rknn_query");
    if (index >= count) throw CallError("tensor index " + std::to_string(index) + " out of range", RKNN_ERR_PARAM_INVALID);
    rknn_tensor_attr attr{};
    attr.index = index;
    check(rknn_query(ctx_, cmd, &attr, sizeof(attr)), "rknn_query(tensor attr)");
    TensorInfo info;
    info.index = attr.index;
    info.name.assign(attr.name, strnlen(attr.name, sizeof(attr.name)));
    info.dims = dims_of(attr.dims, attr.n_dims);
    info.fmt = attr.fmt;
    info.type = attr.type;
    info.qnt_type = attr.qnt_type;
    info.zp = attr.zp;
    info.scale = attr.scale;
    info.n_elems = attr.n_elems;
    info.size = attr.size;
    info.size_with_stride = attr.size_with_stride;
    return info;
}

TensorInfo LiteRuntime::input(uint32_t index, bool current, bool native) {
    const rknn_query_cmd cmd = native ? (current ? RKNN_QUERY_CURRENT_NATIVE_INPUT_ATTR : RKNN_QUERY_NATIVE_INPUT_ATTR)
                                      : (current ? RKNN_QUERY_CURRENT_INPUT_ATTR : RKNN_QUERY_INPUT_ATTR);
    return tensor(cmd, index, n_inputs_);
}

TensorInfo LiteRuntime::output(uint32_t index, bool current) {
    return tensor(current ? RKNN_QUERY_CURRENT_OUTPUT_ATTR : RKNN_QUERY_OUTPUT_ATTR, index, n_outputs_);
}

InputShapes LiteRuntime::input_shapes(uint32_t index) {
    std::lock_guard<std::mutex> lock(mutex_);
    check_open("rknn_query");
    if (index >= n_inputs_) throw CallError("input index " + std::to_string(index) + " out of range", RKNN_ERR_PARAM_INVALID);
    InputShapes shapes;
    // The extension query answers static models too (shape_number 0), where
    // INPUT_DYNAMIC_RANGE would log an error.
    rknn_openrknn_shape_range range{};
    range.index = index;
    check(rknn_query(ctx_, RKNN_QUERY_OPENRKNN_INPUT_SHAPE_RANGE, &range, sizeof(range)),
          "rknn_query(OPENRKNN_INPUT_SHAPE_RANGE)");
    if (range.n_dims > 0) {
        shapes.min = dims_of(range.min, range.n_dims);
        shapes.max = dims_of(range.max, range.n_dims);
        shapes.step = dims_of(range.step, range.n_dims);
    }
    if (range.shape_number == 0) return shapes;
    rknn_input_range sets{};
    sets.index = index;
    check(rknn_query(ctx_, RKNN_QUERY_INPUT_DYNAMIC_RANGE, &sets, sizeof(sets)), "rknn_query(INPUT_DYNAMIC_RANGE)");
    const uint32_t count = std::min<uint32_t>(sets.shape_number, RKNN_MAX_DYNAMIC_SHAPE_NUM);
    for (uint32_t k = 0; k < count; ++k) shapes.sets.push_back(dims_of(sets.dyn_range[k], sets.n_dims));
    return shapes;
}

void LiteRuntime::set_input_shapes(const std::vector<std::vector<uint32_t>>& dims) {
    std::lock_guard<std::mutex> lock(mutex_);
    check_open("rknn_set_input_shapes");
    if (dims.size() != n_inputs_)
        throw CallError("rknn_set_input_shapes: " + std::to_string(dims.size()) + " shapes for " +
                            std::to_string(n_inputs_) + " inputs",
                        RKNN_ERR_PARAM_INVALID);
    std::vector<rknn_tensor_attr> attrs(n_inputs_);
    for (uint32_t i = 0; i < n_inputs_; ++i) {
        attrs[i].index = i;
        check(rknn_query(ctx_, RKNN_QUERY_INPUT_ATTR, &attrs[i], sizeof(attrs[i])), "rknn_query(INPUT_ATTR)");
        if (dims[i].size() > RKNN_MAX_DIMS)
            throw CallError("rknn_set_input_shapes: input " + std::to_string(i) + " has more than " +
                                std::to_string(RKNN_MAX_DIMS) + " dims",
                            RKNN_ERR_PARAM_INVALID);
        attrs[i].n_dims = static_cast<uint32_t>(dims[i].size());
        std::copy(dims[i].begin(), dims[i].end(), attrs[i].dims);
    }
    check(rknn_set_input_shapes(ctx_, n_inputs_, attrs.data()), "rknn_set_input_shapes");
}

uint64_t LiteRuntime::run(const std::vector<InputView>& inputs, const std::vector<OutputView>& outputs) {
    std::lock_guard<std::mutex> lock(mutex_);
    check_open("rknn_run");
    std::vector<rknn_input> in(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
        if (inputs[i].size > std::numeric_limits<uint32_t>::max())
            throw CallError("rknn_inputs_set: input " + std::to_string(i) + " is larger than 4 GiB",
                            RKNN_ERR_PARAM_INVALID);
        in[i].index = static_cast<uint32_t>(i);
        in[i].buf = const_cast<void*>(inputs[i].data);
        in[i].size = static_cast<uint32_t>(inputs[i].size);
        in[i].pass_through = inputs[i].pass_through ? 1 : 0;
        in[i].type = inputs[i].type;
        in[i].fmt = inputs[i].fmt;
    }
    check(rknn_inputs_set(ctx_, static_cast<uint32_t>(in.size()), in.data()), "rknn_inputs_set");
    check(rknn_run(ctx_, nullptr), "rknn_run");
    // Written straight into the caller's arrays: no copy after the conversion.
    std::vector<rknn_output> out(outputs.size());
    for (size_t i = 0; i < outputs.size(); ++i) {
        out[i].want_float = 1;
        out[i].is_prealloc = 1;
        out[i].index = static_cast<uint32_t>(i);
        out[i].buf = outputs[i].data;
        out[i].size = static_cast<uint32_t>(std::min<size_t>(outputs[i].size, std::numeric_limits<uint32_t>::max()));
    }
    rknn_output_extend extend{};
    check(rknn_outputs_get(ctx_, static_cast<uint32_t>(out.size()), out.data(), &extend), "rknn_outputs_get");
    rknn_outputs_release(ctx_, static_cast<uint32_t>(out.size()), out.data());
    return extend.frame_id;
}

std::pair<std::string, std::string> LiteRuntime::sdk_version() {
    std::lock_guard<std::mutex> lock(mutex_);
    check_open("rknn_query");
    rknn_sdk_version version{};
    check(rknn_query(ctx_, RKNN_QUERY_SDK_VERSION, &version, sizeof(version)), "rknn_query(SDK_VERSION)");
    return {std::string(version.api_version, strnlen(version.api_version, sizeof(version.api_version))),
            std::string(version.drv_version, strnlen(version.drv_version, sizeof(version.drv_version)))};
}

int64_t LiteRuntime::last_run_us() {
    std::lock_guard<std::mutex> lock(mutex_);
    check_open("rknn_query");
    rknn_perf_run perf{};
    check(rknn_query(ctx_, RKNN_QUERY_PERF_RUN, &perf, sizeof(perf)), "rknn_query(PERF_RUN)");
    return perf.run_duration;
}

std::string LiteRuntime::perf_detail() {
    std::lock_guard<std::mutex> lock(mutex_);
    check_open("rknn_query");
    rknn_perf_detail detail{};
    check(rknn_query(ctx_, RKNN_QUERY_PERF_DETAIL, &detail, sizeof(detail)), "rknn_query(PERF_DETAIL)");
    if (detail.perf_data == nullptr) return std::string();
    return std::string(detail.perf_data, strnlen(detail.perf_data, static_cast<size_t>(detail.data_len)));
}

}  // namespace rknnlite
