#include "gpu/opencl_api.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <vector>

#include "base/log.h"

namespace rknn::gpu {

namespace {

// Where the vendor's runtime looks on Linux, after the ICD loader's SONAME
// (Debian's ocl-icd, which finds PoCL, NVIDIA and the others through
// /etc/OpenCL/vendors) and before libmali, which boards without an ICD
// loader ship.
std::vector<std::string> candidates() {
    std::vector<std::string> names;
    // It loads code, so a setuid program ignores it (secure_getenv).
    const char* chosen = secure_getenv("RKNN_OPENCL_LIBRARY");
    if (chosen != nullptr && *chosen != '\0') names.emplace_back(chosen);
    for (const char* name : {"libOpenCL.so.1", "libOpenCL.so", "/usr/lib/aarch64-linux-gnu/libOpenCL.so",
                             "/usr/lib/arm-linux-gnueabihf/libOpenCL.so", "libmali.so"})
        names.emplace_back(name);
    return names;
}

template <typename Fn>
bool resolve(void* library, const char* name, Fn* out, std::string* missing) {
    void* address = dlsym(library, name);
    if (address == nullptr) {
        *missing += (missing->empty() ? "" : ", ") + std::string(name);
        return false;
    }
    *out = reinterpret_cast<Fn>(address);
    return true;
}

struct Loaded {
    Status status = Status::ok();
    ClApi api{};
};

Loaded load() {
    Loaded loaded;
    std::string tried;
    for (const std::string& name : candidates()) {
        void* library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (library == nullptr) {
            const char* why = dlerror();
            tried += "\n  " + name + ": " + (why != nullptr ? why : "not found");
            continue;
        }
        ClApi& api = loaded.api;
        std::string missing;
        bool all = true;
#define RKNN_RESOLVE_CL(fn) all = resolve(library, "cl" #fn, &api.fn, &missing) && all
        RKNN_RESOLVE_CL(GetPlatformIDs);
        RKNN_RESOLVE_CL(GetPlatformInfo);
        RKNN_RESOLVE_CL(GetDeviceIDs);
        RKNN_RESOLVE_CL(GetDeviceInfo);
        RKNN_RESOLVE_CL(CreateContext);
        RKNN_RESOLVE_CL(ReleaseContext);
        RKNN_RESOLVE_CL(CreateCommandQueue);
        RKNN_RESOLVE_CL(ReleaseCommandQueue);
        RKNN_RESOLVE_CL(CreateProgramWithSource);
        RKNN_RESOLVE_CL(BuildProgram);
        RKNN_RESOLVE_CL(GetProgramBuildInfo);
        RKNN_RESOLVE_CL(ReleaseProgram);
        RKNN_RESOLVE_CL(CreateKernel);
        RKNN_RESOLVE_CL(ReleaseKernel);
        RKNN_RESOLVE_CL(CreateBuffer);
        RKNN_RESOLVE_CL(ReleaseMemObject);
        RKNN_RESOLVE_CL(EnqueueWriteBuffer);
        RKNN_RESOLVE_CL(EnqueueReadBuffer);
        RKNN_RESOLVE_CL(Finish);
#undef RKNN_RESOLVE_CL
        if (all) {
            RKNN_LOG_AT(3, "OpenCL: loaded %s", name.c_str());
            return loaded;
        }
        tried += "\n  " + name + ": lacks " + missing;
        dlclose(library);
        loaded.api = ClApi{};
    }
    loaded.status = Status(StatusCode::kUnavailable, "no usable OpenCL library; tried:" + tried);
    return loaded;
}

}  // namespace

StatusOr<const ClApi*> opencl_api() {
    static Loaded* loaded = nullptr;  // never freed: the library stays loaded
    static std::once_flag once;
    std::call_once(once, [] { loaded = new Loaded(load()); });
    if (!loaded->status.is_ok()) return loaded->status;
    return &loaded->api;
}

std::string cl_error_text(cl_int code) {
    const char* name = nullptr;
    switch (code) {
    case CL_SUCCESS: name = "CL_SUCCESS"; break;
    case CL_DEVICE_NOT_FOUND: name = "CL_DEVICE_NOT_FOUND"; break;
    case CL_DEVICE_NOT_AVAILABLE: name = "CL_DEVICE_NOT_AVAILABLE"; break;
    case CL_COMPILER_NOT_AVAILABLE: name = "CL_COMPILER_NOT_AVAILABLE"; break;
    case CL_MEM_OBJECT_ALLOCATION_FAILURE: name = "CL_MEM_OBJECT_ALLOCATION_FAILURE"; break;
    case CL_OUT_OF_RESOURCES: name = "CL_OUT_OF_RESOURCES"; break;
    case CL_OUT_OF_HOST_MEMORY: name = "CL_OUT_OF_HOST_MEMORY"; break;
    case CL_BUILD_PROGRAM_FAILURE: name = "CL_BUILD_PROGRAM_FAILURE"; break;
    case CL_INVALID_VALUE: name = "CL_INVALID_VALUE"; break;
    case CL_INVALID_PLATFORM: name = "CL_INVALID_PLATFORM"; break;
    case CL_INVALID_DEVICE: name = "CL_INVALID_DEVICE"; break;
    case CL_INVALID_CONTEXT: name = "CL_INVALID_CONTEXT"; break;
    case CL_INVALID_COMMAND_QUEUE: name = "CL_INVALID_COMMAND_QUEUE"; break;
    case CL_INVALID_MEM_OBJECT: name = "CL_INVALID_MEM_OBJECT"; break;
    case CL_INVALID_BUILD_OPTIONS: name = "CL_INVALID_BUILD_OPTIONS"; break;
    case CL_INVALID_PROGRAM: name = "CL_INVALID_PROGRAM"; break;
    case CL_INVALID_PROGRAM_EXECUTABLE: name = "CL_INVALID_PROGRAM_EXECUTABLE"; break;
    case CL_INVALID_KERNEL_NAME: name = "CL_INVALID_KERNEL_NAME"; break;
    case CL_INVALID_KERNEL: name = "CL_INVALID_KERNEL"; break;
    case CL_INVALID_KERNEL_ARGS: name = "CL_INVALID_KERNEL_ARGS"; break;
    case CL_INVALID_WORK_GROUP_SIZE: name = "CL_INVALID_WORK_GROUP_SIZE"; break;
    case CL_INVALID_GLOBAL_WORK_SIZE: name = "CL_INVALID_GLOBAL_WORK_SIZE"; break;
    case CL_INVALID_BUFFER_SIZE: name = "CL_INVALID_BUFFER_SIZE"; break;
    case -1001: name = "CL_PLATFORM_NOT_FOUND_KHR"; break;  // the ICD loader found no platform
    default: break;
    }
    return std::string(name != nullptr ? name : "OpenCL error") + " (" + std::to_string(code) + ")";
}

}  // namespace rknn::gpu
