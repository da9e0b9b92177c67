#include "graph/op_type.h"

#include <unordered_map>

namespace rknn::graph {
namespace {

constexpr const char* kNames[] = {
    "Unknown",
#define RKNN_OP_NAME(name) #name,
    RKNN_GRAPH_OP_TYPES(RKNN_OP_NAME)
#undef RKNN_OP_NAME
};

}  // namespace

const char* op_type_name(OpType type) {
    const auto index = static_cast<size_t>(type);
    return index < sizeof(kNames) / sizeof(kNames[0]) ? kNames[index] : "Unknown";
}

OpType op_type_from_name(const std::string& name) {
    static const std::unordered_map<std::string, OpType> by_name = [] {
        std::unordered_map<std::string, OpType> map;
        for (size_t i = 1; i < sizeof(kNames) / sizeof(kNames[0]); ++i) map.emplace(kNames[i], static_cast<OpType>(i));
        return map;
    }();
    auto it = by_name.find(name);
    return it == by_name.end() ? OpType::kUnknown : it->second;
}

}  // namespace rknn::graph
