#include <cstring>
#include <fstream>

#include "model/model_file.h"
#include "model/rknn_model_generated.h"
#include "model/model_types.h"

namespace rknn::model {
namespace {

namespace fb = openrknn::fb;
using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

Offset<flatbuffers::Vector<Offset<fb::Attribute>>> write_attributes(FlatBufferBuilder& b,
                                                                    const graph::Attributes& attrs) {
    std::vector<Offset<fb::Attribute>> items;
    for (const graph::Attribute& a : attrs.items()) {
        auto name = b.CreateString(a.name);
        auto s = a.kind == graph::Attribute::Kind::kString ? b.CreateString(a.s) : 0;
        auto ints = a.kind == graph::Attribute::Kind::kInts ? b.CreateVector(a.ints) : 0;
        auto floats = a.kind == graph::Attribute::Kind::kFloats ? b.CreateVector(a.floats) : 0;
        fb::AttributeBuilder ab(b);
        ab.add_name(name);
        ab.add_kind(to_fb(a.kind));
        ab.add_i(a.i);
        ab.add_f(a.f);
        if (!s.IsNull()) ab.add_s(s);
        if (!ints.IsNull()) ab.add_ints(ints);
        if (!floats.IsNull()) ab.add_floats(floats);
        items.push_back(ab.Finish());
    }
    return b.CreateVector(items);
}

Offset<fb::Tensor> write_tensor(FlatBufferBuilder& b, const graph::Tensor& t) {
    auto name = b.CreateString(t.name);
    auto shape = b.CreateVector(t.shape);
    auto dim_params = t.dim_params.empty() ? 0 : b.CreateVectorOfStrings(t.dim_params);
    Offset<fb::Quantization> quant = 0;
    if (t.quant.is_quantized()) {
        quant = fb::CreateQuantization(b, b.CreateVector(t.quant.scales), b.CreateVector(t.quant.zero_points),
                                       t.quant.axis);
    }
    fb::TensorBuilder tb(b);
    tb.add_name(name);
    tb.add_dtype(to_fb(t.dtype));
    tb.add_shape(shape);
    if (!dim_params.IsNull()) tb.add_dim_params(dim_params);
    if (!quant.IsNull()) tb.add_quantization(quant);
    tb.add_buffer(t.buffer);
    if (t.master_hash != 0) tb.add_master_hash(t.master_hash);
    return tb.Finish();
}

Offset<fb::Operator> write_op(FlatBufferBuilder& b, const graph::Op& op) {
    auto type = b.CreateString(graph::op_type_name(op.type));
    auto name = b.CreateString(op.name);
    auto custom = op.custom_type.empty() ? 0 : b.CreateString(op.custom_type);
    auto inputs = b.CreateVector(op.inputs);
    auto outputs = b.CreateVector(op.outputs);
    auto attrs = write_attributes(b, op.attrs);
    fb::OperatorBuilder ob(b);
    ob.add_type(type);
    ob.add_name(name);
    if (!custom.IsNull()) ob.add_custom_type(custom);
    ob.add_inputs(inputs);
    ob.add_outputs(outputs);
    ob.add_attributes(attrs);
    return ob.Finish();
}

Offset<fb::InputPreprocess> write_preprocess(FlatBufferBuilder& b, const graph::InputPreprocess& p) {
    return fb::CreateInputPreprocess(b, b.CreateVector(p.mean), b.CreateVector(p.std), p.reverse_channels,
                                     to_fb(p.user_layout), to_fb(p.user_dtype));
}

size_t align_up(size_t value) { return (value + kDataAlignment - 1) / kDataAlignment * kDataAlignment; }

}  // namespace

StatusOr<std::vector<uint8_t>> serialize_model(const graph::Graph& graph) {
    FlatBufferBuilder b(1 << 16);
    b.ForceDefaults(true);  // every field is present in the file, whatever its value
    // Data section layout: every buffer on a 64-byte boundary.
    std::vector<Offset<fb::Buffer>> buffers;
    std::vector<size_t> offsets;
    size_t data_size = 0;
    for (const graph::Buffer& buffer : graph.buffers) {
        data_size = align_up(data_size);
        offsets.push_back(data_size);
        buffers.push_back(fb::CreateBuffer(b, data_size, buffer.size));
        data_size += buffer.size;
    }
    data_size = align_up(data_size);
    std::vector<Offset<fb::Tensor>> tensors;
    for (const graph::Tensor& t : graph.tensors) tensors.push_back(write_tensor(b, t));
    std::vector<Offset<fb::Operator>> ops;
    for (const graph::Op& op : graph.ops) ops.push_back(write_op(b, op));
    std::vector<Offset<fb::InputPreprocess>> preprocess;
    for (const graph::InputPreprocess& p : graph.preprocess) preprocess.push_back(write_preprocess(b, p));
    std::vector<Offset<fb::ShapeSet>> shape_sets;
    for (const std::vector<graph::Shape>& set : graph.shape_sets) {
        std::vector<Offset<fb::Shape>> shapes;
        for (const graph::Shape& s : set) shapes.push_back(fb::CreateShape(b, b.CreateVector(s)));
        shape_sets.push_back(fb::CreateShapeSet(b, b.CreateVector(shapes)));
    }
    std::vector<Offset<fb::ShapeRange>> input_ranges;
    for (const graph::ShapeRange& r : graph.input_ranges)
        input_ranges.push_back(fb::CreateShapeRange(b, b.CreateVector(r.min), b.CreateVector(r.max), b.CreateVector(r.step)));
    std::vector<Offset<fb::CustomOpDecl>> custom_ops;
    for (const graph::CustomOpDecl& d : graph.custom_ops)
        custom_ops.push_back(fb::CreateCustomOpDecl(b, b.CreateString(d.type), write_attributes(b, d.attrs)));

    auto model = fb::CreateModel(b, kSchemaVersionMajor, kSchemaVersionMinor, b.CreateString(graph.converter_version),
                                 b.CreateString(graph.target_soc), b.CreateString(graph.custom_string),
                                 b.CreateVector(tensors), b.CreateVector(ops), b.CreateVector(buffers),
                                 b.CreateVector(graph.inputs), b.CreateVector(graph.outputs),
                                 b.CreateVector(preprocess), b.CreateVector(shape_sets), b.CreateVector(custom_ops),
                                 data_size, b.CreateVector(input_ranges), graph.batch);
    b.FinishSizePrefixed(model, kFileIdentifier);

    const size_t data_start = align_up(b.GetSize());
    std::vector<uint8_t> file(data_start + data_size, 0);
    std::memcpy(file.data(), b.GetBufferPointer(), b.GetSize());
    for (size_t i = 0; i < graph.buffers.size(); ++i) {
        if (graph.buffers[i].size) std::memcpy(file.data() + data_start + offsets[i], graph.buffers[i].data, graph.buffers[i].size);
    }
    return file;
}

Status write_model_file(const graph::Graph& graph, const std::string& path) {
    RKNN_ASSIGN_OR_RETURN(const std::vector<uint8_t> bytes, serialize_model(graph));
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) return Status(StatusCode::kInvalidArgument, "cannot open " + path + " for writing");
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!out) return Status(StatusCode::kInternal, "writing " + path + " failed");
    return Status::ok();
}

}  // namespace rknn::model
