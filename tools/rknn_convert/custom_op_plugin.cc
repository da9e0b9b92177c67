#include "custom_op_plugin.h"

#include <dlfcn.h>

#include <cstring>
#include <memory>

#include "cpu/custom_kernels.h"
#include "rknn_custom_op.h"
#include "runtime/custom_ops.h"

namespace rknn::convert {

StatusOr<std::string> load_custom_op_plugin(const std::string& path) {
    // Plugins call the runtime's attribute query; the tool exports its own
    // copy (ENABLE_EXPORTS), which this reference keeps linked in.
    void (*volatile attr_query)(rknn_custom_op_context*, const char*, rknn_custom_op_attr*) = rknn_custom_op_get_op_attr;
    (void)attr_query;
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        const char* why = dlerror();
        return Status(StatusCode::kInvalidArgument,
                      "--custom-op-plugin " + path + " does not load: " + (why != nullptr ? why : "?"));
    }
    auto entry = reinterpret_cast<get_custom_op_func>(dlsym(handle, "get_rknn_custom_op"));
    const rknn_custom_op* op = entry != nullptr ? entry() : nullptr;
    if (op == nullptr) {
        dlclose(handle);
        return Status(StatusCode::kInvalidArgument,
                      "--custom-op-plugin " + path + ": " +
                          (entry == nullptr ? "no get_rknn_custom_op entry point" : "get_rknn_custom_op returned NULL"));
    }
    const rknn_custom_op callbacks = *op;
    const std::string type(callbacks.op_type, strnlen(callbacks.op_type, sizeof(callbacks.op_type)));
    const rknn_target_type kCpu = RKNN_TARGET_TYPE_CPU;
    std::string problem;
    if (type.empty()) problem = "the op has no op_type";
    else if (callbacks.compute == nullptr) problem = "the op has no compute";
    else if (callbacks.compute_native != nullptr) problem = "compute_native is reserved and must be NULL";
    else if (callbacks.version < 1) problem = "version " + std::to_string(callbacks.version) + " (1 or more)";
    else if (std::memcmp(&callbacks.target, &kCpu, sizeof(kCpu)) != 0)  // any int may be stored there
        problem = "the op is not a CPU op; calibration runs ops on the host, so give it a CPU version of the op";
    if (!problem.empty()) {
        dlclose(handle);
        return Status(StatusCode::kInvalidArgument, "--custom-op-plugin " + path + ": " + problem);
    }
    // Each call registers the op on the graph it runs in (init, compute,
    // destroy): the converter's passes change the graph between stages. The
    // kernel stays registered for the process (a second plugin of the type
    // replaces it), which suits the one conversion rknn_convert makes.
    cpu::register_custom_kernel(type, [callbacks](const graph::Graph& g, int32_t op_index,
                                                  std::vector<cpu::HostTensor>& values) -> Status {
        runtime::CustomOps ops(g, nullptr);
        RKNN_RETURN_IF_ERROR(ops.register_ops(&callbacks, 1, g));
        return ops.run(op_index, g, values);
    });
    return type;  // the library stays open: the kernel calls into it
}

}  // namespace rknn::convert
