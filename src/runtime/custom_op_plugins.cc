#include "runtime/custom_op_plugins.h"

#include <dirent.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "base/log.h"
#include "rknn_custom_op.h"

namespace rknn::runtime {

// These switches load code: in a setuid or setgid program they are ignored
// (secure_getenv), so that the caller's environment cannot pick the code.
bool custom_op_plugins_requested() {
    const char* value = secure_getenv("RKNN_LOAD_CSTOP_PLUGINS");
    return value != nullptr && std::strcmp(value, "0") != 0 && value[0] != '\0';
}

std::string custom_op_plugin_directory() {
    const char* dir = secure_getenv("RKNN_CSTOP_PLUGIN_DIR");
    if (dir != nullptr && dir[0] != '\0') return dir;
#if defined(__ANDROID__) && defined(__LP64__)
    return "/vendor/lib64";  // rknn_server's directories on Android (spec/plugins.md)
#elif defined(__ANDROID__)
    return "/vendor/lib";
#else
    return "/usr/lib/rknpu/op_plugins";
#endif
}

PluginLibraries::~PluginLibraries() {
    for (void* handle : handles_) dlclose(handle);
}

namespace {

bool is_plugin_name(const std::string& name) {
    const std::string prefix = RKNN_CSTOP_PLUGIN_PREFIX, suffix = ".so";
    return name.size() > prefix.size() + suffix.size() && name.compare(0, prefix.size(), prefix) == 0 &&
           name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

int PluginLibraries::load(const std::string& directory, CustomOps& ops, const graph::Graph& g) {
    DIR* dir = opendir(directory.c_str());
    if (dir == nullptr) {
        RKNN_LOGW("custom op plugins: cannot open the directory %s (%s)", directory.c_str(), std::strerror(errno));
        return 0;
    }
    std::vector<std::string> names;
    while (const dirent* entry = readdir(dir))
        if (is_plugin_name(entry->d_name)) names.push_back(entry->d_name);
    closedir(dir);
    std::sort(names.begin(), names.end());  // the same order on every run
    int registered = 0;
    for (const std::string& name : names) {
        const std::string path = directory + "/" + name;
        void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (handle == nullptr) {
            const char* why = dlerror();
            RKNN_LOGW("custom op plugin %s does not load: %s", path.c_str(), why != nullptr ? why : "?");
            continue;
        }
        auto entry = reinterpret_cast<get_custom_op_func>(dlsym(handle, "get_rknn_custom_op"));
        const rknn_custom_op* op = entry != nullptr ? entry() : nullptr;
        if (op == nullptr) {
            RKNN_LOGW("custom op plugin %s: %s", path.c_str(),
                      entry == nullptr ? "no get_rknn_custom_op entry point" : "get_rknn_custom_op returned NULL");
            dlclose(handle);
            continue;
        }
        const std::string type(op->op_type, strnlen(op->op_type, sizeof(op->op_type)));
        if (!ops.has_unregistered_type(type)) {
            RKNN_LOG_AT(3, "custom op plugin %s: the model has no unregistered op of type \"%s\"", path.c_str(),
                        type.c_str());
            dlclose(handle);
            continue;
        }
        const Status status = ops.register_ops(op, 1, g, /*from_plugin=*/true);
        if (!status.is_ok()) {
            RKNN_LOGW("custom op plugin %s: %s", path.c_str(), status.message().c_str());
            dlclose(handle);
            continue;
        }
        RKNN_LOG_AT(3, "custom op plugin %s registered \"%s\"", path.c_str(), type.c_str());
        handles_.push_back(handle);
        ++registered;
    }
    return registered;
}

}  // namespace rknn::runtime
