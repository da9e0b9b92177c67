#include "gpu/opencl_device.h"

#include <vector>

#include "base/log.h"

namespace rknn::gpu {

namespace {

Status cl_failed(const std::string& what, cl_int code) {
    return Status(StatusCode::kUnavailable, "OpenCL: " + what + " failed: " + cl_error_text(code));
}

std::string platform_text(const ClApi& api, cl_platform_id platform, cl_platform_info what) {
    size_t size = 0;
    if (api.GetPlatformInfo(platform, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "?";
    std::string text(size, '\0');
    if (api.GetPlatformInfo(platform, what, size, text.data(), nullptr) != CL_SUCCESS) return "?";
    text.resize(text.find('\0') == std::string::npos ? text.size() : text.find('\0'));
    return text;
}

std::string device_text(const ClApi& api, cl_device_id device, cl_device_info what) {
    size_t size = 0;
    if (api.GetDeviceInfo(device, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
    std::string text(size, '\0');
    if (api.GetDeviceInfo(device, what, size, text.data(), nullptr) != CL_SUCCESS) return "";
    text.resize(text.find('\0') == std::string::npos ? text.size() : text.find('\0'));
    return text;
}

// The devices of `type` on `platform` (none when it has no such device).
std::vector<cl_device_id> devices_of(const ClApi& api, cl_platform_id platform, cl_device_type type) {
    cl_uint count = 0;
    if (api.GetDeviceIDs(platform, type, 0, nullptr, &count) != CL_SUCCESS || count == 0) return {};
    std::vector<cl_device_id> devices(count);
    if (api.GetDeviceIDs(platform, type, count, devices.data(), nullptr) != CL_SUCCESS) return {};
    return devices;
}

}  // namespace

StatusOr<std::unique_ptr<OpenClDevice>> OpenClDevice::open() {
    RKNN_ASSIGN_OR_RETURN(const ClApi* api, opencl_api());
    cl_uint count = 0;
    cl_int rc = api->GetPlatformIDs(0, nullptr, &count);
    if (rc != CL_SUCCESS || count == 0)
        return Status(StatusCode::kUnavailable, "OpenCL: no platform found (" + cl_error_text(rc) +
                                                    "; is an ICD such as pocl-opencl-icd installed?)");
    std::vector<cl_platform_id> platforms(count);
    rc = api->GetPlatformIDs(count, platforms.data(), nullptr);
    if (rc != CL_SUCCESS) return cl_failed("clGetPlatformIDs", rc);

    cl_platform_id platform = nullptr;
    cl_device_id device = nullptr;
    for (cl_platform_id p : platforms) {
        const std::vector<cl_device_id> gpus = devices_of(*api, p, CL_DEVICE_TYPE_GPU);
        if (gpus.empty()) continue;
        platform = p;
        device = gpus.front();
        break;
    }
    const bool gpu = device != nullptr;
    for (size_t i = 0; device == nullptr && i < platforms.size(); ++i) {
        const std::vector<cl_device_id> any = devices_of(*api, platforms[i], CL_DEVICE_TYPE_ALL);
        if (any.empty()) continue;
        platform = platforms[i];
        device = any.front();
    }
    if (device == nullptr) return Status(StatusCode::kUnavailable, "OpenCL: no device on any platform");

    std::unique_ptr<OpenClDevice> self(new OpenClDevice());
    self->api_ = api;
    self->device_ = device;
    self->description_ = platform_text(*api, platform, CL_PLATFORM_NAME) + " / " +
                         device_text(*api, device, CL_DEVICE_NAME) + (gpu ? " (GPU)" : " (not a GPU)");
    self->imports_dma_buf_ = device_text(*api, device, CL_DEVICE_EXTENSIONS).find("cl_arm_import_memory") !=
                             std::string::npos;
    if (!gpu) RKNN_LOGW("OpenCL: no GPU device; GPU custom ops run on %s", self->description_.c_str());
    const cl_context_properties properties[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(platform), 0};
    self->context_ = api->CreateContext(properties, 1, &device, nullptr, nullptr, &rc);
    if (self->context_ == nullptr) return cl_failed("clCreateContext on " + self->description_, rc);
    self->queue_ = api->CreateCommandQueue(self->context_, device, 0, &rc);
    if (self->queue_ == nullptr) return cl_failed("clCreateCommandQueue on " + self->description_, rc);
    RKNN_LOG_AT(3, "OpenCL: GPU custom ops run on %s%s", self->description_.c_str(),
                self->imports_dma_buf_ ? " (cl_arm_import_memory)" : "");
    return self;
}

OpenClDevice::~OpenClDevice() {
    if (queue_ != nullptr) api_->ReleaseCommandQueue(queue_);
    if (context_ != nullptr) api_->ReleaseContext(context_);
}

StatusOr<ClRef<cl_program>> OpenClDevice::build(const std::string& source, const std::string& options) const {
    const char* text = source.data();
    const size_t length = source.size();
    cl_int rc = CL_SUCCESS;
    cl_program raw = api_->CreateProgramWithSource(context_, 1, &text, &length, &rc);
    if (raw == nullptr) return cl_failed("clCreateProgramWithSource", rc);
    const ClApi* api = api_;
    ClRef<cl_program> program(raw, [api](cl_program p) { api->ReleaseProgram(p); });
    rc = api_->BuildProgram(raw, 1, &device_, options.c_str(), nullptr, nullptr);
    if (rc == CL_SUCCESS) return program;
    std::string log;
    size_t size = 0;
    if (api_->GetProgramBuildInfo(raw, device_, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) == CL_SUCCESS && size > 0) {
        log.resize(size);
        if (api_->GetProgramBuildInfo(raw, device_, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr) != CL_SUCCESS)
            log.clear();
        while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    }
    constexpr size_t kMaxLog = 4096;  // the first errors are the ones that help
    if (log.size() > kMaxLog) log = log.substr(0, kMaxLog) + "\n[build log cut]";
    return Status(StatusCode::kInvalidArgument, "OpenCL: clBuildProgram (options \"" + options + "\") failed: " +
                                                    cl_error_text(rc) + "; build log:\n" +
                                                    (log.empty() ? std::string("(empty)") : log));
}

StatusOr<ClRef<cl_kernel>> OpenClDevice::create_kernel(const ClRef<cl_program>& program, const std::string& name) const {
    cl_int rc = CL_SUCCESS;
    cl_kernel raw = api_->CreateKernel(program.get(), name.c_str(), &rc);
    if (raw == nullptr)
        return Status(StatusCode::kInvalidArgument,
                      "OpenCL: clCreateKernel(\"" + name + "\") failed: " + cl_error_text(rc));
    const ClApi* api = api_;
    return ClRef<cl_kernel>(raw, [api](cl_kernel k) { api->ReleaseKernel(k); });
}

StatusOr<ClRef<cl_mem>> OpenClDevice::create_buffer(uint64_t bytes) const {
    cl_int rc = CL_SUCCESS;
    cl_mem raw = api_->CreateBuffer(context_, CL_MEM_READ_WRITE, static_cast<size_t>(bytes), nullptr, &rc);
    if (raw == nullptr) return cl_failed("clCreateBuffer of " + std::to_string(bytes) + " bytes", rc);
    const ClApi* api = api_;
    return ClRef<cl_mem>(raw, [api](cl_mem m) { api->ReleaseMemObject(m); });
}

Status OpenClDevice::write(cl_mem buffer, uint64_t offset, uint64_t bytes, const void* from) const {
    if (bytes == 0) return Status::ok();
    const cl_int rc = api_->EnqueueWriteBuffer(queue_, buffer, CL_TRUE, static_cast<size_t>(offset),
                                               static_cast<size_t>(bytes), from, 0, nullptr, nullptr);
    return rc == CL_SUCCESS ? Status::ok() : cl_failed("clEnqueueWriteBuffer", rc);
}

Status OpenClDevice::read(cl_mem buffer, uint64_t offset, uint64_t bytes, void* to) const {
    if (bytes == 0) return Status::ok();
    const cl_int rc = api_->EnqueueReadBuffer(queue_, buffer, CL_TRUE, static_cast<size_t>(offset),
                                              static_cast<size_t>(bytes), to, 0, nullptr, nullptr);
    return rc == CL_SUCCESS ? Status::ok() : cl_failed("clEnqueueReadBuffer", rc);
}

}  // namespace rknn::gpu
