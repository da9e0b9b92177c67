#include "runtime/custom_op_gpu.h"

#include <cstring>
#include <fstream>

#include "base/log.h"

#if RKNN_HAVE_OPENCL
#include "gpu/opencl_device.h"
#endif

namespace rknn::runtime {

namespace {

constexpr uint64_t kMaxSourceBytes = 64ull << 20;  // far above any real kernel; a bad size is caught early
constexpr size_t kMaxPath = 4096;

// The op's OpenCL C text: cl_kernel_source itself, or the file it names.
StatusOr<std::string> kernel_source(const rknn_custom_op& op) {
    if (op.cl_kernel_source == nullptr)
        return Status(StatusCode::kInvalidArgument, "cl_kernel_source is NULL (a GPU op needs its OpenCL source)");
    if (op.cl_source_size > 0) {
        if (op.cl_source_size > kMaxSourceBytes)
            return Status(StatusCode::kInvalidArgument,
                          "cl_source_size " + std::to_string(op.cl_source_size) + " is over 64 MiB");
        return std::string(op.cl_kernel_source, static_cast<size_t>(op.cl_source_size));
    }
    const size_t length = strnlen(op.cl_kernel_source, kMaxPath);
    if (length == kMaxPath)
        return Status(StatusCode::kInvalidArgument,
                      "cl_kernel_source (a path, as cl_source_size is 0) has no NUL in its first 4096 bytes");
    const std::string path(op.cl_kernel_source, length);
    std::ifstream file(path, std::ios::binary);
    if (!file) return Status(StatusCode::kInvalidArgument, "OpenCL kernel file not found: " + path);
    std::string text;
    char chunk[65536];
    while (file.read(chunk, sizeof(chunk)) || file.gcount() > 0) {
        text.append(chunk, static_cast<size_t>(file.gcount()));
        if (text.size() > kMaxSourceBytes)
            return Status(StatusCode::kInvalidArgument, "OpenCL kernel file " + path + " is over 64 MiB");
    }
    if (file.bad()) return Status(StatusCode::kInvalidArgument, "OpenCL kernel file " + path + " does not read");
    if (text.empty()) return Status(StatusCode::kInvalidArgument, "OpenCL kernel file " + path + " is empty");
    return text;
}

}  // namespace

#if RKNN_HAVE_OPENCL

class GpuDevice {
public:
    std::unique_ptr<gpu::OpenClDevice> cl;
};

class GpuProgram {
public:
    std::shared_ptr<GpuDevice> device;
    gpu::ClRef<cl_program> program;
    std::string kernel_name;
};

struct GpuNode::State {
    struct Range {
        uint64_t offset, bytes;
    };
    std::shared_ptr<GpuProgram> program;
    gpu::ClRef<cl_kernel> kernel;
    gpu::ClRef<cl_mem> mirror;  // null where the op imports the dma-buf
    uint64_t mirror_bytes = 0;
    std::vector<Range> inputs, outputs;  // as bind saw them: a callback may rewrite the descriptors
};

StatusOr<std::shared_ptr<GpuDevice>> open_gpu_device() {
    auto device = std::make_shared<GpuDevice>();
    RKNN_ASSIGN_OR_RETURN(device->cl, gpu::OpenClDevice::open());
    return device;
}

std::string gpu_device_description(const GpuDevice& device) { return device.cl->description(); }

StatusOr<std::shared_ptr<GpuProgram>> build_gpu_program(const std::shared_ptr<GpuDevice>& device, const rknn_custom_op& op) {
    RKNN_ASSIGN_OR_RETURN(const std::string source, kernel_source(op));
    auto program = std::make_shared<GpuProgram>();
    program->device = device;
    program->kernel_name = op.cl_kernel_name;
    RKNN_ASSIGN_OR_RETURN(program->program, device->cl->build(source, op.cl_build_options));
    // The kernel is made per node; one here proves the name now, at registration.
    RKNN_ASSIGN_OR_RETURN(gpu::ClRef<cl_kernel> probe, device->cl->create_kernel(program->program, program->kernel_name));
    (void)probe;
    return program;
}

GpuNode::GpuNode(std::unique_ptr<State> state) : state_(std::move(state)) {}
GpuNode::~GpuNode() = default;

StatusOr<std::unique_ptr<GpuNode>> GpuNode::create(std::shared_ptr<GpuProgram> program) {
    auto state = std::make_unique<State>();
    RKNN_ASSIGN_OR_RETURN(state->kernel, program->device->cl->create_kernel(program->program, program->kernel_name));
    state->program = std::move(program);
    return std::unique_ptr<GpuNode>(new GpuNode(std::move(state)));
}

void GpuNode::fill(rknn_gpu_op_context* gpu_ctx) const {
    const gpu::OpenClDevice& cl = *state_->program->device->cl;
    gpu_ctx->cl_context = cl.context();
    gpu_ctx->cl_command_queue = cl.queue();
    gpu_ctx->cl_kernel = state_->kernel.get();
}

Status GpuNode::bind(uint64_t bytes, bool dma_buf, std::vector<rknn_custom_op_tensor>& inputs,
                     std::vector<rknn_custom_op_tensor>& outputs) {
    const gpu::OpenClDevice& cl = *state_->program->device->cl;
    const auto ranges = [](const std::vector<rknn_custom_op_tensor>& tensors) {
        std::vector<State::Range> r;
        for (const rknn_custom_op_tensor& t : tensors) r.push_back({static_cast<uint64_t>(t.mem.offset), t.mem.size});
        return r;
    };
    state_->inputs = ranges(inputs);
    state_->outputs = ranges(outputs);
    if (cl.imports_dma_buf() && dma_buf) {  // the op imports mem.fd itself
        state_->mirror.reset();
        return Status::ok();
    }
    if (state_->mirror == nullptr || state_->mirror_bytes < bytes) {
        state_->mirror.reset();
        RKNN_ASSIGN_OR_RETURN(state_->mirror, cl.create_buffer(bytes));
        state_->mirror_bytes = bytes;
    }
    for (auto* list : {&inputs, &outputs})
        for (rknn_custom_op_tensor& tensor : *list) tensor.mem.priv_data = state_->mirror.get();
    return Status::ok();
}

bool GpuNode::imports() const { return state_->mirror == nullptr; }

Status GpuNode::upload(const uint8_t* base) const {
    if (state_->mirror == nullptr) return Status::ok();
    const gpu::OpenClDevice& cl = *state_->program->device->cl;
    for (const State::Range& r : state_->inputs)
        RKNN_RETURN_IF_ERROR(cl.write(state_->mirror.get(), r.offset, r.bytes, base + r.offset));
    return Status::ok();
}

Status GpuNode::download(uint8_t* base) const {
    if (state_->mirror == nullptr) return Status::ok();
    const gpu::OpenClDevice& cl = *state_->program->device->cl;
    for (const State::Range& r : state_->outputs)
        RKNN_RETURN_IF_ERROR(cl.read(state_->mirror.get(), r.offset, r.bytes, base + r.offset));
    return Status::ok();
}

#else  // built without the OpenCL headers

class GpuDevice {};
class GpuProgram {};
struct GpuNode::State {};

namespace {
Status no_opencl() {
    return Status(StatusCode::kUnimplemented,
                  "GPU custom ops are not implemented in this build (it was built without the OpenCL headers, "
                  "Debian's opencl-c-headers)");
}
}  // namespace

StatusOr<std::shared_ptr<GpuDevice>> open_gpu_device() { return no_opencl(); }
std::string gpu_device_description(const GpuDevice&) { return "none"; }
StatusOr<std::shared_ptr<GpuProgram>> build_gpu_program(const std::shared_ptr<GpuDevice>&, const rknn_custom_op& op) {
    RKNN_RETURN_IF_ERROR(kernel_source(op).status());
    return no_opencl();
}
GpuNode::GpuNode(std::unique_ptr<State> state) : state_(std::move(state)) {}
GpuNode::~GpuNode() = default;
StatusOr<std::unique_ptr<GpuNode>> GpuNode::create(std::shared_ptr<GpuProgram>) { return no_opencl(); }
void GpuNode::fill(rknn_gpu_op_context*) const {}
Status GpuNode::bind(uint64_t, bool, std::vector<rknn_custom_op_tensor>&, std::vector<rknn_custom_op_tensor>&) {
    return no_opencl();
}
bool GpuNode::imports() const { return false; }
Status GpuNode::upload(const uint8_t*) const { return no_opencl(); }
Status GpuNode::download(uint8_t*) const { return no_opencl(); }

#endif

}  // namespace rknn::runtime
