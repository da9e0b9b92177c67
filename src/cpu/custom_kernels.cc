#include "cpu/custom_kernels.h"

#include <map>
#include <mutex>

namespace rknn::cpu {

namespace {

struct Registry {
    std::mutex mutex;
    std::map<std::string, CustomKernel> kernels;
};

Registry& registry() {
    static Registry* r = new Registry();  // never destroyed: kernels may run during static teardown
    return *r;
}

}  // namespace

void register_custom_kernel(const std::string& type, CustomKernel kernel) {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.kernels[type] = std::move(kernel);
}

const CustomKernel* find_custom_kernel(const std::string& type) {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    const auto it = r.kernels.find(type);
    return it == r.kernels.end() ? nullptr : &it->second;  // map nodes stay put
}

}  // namespace rknn::cpu
