// Reading and writing OpenRKNN model files (docs/model-format.md).
//
// Model files are untrusted input. The loader checks the FlatBuffer with the
// FlatBuffers verifier, then every index, offset, size, shape and op arity,
// before anything uses the graph; any problem is a kModelInvalid status with a
// message naming what is wrong. Weights are not copied: constant tensors view
// the file's data section, kept alive by the graph's buffers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"

namespace rknn::model {

constexpr uint32_t kSchemaVersionMajor = 1;
constexpr uint32_t kSchemaVersionMinor = 2;  // 1: input_ranges; 2: batch
constexpr size_t kDataAlignment = 64;
constexpr char kFileIdentifier[] = "ORKN";

// The whole file for `graph`.
StatusOr<std::vector<uint8_t>> serialize_model(const graph::Graph& graph);
Status write_model_file(const graph::Graph& graph, const std::string& path);

enum class BufferOwnership {
    kCopy,    // copy the bytes (the caller may free them after loading)
    kBorrow,  // use them in place; the caller keeps them alive and unchanged
};

// `master`: the graph of the model whose weights a model converted with
// --remove-weights uses (its constants with a master_hash take the master's
// bytes, checked by name, type, shape and hash; kModelInvalid when they
// differ). Without it such a model is refused.
StatusOr<graph::Graph> load_model_from_memory(const void* data, size_t size, BufferOwnership ownership,
                                              const graph::Graph* master = nullptr);
// Maps the file read-only; the mapping lives as long as the graph's buffers.
StatusOr<graph::Graph> load_model_from_file(const std::string& path, const graph::Graph* master = nullptr);

// True when `data` starts like a Rockchip-compiled .rknn file.
bool looks_like_vendor_model(const void* data, size_t size);

}  // namespace rknn::model
