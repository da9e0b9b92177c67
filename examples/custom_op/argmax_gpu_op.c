/*
 * A GPU custom op: ArgMax over the channels of a float32 NCHW tensor, as an
 * OpenCL kernel, for models converted with `--custom-op ArgMax` (the SDK's
 * segmentation demo does this). The runtime builds the kernel below and
 * hands its cl_context, command queue and cl_kernel in op_ctx->gpu_ctx.
 *
 * The tensors: on a device with cl_arm_import_memory (Mali), the op wraps
 * their dma-buf (mem.fd) with clImportMemoryARM, as the vendor's demo does;
 * elsewhere (PoCL, NVIDIA, ...) OpenRKNN gives a cl_mem of the same buffer in
 * mem.priv_data. Either way a tensor starts mem.offset bytes in.
 *
 * Compiled into rknn_custom_gpu_op_demo and, as librkcst_argmax.so, into a
 * plugin. C99, against include/ and the OpenCL headers.
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <stdio.h>
#include <string.h>

#include "rknn_custom_op.h"

/* One work item per pixel: the index of the largest of its channels (the
 * first on a tie, as ONNX ArgMax), written as the model's int64. */
static const char kArgmaxSource[] =
    "__kernel void argmax_channels(__global const float* in, uint in_first,\n"
    "                              __global long* out, uint out_first,\n"
    "                              uint channels, uint plane) {\n"
    "    const uint p = get_global_id(0);\n"
    "    if (p >= plane) return;\n"
    "    const __global float* x = in + in_first + p;\n"
    "    float best = x[0];\n"
    "    long best_c = 0;\n"
    "    for (uint c = 1; c < channels; ++c) {\n"
    "        const float v = x[(size_t)c * plane];\n"
    "        if (v > best) { best = v; best_c = c; }\n"
    "    }\n"
    "    out[out_first + p] = best_c;\n"
    "}\n";

typedef cl_mem (*import_memory_fn)(cl_context, cl_mem_flags, const cl_import_properties_arm*, void*, size_t, cl_int*);

/* clImportMemoryARM of the context's platform, or NULL without the extension. */
static import_memory_fn find_import(cl_context context) {
    cl_device_id device;
    cl_platform_id platform;
    char extensions[4096] = {0};
    if (clGetContextInfo(context, CL_CONTEXT_DEVICES, sizeof(device), &device, NULL) != CL_SUCCESS) return NULL;
    if (clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, sizeof(extensions) - 1, extensions, NULL) != CL_SUCCESS ||
        strstr(extensions, "cl_arm_import_memory") == NULL)
        return NULL;
    if (clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof(platform), &platform, NULL) != CL_SUCCESS) return NULL;
    return (import_memory_fn)clGetExtensionFunctionAddressForPlatform(platform, "clImportMemoryARM");
}

/* The tensor's buffer: the runtime's cl_mem (not ours to release) or the
 * import of its dma-buf (released by the caller: *owned set). */
static cl_mem tensor_buffer(cl_context context, rknn_custom_op_tensor* t, int* owned) {
    import_memory_fn import_memory;
    const cl_import_properties_arm properties[] = {CL_IMPORT_TYPE_ARM, CL_IMPORT_TYPE_DMA_BUF_ARM, 0};
    cl_int err = CL_SUCCESS;
    cl_mem mem;
    *owned = 0;
    if (t->mem.priv_data != NULL) return (cl_mem)t->mem.priv_data;
    import_memory = find_import(context);
    if (import_memory == NULL) return NULL;
    mem = import_memory(context, CL_MEM_READ_WRITE, properties, &t->mem.fd, (size_t)t->mem.offset + t->mem.size, &err);
    *owned = mem != NULL;
    return mem;
}

static int argmax_init(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs, uint32_t n_inputs,
                       rknn_custom_op_tensor* outputs, uint32_t n_outputs) {
    (void)inputs;
    (void)outputs;
    if (op_ctx->gpu_ctx.cl_context == NULL || op_ctx->gpu_ctx.cl_kernel == NULL) return -1;
    return n_inputs == 1 && n_outputs == 1 ? 0 : -1;
}

static int argmax_compute(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs, uint32_t n_inputs,
                          rknn_custom_op_tensor* outputs, uint32_t n_outputs) {
    cl_context context = (cl_context)op_ctx->gpu_ctx.cl_context;
    cl_command_queue queue = (cl_command_queue)op_ctx->gpu_ctx.cl_command_queue;
    cl_kernel kernel = (cl_kernel)op_ctx->gpu_ctx.cl_kernel;
    rknn_custom_op_tensor* in = &inputs[0];
    rknn_custom_op_tensor* out = &outputs[0];
    cl_uint in_first, out_first, channels, plane;
    size_t global;
    int in_owned = 0, out_owned = 0;
    cl_mem in_mem, out_mem;
    cl_int err = CL_SUCCESS;
    if (n_inputs != 1 || n_outputs != 1 || in->attr.type != RKNN_TENSOR_FLOAT32 || out->attr.type != RKNN_TENSOR_INT64 ||
        in->attr.n_dims != 4 || in->attr.dims[1] == 0)
        return -1;
    channels = in->attr.dims[1];
    plane = in->attr.dims[2] * in->attr.dims[3];
    if (out->attr.n_elems != plane * in->attr.dims[0] || in->attr.dims[0] != 1) return -1;
    in_first = (cl_uint)(in->mem.offset / (int32_t)sizeof(float));
    out_first = (cl_uint)(out->mem.offset / (int32_t)sizeof(cl_long));
    in_mem = tensor_buffer(context, in, &in_owned);
    out_mem = tensor_buffer(context, out, &out_owned);
    if (in_mem == NULL || out_mem == NULL) {
        fprintf(stderr, "argmax: no OpenCL buffer for the tensors (no priv_data, no cl_arm_import_memory)\n");
        err = CL_INVALID_MEM_OBJECT;
    }
    if (err == CL_SUCCESS) err = clSetKernelArg(kernel, 0, sizeof(cl_mem), &in_mem);
    if (err == CL_SUCCESS) err = clSetKernelArg(kernel, 1, sizeof(cl_uint), &in_first);
    if (err == CL_SUCCESS) err = clSetKernelArg(kernel, 2, sizeof(cl_mem), &out_mem);
    if (err == CL_SUCCESS) err = clSetKernelArg(kernel, 3, sizeof(cl_uint), &out_first);
    if (err == CL_SUCCESS) err = clSetKernelArg(kernel, 4, sizeof(cl_uint), &channels);
    if (err == CL_SUCCESS) err = clSetKernelArg(kernel, 5, sizeof(cl_uint), &plane);
    global = plane;
    if (err == CL_SUCCESS) err = clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 0, NULL, NULL);
    if (err == CL_SUCCESS) err = clFinish(queue); /* the runtime reads the output when compute returns */
    if (in_owned) clReleaseMemObject(in_mem);
    if (out_owned) clReleaseMemObject(out_mem);
    if (err != CL_SUCCESS) fprintf(stderr, "argmax: OpenCL error %d\n", err);
    return err == CL_SUCCESS ? 0 : -1;
}

RKNN_CUSTOM_OP_EXPORT rknn_custom_op* get_rknn_custom_op(void) {
    static rknn_custom_op op;
    memset(&op, 0, sizeof(op));
    op.version = 1;
    op.target = RKNN_TARGET_TYPE_GPU;
    snprintf(op.op_type, sizeof(op.op_type), "%s", "ArgMax");
    snprintf(op.cl_kernel_name, sizeof(op.cl_kernel_name), "%s", "argmax_channels");
    op.cl_kernel_source = (char*)kArgmaxSource;
    op.cl_source_size = sizeof(kArgmaxSource) - 1;
    op.init = argmax_init;
    op.compute = argmax_compute;
    return &op;
}
