// Mapping between the graph IR's enums and the model schema's enums. The
// schema numbers are part of the file format and must never be renumbered;
// these tables are the only place that knows both.
#pragma once

#include "graph/attributes.h"
#include "graph/graph.h"
#include "model/rknn_model_generated.h"

namespace rknn::model {

openrknn::fb::DataType to_fb(graph::DType dtype);
// DType::kUndefined for values outside the schema.
graph::DType from_fb(openrknn::fb::DataType dtype);

openrknn::fb::Layout to_fb(graph::Layout layout);
graph::Layout from_fb(openrknn::fb::Layout layout);

openrknn::fb::AttributeKind to_fb(graph::Attribute::Kind kind);
bool from_fb(openrknn::fb::AttributeKind kind, graph::Attribute::Kind* out);

}  // namespace rknn::model
