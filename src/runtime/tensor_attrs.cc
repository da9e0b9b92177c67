#include "runtime/tensor_attrs.h"

#include <cstring>

#include "npu/prepared_op.h"
#include "runtime/native_tensor.h"

namespace rknn::runtime {

bool is_tensor_attr_query(int cmd) {
    switch (cmd) {
        case RKNN_QUERY_INPUT_ATTR:
        case RKNN_QUERY_OUTPUT_ATTR:
        case RKNN_QUERY_NATIVE_INPUT_ATTR:
        case RKNN_QUERY_NATIVE_OUTPUT_ATTR:
        case RKNN_QUERY_NATIVE_NHWC_INPUT_ATTR:
        case RKNN_QUERY_NATIVE_NHWC_OUTPUT_ATTR:
        case RKNN_QUERY_CURRENT_INPUT_ATTR:
        case RKNN_QUERY_CURRENT_OUTPUT_ATTR:
        case RKNN_QUERY_CURRENT_NATIVE_INPUT_ATTR:
        case RKNN_QUERY_CURRENT_NATIVE_OUTPUT_ATTR:
            return true;
        default:
            return false;
    }
}

rknn_tensor_type to_rknn_type(graph::DType dtype) {
    switch (dtype) {
        case graph::DType::kFloat32: return RKNN_TENSOR_FLOAT32;
        case graph::DType::kFloat16: return RKNN_TENSOR_FLOAT16;
        case graph::DType::kBFloat16: return RKNN_TENSOR_BFLOAT16;
        case graph::DType::kInt8: return RKNN_TENSOR_INT8;
        case graph::DType::kUInt8: return RKNN_TENSOR_UINT8;
        case graph::DType::kInt16: return RKNN_TENSOR_INT16;
        case graph::DType::kUInt16: return RKNN_TENSOR_UINT16;
        case graph::DType::kInt32: return RKNN_TENSOR_INT32;
        case graph::DType::kUInt32: return RKNN_TENSOR_UINT32;
        case graph::DType::kInt64: return RKNN_TENSOR_INT64;
        case graph::DType::kBool: return RKNN_TENSOR_BOOL;
        default: return RKNN_TENSOR_TYPE_MAX;
    }
}

uint32_t rknn_type_size(rknn_tensor_type type) {
    switch (type) {
        case RKNN_TENSOR_FLOAT32: case RKNN_TENSOR_INT32: case RKNN_TENSOR_UINT32: return 4;
        case RKNN_TENSOR_FLOAT16: case RKNN_TENSOR_INT16: case RKNN_TENSOR_UINT16: case RKNN_TENSOR_BFLOAT16: return 2;
        case RKNN_TENSOR_INT8: case RKNN_TENSOR_UINT8: case RKNN_TENSOR_BOOL: return 1;
        case RKNN_TENSOR_INT64: return 8;
        default: return 0;
    }
}

void fill_tensor_attr(const graph::Tensor& t, bool is_input, AttrKind kind, bool on_device, uint32_t packed_row_pixels,
                      const NativeForm& form, rknn_tensor_attr* attr) {
    const uint32_t index = attr->index;
    std::memset(attr, 0, sizeof(*attr));
    attr->index = index;
    std::strncpy(attr->name, t.name.c_str(), RKNN_MAX_NAME_LEN - 1);
    attr->type = to_rknn_type(t.dtype);
    uint64_t elems = 1;
    for (int64_t d : t.shape) elems *= static_cast<uint64_t>(d);
    attr->n_elems = static_cast<uint32_t>(elems);
    attr->size = static_cast<uint32_t>(elems * rknn_type_size(attr->type));
    attr->size_with_stride = attr->size;
    if (t.quant.is_quantized() && !t.quant.per_channel()) {
        attr->qnt_type = RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC;
        attr->zp = t.quant.zero_point();
        attr->scale = t.quant.scale();
    } else {
        attr->qnt_type = RKNN_TENSOR_QNT_NONE;
        attr->scale = 1.0f;
    }

    const bool four_d = t.shape.size() == 4;
    const auto set_dims = [attr](std::initializer_list<int64_t> dims) {
        attr->n_dims = 0;
        for (int64_t d : dims) attr->dims[attr->n_dims++] = static_cast<uint32_t>(d);
    };
    attr->fmt = RKNN_TENSOR_UNDEFINED;
    attr->n_dims = static_cast<uint32_t>(t.shape.size() < RKNN_MAX_DIMS ? t.shape.size() : RKNN_MAX_DIMS);
    for (uint32_t d = 0; d < attr->n_dims; ++d) attr->dims[d] = static_cast<uint32_t>(t.shape[d]);
    if (!four_d) {
        if (kind != AttrKind::kNative || !on_device) return;
        attr->size_with_stride = static_cast<uint32_t>(native_cube_dims(t, form).bytes);
        if (npu::matrix_rows(t.shape) > 0) {  // M rows of one pixel each: a real cube
            const CubeDims cube = native_cube_dims(t, form);
            attr->n_dims = 0;
            for (uint32_t d : {1u, cube.c1, cube.h, cube.w, cube.c2}) attr->dims[attr->n_dims++] = d;
            attr->fmt = RKNN_TENSOR_NC1HWC2;
            attr->w_stride = cube.w;
        }
        return;  // a row's cube holds its values first, padded to whole atoms
    }

    const int64_t n = t.shape[0], c = t.shape[1], h = t.shape[2], w = t.shape[3];
    const bool nhwc = kind == AttrKind::kNativeNhwc || (kind == AttrKind::kUser && is_input);
    if (kind != AttrKind::kUser && on_device && packed_row_pixels > 0) {
        set_dims({n, h, w, c});
        attr->fmt = RKNN_TENSOR_NHWC;
        attr->w_stride = packed_row_pixels;
        attr->size_with_stride = static_cast<uint32_t>(packed_image_bytes(t, form));
        if (packed_image_biased(form) && attr->type == RKNN_TENSOR_INT8) {  // the bytes are the value + 128
            attr->type = RKNN_TENSOR_UINT8;
            attr->zp += 128;
        }
    } else if (kind == AttrKind::kNative && on_device) {
        const CubeDims cube = native_cube_dims(t, form);
        set_dims({n, cube.c1, cube.h, cube.w, cube.c2});
        attr->fmt = RKNN_TENSOR_NC1HWC2;
        attr->w_stride = cube.w;
        attr->size_with_stride = static_cast<uint32_t>(cube.bytes);
    } else if (nhwc) {
        set_dims({n, h, w, c});
        attr->fmt = RKNN_TENSOR_NHWC;
        attr->w_stride = static_cast<uint32_t>(w);
    } else {
        set_dims({n, c, h, w});
        attr->fmt = RKNN_TENSOR_NCHW;
    }
    if (is_input && attr->w_stride == 0) attr->w_stride = static_cast<uint32_t>(w);
}

}  // namespace rknn::runtime
