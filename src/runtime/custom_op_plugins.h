// Custom op plugins (librkcst_*.so, runtime-spec 7.6), loaded only on
// request: RKNN_LOAD_CSTOP_PLUGINS=1 in the environment. librkcst_ is the
// vendor's file-name convention; the vendor's runtime itself loads nothing
// (its board server does), so by default neither does this one.
//
// The directory is RKNN_CSTOP_PLUGIN_DIR, else /usr/lib/rknpu/op_plugins.
// Each librkcst_*.so there is opened and asked for its op
// (`get_rknn_custom_op`); an op whose type the model keeps and nobody has
// registered yet is registered. A plugin that does not open, lacks the entry
// point, or brings a type the model does not use is logged and skipped:
// rknn_run then names whatever type is still missing.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "runtime/custom_ops.h"

namespace rknn::runtime {

// Whether the environment asks for plugins.
bool custom_op_plugins_requested();
std::string custom_op_plugin_directory();

// The libraries a context opened; closed when it goes (after the ops'
// destroy callbacks, which live in them).
class PluginLibraries {
public:
    PluginLibraries() = default;
    ~PluginLibraries();
    PluginLibraries(const PluginLibraries&) = delete;
    PluginLibraries& operator=(const PluginLibraries&) = delete;

    // Opens the plugins in `directory` and registers their ops in `ops`
    // (for graph `g`); returns how many ops it registered.
    int load(const std::string& directory, CustomOps& ops, const graph::Graph& g);

private:
    std::vector<void*> handles_;
};

}  // namespace rknn::runtime
