#include "runtime/io_convert.h"

#include <cstring>

#include "cpu/convert.h"
#include "cpu/graph_executor.h"
#include "layout/preprocess.h"

namespace rknn::runtime {
namespace {

// The dtype of an accepted input type (kUndefined otherwise).
graph::DType input_dtype(int type) {
    switch (type) {
        case RKNN_TENSOR_FLOAT32: return graph::DType::kFloat32;
        case RKNN_TENSOR_FLOAT16: return graph::DType::kFloat16;
        case RKNN_TENSOR_INT8: return graph::DType::kInt8;
        case RKNN_TENSOR_UINT8: return graph::DType::kUInt8;
        case RKNN_TENSOR_INT16: return graph::DType::kInt16;
        default: return graph::DType::kUndefined;
    }
}

// Between NHWC and NCHW for elements of any size: `nchw` is the NCHW shape.
void permute_4d(const uint8_t* src, uint8_t* dst, const graph::Shape& nchw, size_t elem, bool to_nchw) {
    const int64_t n = nchw[0], c = nchw[1], h = nchw[2], w = nchw[3];
    for (int64_t b = 0; b < n; ++b)
        for (int64_t y = 0; y < h; ++y)
            for (int64_t x = 0; x < w; ++x)
                for (int64_t ch = 0; ch < c; ++ch) {
                    const int64_t nhwc_at = ((b * h + y) * w + x) * c + ch;
                    const int64_t nchw_at = ((b * c + ch) * h + y) * w + x;
                    const int64_t from = to_nchw ? nhwc_at : nchw_at, to = to_nchw ? nchw_at : nhwc_at;
                    std::memcpy(dst + static_cast<size_t>(to) * elem, src + static_cast<size_t>(from) * elem, elem);
                }
}

}  // namespace

void nhwc_to_nchw(const uint8_t* src, uint8_t* dst, const graph::Shape& nchw, size_t elem) {
    permute_4d(src, dst, nchw, elem, true);
}

void nchw_to_nhwc(const uint8_t* src, uint8_t* dst, const graph::Shape& nchw, size_t elem) {
    permute_4d(src, dst, nchw, elem, false);
}

StatusOr<cpu::HostTensor> convert_input(const rknn_input& input, const graph::Tensor& declared,
                                        const graph::InputPreprocess* pre) {
    const int raw_type = static_cast<int>(input.type);
    const int raw_fmt = static_cast<int>(input.fmt);
    const graph::DType dtype = input_dtype(raw_type);
    if (dtype == graph::DType::kUndefined)
        return make_status(StatusCode::kInputInvalid, "input %u: type %d is not FLOAT32, FLOAT16, INT8, UINT8 or INT16",
                           input.index, raw_type);
    if (raw_fmt != RKNN_TENSOR_NCHW && raw_fmt != RKNN_TENSOR_NHWC && raw_fmt != RKNN_TENSOR_UNDEFINED)
        return make_status(StatusCode::kInputInvalid, "input %u: fmt %d is not NCHW, NHWC or UNDEFINED", input.index,
                           raw_fmt);
    const int64_t elems = graph::num_elements(declared.shape);
    const uint64_t expected = static_cast<uint64_t>(elems) * graph::dtype_size(dtype);
    if (input.size != expected)
        return make_status(StatusCode::kInputInvalid, "input %u: size %u, expected %llu (%lld elements of %s)",
                           input.index, input.size, static_cast<unsigned long long>(expected),
                           static_cast<long long>(elems), graph::dtype_name(dtype));

    const bool four_d = declared.shape.size() == 4;
    const bool nhwc = four_d && raw_fmt == RKNN_TENSOR_NHWC;
    const graph::Shape& s = declared.shape;
    const graph::Shape user_shape = nhwc ? graph::Shape{s[0], s[2], s[3], s[1]} : s;
    const cpu::HostTensor user = cpu::HostTensor::borrow(dtype, user_shape, input.buf);

    cpu::HostTensor value = cpu::make_tensor_like(declared, declared.shape);
    if (dtype == declared.dtype) {
        // Already in the model's form: only the layout may change.
        if (nhwc) {
            nhwc_to_nchw(static_cast<const uint8_t*>(input.buf), static_cast<uint8_t*>(value.raw()), s,
                         graph::dtype_size(dtype));
        } else {
            std::memcpy(value.raw(), input.buf, value.byte_size());
        }
        return value;
    }
    cpu::HostTensor as_float;
    if (four_d) {
        graph::InputPreprocess layout_only;
        const graph::InputPreprocess& p = pre != nullptr ? *pre : layout_only;
        graph::InputPreprocess with_layout = p;
        with_layout.user_layout = nhwc ? graph::Layout::kNHWC : graph::Layout::kNCHW;
        RKNN_ASSIGN_OR_RETURN(as_float, layout::apply_preprocess(user, with_layout, declared.shape));
    } else {
        as_float = cpu::to_float32(user);
    }
    RKNN_RETURN_IF_ERROR(cpu::from_float32(as_float, &value));
    return value;
}

size_t output_bytes(const graph::Tensor& declared, bool want_float) {
    const size_t elems = static_cast<size_t>(graph::num_elements(declared.shape));
    return elems * (want_float ? sizeof(float) : graph::dtype_size(declared.dtype));
}

Status convert_output(const cpu::HostTensor& value, bool want_float, void* dst, size_t dst_bytes) {
    if (!want_float || value.dtype() == graph::DType::kFloat32) {
        if (value.byte_size() > dst_bytes) return RKNN_INTERNAL_ERROR("output buffer too small");
        std::memcpy(dst, value.raw(), value.byte_size());
        return Status::ok();
    }
    const cpu::HostTensor as_float = cpu::to_float32(value);
    if (as_float.byte_size() > dst_bytes) return RKNN_INTERNAL_ERROR("output buffer too small");
    std::memcpy(dst, as_float.raw(), as_float.byte_size());
    return Status::ok();
}

}  // namespace rknn::runtime
