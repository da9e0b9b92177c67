// The OpenCL entry points the runtime calls, resolved from the ICD loader
// (or a vendor's libOpenCL / libmali) with dlopen at first use. librknnrt
// has no link-time dependency on OpenCL, as the vendor's has none: a host
// without it loses GPU custom ops and nothing else.
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include <string>

#include "base/status.h"

namespace rknn::gpu {

// decltype of the declarations in CL/cl.h: the header gives the types, the
// loaded library the addresses.
struct ClApi {
    decltype(&::clGetPlatformIDs) GetPlatformIDs;
    decltype(&::clGetPlatformInfo) GetPlatformInfo;
    decltype(&::clGetDeviceIDs) GetDeviceIDs;
    decltype(&::clGetDeviceInfo) GetDeviceInfo;
    decltype(&::clCreateContext) CreateContext;
    decltype(&::clReleaseContext) ReleaseContext;
    decltype(&::clCreateCommandQueue) CreateCommandQueue;
    decltype(&::clReleaseCommandQueue) ReleaseCommandQueue;
    decltype(&::clCreateProgramWithSource) CreateProgramWithSource;
    decltype(&::clBuildProgram) BuildProgram;
    decltype(&::clGetProgramBuildInfo) GetProgramBuildInfo;
    decltype(&::clReleaseProgram) ReleaseProgram;
    decltype(&::clCreateKernel) CreateKernel;
    decltype(&::clReleaseKernel) ReleaseKernel;
    decltype(&::clCreateBuffer) CreateBuffer;
    decltype(&::clReleaseMemObject) ReleaseMemObject;
    decltype(&::clEnqueueWriteBuffer) EnqueueWriteBuffer;
    decltype(&::clEnqueueReadBuffer) EnqueueReadBuffer;
    decltype(&::clFinish) Finish;
};

// The process's table. The library is looked for once: RKNN_OPENCL_LIBRARY
// if set, then the usual names; an error lists what was tried and why each
// failed. The library stays loaded for the life of the process (drivers do
// not survive dlclose well).
StatusOr<const ClApi*> opencl_api();

// "CL_BUILD_PROGRAM_FAILURE (-11)" and the like, for error messages.
std::string cl_error_text(cl_int code);

}  // namespace rknn::gpu
