// Loading OpenRKNN model files: verify, then build the graph with weights
// viewed in place.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "base/aligned_bytes.h"
#include "base/content_hash.h"
#include "base/log.h"
#include "graph/op_schema.h"
#include "graph/shape_check.h"
#include "graph/topology.h"
#include "model/model_file.h"
#include "model/model_types.h"

namespace rknn::model {
namespace {

namespace fb = openrknn::fb;

// Limits that keep a hostile file from making the loader allocate absurdly.
constexpr size_t kMaxRank = 16;
constexpr uint32_t kMaxBatch = 256;  // items per run: far beyond any board use, and bounds what a run allocates
constexpr size_t kMaxNameLength = 4096;

Status invalid(const std::string& message) { return Status(StatusCode::kModelInvalid, message); }

// A read-only file mapping, unmapped when the last graph buffer lets go.
class MappedFile {
public:
    MappedFile(void* data, size_t size) : data_(data), size_(size) {}
    ~MappedFile() { ::munmap(data_, size_); }
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;
    const uint8_t* data() const { return static_cast<const uint8_t*>(data_); }
    size_t size() const { return size_; }

private:
    void* data_;
    size_t size_;
};

size_t align_up(size_t value) { return (value + kDataAlignment - 1) / kDataAlignment * kDataAlignment; }

std::string string_of(const flatbuffers::String* s) { return s ? s->str() : std::string(); }

// Vector contents copied with memcpy. The verifier checks a vector's length
// field for 4-byte alignment but not that 8-byte elements are 8-byte aligned,
// so a crafted file can misalign them; reading through typed pointers would
// then be undefined behaviour.
template <typename T>
std::vector<T> copy_vector(const flatbuffers::Vector<T>* v) {
    std::vector<T> out;
    if (v == nullptr || v->size() == 0) return out;
    out.resize(v->size());
    std::memcpy(out.data(), v->Data(), v->size() * sizeof(T));
    return out;
}

Status read_string(const flatbuffers::String* s, const char* what, std::string* out) {
    if (s != nullptr && s->size() > kMaxNameLength) return invalid(std::string(what) + " is too long");
    *out = string_of(s);
    return Status::ok();
}

Status read_attributes(const flatbuffers::Vector<flatbuffers::Offset<fb::Attribute>>* items, graph::Attributes* out) {
    if (items == nullptr) return Status::ok();
    for (const fb::Attribute* item : *items) {
        graph::Attribute a;
        RKNN_RETURN_IF_ERROR(read_string(item->name(), "attribute name", &a.name));
        if (!from_fb(item->kind(), &a.kind)) return invalid("attribute " + a.name + " has an unknown kind");
        a.i = item->i();
        a.f = item->f();
        a.s = string_of(item->s());
        a.ints = copy_vector(item->ints());
        a.floats = copy_vector(item->floats());
        out->add(std::move(a));
    }
    return Status::ok();
}

Status read_quantization(const fb::Quantization* q, const graph::Tensor& t, graph::QuantParams* out) {
    if (q == nullptr) return Status::ok();
    out->scales = copy_vector(q->scale());
    out->zero_points = copy_vector(q->zero_point());
    out->axis = q->axis();
    if (out->scales.empty()) {
        if (!out->zero_points.empty()) return invalid("tensor " + t.name + " has zero points but no scales");
        return Status::ok();
    }
    if (!out->zero_points.empty() && out->zero_points.size() != out->scales.size())
        return invalid("tensor " + t.name + " has different numbers of scales and zero points");
    for (float s : out->scales) {
        if (!(s > 0.0f) || !std::isfinite(s)) return invalid("tensor " + t.name + " has a non-positive scale");
    }
    // Zero points are codes of the tensor's own type (the code generator
    // negates and widens them; a value outside the type would not be one).
    int64_t lo = 0, hi = 0;
    switch (t.dtype) {
    case graph::DType::kInt8: lo = -128, hi = 127; break;
    case graph::DType::kUInt8: lo = 0, hi = 255; break;
    case graph::DType::kInt16: lo = -32768, hi = 32767; break;
    default: lo = -(int64_t{1} << 31) + 1, hi = (int64_t{1} << 31) - 1; break;
    }
    for (auto zp : out->zero_points) {
        if (static_cast<int64_t>(zp) < lo || static_cast<int64_t>(zp) > hi)
            return invalid("tensor " + t.name + " has a zero point outside its type's range");
    }
    if (out->scales.size() > 1) {
        if (out->axis < 0 || static_cast<size_t>(out->axis) >= t.shape.size() ||
            t.shape[out->axis] != static_cast<int64_t>(out->scales.size())) {
            return invalid("tensor " + t.name + ": per-channel scales do not match the axis dimension");
        }
    }
    return Status::ok();
}

Status read_tensor(const fb::Tensor* ft, graph::Tensor* t) {
    RKNN_RETURN_IF_ERROR(read_string(ft->name(), "tensor name", &t->name));
    t->dtype = from_fb(ft->dtype());
    if (t->dtype == graph::DType::kUndefined) return invalid("tensor " + t->name + " has an unknown element type");
    if (ft->shape() && ft->shape()->size() > kMaxRank) return invalid("tensor " + t->name + " has too many dims");
    t->shape = copy_vector(ft->shape());
    for (int64_t d : t->shape) {
        if (d < -1 || d > graph::kMaxTensorElements) return invalid("tensor " + t->name + " has an invalid dim");
    }
    if (ft->dim_params()) {
        if (ft->dim_params()->size() != t->shape.size())
            return invalid("tensor " + t->name + ": dim_params does not match the rank");
        for (const flatbuffers::String* s : *ft->dim_params()) t->dim_params.push_back(string_of(s));
    }
    t->buffer = ft->buffer();
    if (t->buffer < -1) return invalid("tensor " + t->name + " has a negative buffer index");
    t->master_hash = ft->master_hash();
    if (t->master_hash != 0 && t->buffer != -1) return invalid("tensor " + t->name + " has bytes and a master's too");
    return read_quantization(ft->quantization(), *t, &t->quant);
}

// rknn_custom_op::op_type holds 256 bytes with the NUL.
constexpr size_t kMaxCustomTypeBytes = 256;

Status read_op(const fb::Operator* fo, graph::Op* op) {
    const std::string type = string_of(fo->type());
    op->type = graph::op_type_from_name(type);
    RKNN_RETURN_IF_ERROR(read_string(fo->name(), "op name", &op->name));
    op->custom_type = string_of(fo->custom_type());
    if (op->type == graph::OpType::kUnknown) {
        // A type this runtime does not know (a newer converter's, say) runs
        // as a custom op of that name, which the client may register
        // (runtime-spec 7.1); until then rknn_run names it.
        const bool printable = std::all_of(type.begin(), type.end(), [](char c) { return c > ' ' && c < 127; });
        if (type.empty() || type.size() >= kMaxCustomTypeBytes || !printable)
            return invalid("op \"" + op->name + "\" has an invalid type");
        op->type = graph::OpType::kCustom;
        op->custom_type = type;
    }
    if (op->type == graph::OpType::kCustom && op->custom_type.empty())
        return invalid("custom op \"" + op->name + "\" has no custom_type");
    op->inputs = copy_vector(fo->inputs());
    op->outputs = copy_vector(fo->outputs());
    RKNN_RETURN_IF_ERROR(read_attributes(fo->attributes(), &op->attrs));
    return graph::check_arity(*op);
}

Status read_buffers(const fb::Model* m, const uint8_t* data_section, size_t data_available,
                    const std::shared_ptr<const void>& keep_alive, graph::Graph* g) {
    if (m->data_size() > data_available) {
        return invalid("the data section is cut short: " + std::to_string(m->data_size()) + " bytes declared, " +
                       std::to_string(data_available) + " present");
    }
    if (m->buffers() == nullptr) return Status::ok();
    for (const fb::Buffer* fbuf : *m->buffers()) {
        const uint64_t offset = fbuf->offset();
        const uint64_t size = fbuf->size();
        if (offset % kDataAlignment != 0) return invalid("a weight buffer is not 64-byte aligned");
        if (offset > m->data_size() || size > m->data_size() - offset)
            return invalid("a weight buffer lies outside the data section");
        graph::Buffer b;
        b.data = data_section + offset;
        b.size = size;
        b.keep_alive = keep_alive;
        g->buffers.push_back(std::move(b));
    }
    return Status::ok();
}

Status read_model(const fb::Model* m, graph::Graph* g) {
    RKNN_RETURN_IF_ERROR(read_string(m->converter_version(), "converter_version", &g->converter_version));
    RKNN_RETURN_IF_ERROR(read_string(m->target_soc(), "target_soc", &g->target_soc));
    g->custom_string = string_of(m->custom_string());
    if (g->custom_string.size() >= 1024) return invalid("the custom string is longer than 1023 bytes");
    if (m->tensors()) {
        for (const fb::Tensor* ft : *m->tensors()) {
            graph::Tensor t;
            RKNN_RETURN_IF_ERROR(read_tensor(ft, &t));
            g->tensors.push_back(std::move(t));
        }
    }
    if (m->operators()) {
        for (const fb::Operator* fo : *m->operators()) {
            graph::Op op;
            RKNN_RETURN_IF_ERROR(read_op(fo, &op));
            g->ops.push_back(std::move(op));
        }
    }
    g->inputs = copy_vector(m->inputs());
    g->outputs = copy_vector(m->outputs());
    if (g->outputs.empty()) return invalid("the model has no outputs");
    if (m->preprocess()) {
        for (const fb::InputPreprocess* fp : *m->preprocess()) {
            graph::InputPreprocess p;
            p.mean = copy_vector(fp->mean());
            p.std = copy_vector(fp->std());
            for (float s : p.std) {
                if (s == 0.0f || !std::isfinite(s)) return invalid("a std value is zero or not finite");
            }
            p.reverse_channels = fp->reverse_channels();
            p.user_layout = from_fb(fp->user_layout());
            p.user_dtype = from_fb(fp->user_dtype());
            g->preprocess.push_back(std::move(p));
        }
    }
    if (m->shape_sets()) {
        for (const fb::ShapeSet* fs : *m->shape_sets()) {
            std::vector<graph::Shape> set;
            if (fs->shapes()) {
                for (const fb::Shape* s : *fs->shapes()) {
                    if (s->dims() && s->dims()->size() > kMaxRank) return invalid("a shape set has too many dims");
                    set.push_back(copy_vector(s->dims()));
                }
            }
            g->shape_sets.push_back(std::move(set));
        }
    }
    if (m->input_ranges()) {
        for (const fb::ShapeRange* fr : *m->input_ranges()) {
            for (const auto* dims : {fr->min(), fr->max(), fr->step()})
                if (dims && dims->size() > kMaxRank) return invalid("an input range has too many dims");
            g->input_ranges.push_back({copy_vector(fr->min()), copy_vector(fr->max()), copy_vector(fr->step())});
        }
    }
    g->batch = m->batch();
    if (g->batch == 0 || g->batch > kMaxBatch) return invalid("batch " + std::to_string(g->batch) + " is outside 1.." + std::to_string(kMaxBatch));
    if (m->custom_ops()) {
        for (const fb::CustomOpDecl* d : *m->custom_ops()) {
            graph::CustomOpDecl decl;
            decl.type = string_of(d->type());
            RKNN_RETURN_IF_ERROR(read_attributes(d->attributes(), &decl.attrs));
            g->custom_ops.push_back(std::move(decl));
        }
    }
    // Custom ops the list lacks: types this runtime does not know (runtime-
    // spec 7.1), declared here and named once each in the log.
    std::unordered_set<std::string> declared;
    for (const graph::CustomOpDecl& d : g->custom_ops) declared.insert(d.type);
    for (const graph::Op& op : g->ops) {
        if (op.type != graph::OpType::kCustom || !declared.insert(op.custom_type).second) continue;
        g->custom_ops.push_back({op.custom_type, {}});
        RKNN_LOGW("op type \"%s\" (first op \"%s\") is not one this runtime runs: it runs as a custom op, once "
                  "registered with rknn_register_custom_ops",
                  op.custom_type.c_str(), op.name.c_str());
    }
    return Status::ok();
}

// The constants --remove-weights left to the master: the master's bytes of
// the same name, type and shape, whose content hash the file recorded.
Status take_master_weights(const graph::Graph* master, graph::Graph* g) {
    std::unordered_map<std::string, int32_t> by_name;
    if (master != nullptr)
        for (size_t i = 0; i < master->tensors.size(); ++i) by_name.emplace(master->tensors[i].name, static_cast<int32_t>(i));
    size_t taken = 0;
    for (graph::Tensor& t : g->tensors) {
        if (t.master_hash == 0) continue;
        if (master == nullptr)
            return invalid("the model's weights were left in its master (rknn_convert --remove-weights): rknn_init it "
                           "with RKNN_FLAG_SHARE_WEIGHT_MEM and extend->ctx set to the master's context");
        const auto found = by_name.find(t.name);
        const graph::Buffer* bytes = found == by_name.end() ? nullptr : master->constant_buffer(found->second);
        if (bytes == nullptr)
            return make_status(StatusCode::kModelInvalid, "incompatible master: it has no constant '%s'", t.name.c_str());
        const graph::Tensor& m = master->tensors[static_cast<size_t>(found->second)];
        if (m.dtype != t.dtype || m.shape != t.shape || content_hash(bytes->data, bytes->size) != t.master_hash)
            return make_status(StatusCode::kModelInvalid,
                               "incompatible master: its constant '%s' is not the one this model was converted with",
                               t.name.c_str());
        t.buffer = static_cast<int32_t>(g->buffers.size());
        // The master's bytes, kept alive as the master keeps them; a copy
        // where they are the client's (a borrowed model buffer), which may
        // be freed once the master is destroyed.
        g->buffers.push_back(bytes->keep_alive ? *bytes : graph::Buffer::copy_of(bytes->data, bytes->size));
        ++taken;
    }
    if (master != nullptr && taken == 0)
        return Status(StatusCode::kModelInvalid,
                      "RKNN_FLAG_SHARE_WEIGHT_MEM: the model has no weights left to a master (convert it with "
                      "rknn_convert --remove-weights --master)");
    return Status::ok();
}

// Everything after the bytes are known to be a well-formed FlatBuffer of ours.
StatusOr<graph::Graph> parse(const uint8_t* data, size_t size, std::shared_ptr<const void> keep_alive,
                             const graph::Graph* master) {
    if (size < 16) return invalid("the model is too small (" + std::to_string(size) + " bytes)");
    if (looks_like_vendor_model(data, size)) {
        return invalid("this is a vendor-compiled .rknn model (RKNN-Toolkit2), whose format is undocumented; "
                       "OpenRKNN runs its own open format. Convert the ONNX source instead: "
                       "rknn_convert model.onnx -o model.rknn [--dtype int8 --dataset DIR]");
    }
    uint32_t fb_size = 0;
    std::memcpy(&fb_size, data, 4);
    if (fb_size > size - 4) return invalid("the model header claims more bytes than the file has");
    if (!flatbuffers::BufferHasIdentifier(data, kFileIdentifier, true)) {
        return invalid("not an OpenRKNN model (file identifier \"ORKN\" missing)");
    }
    flatbuffers::Verifier verifier(data, 4 + static_cast<size_t>(fb_size), 64, 1000000);
    if (!verifier.VerifySizePrefixedBuffer<fb::Model>(kFileIdentifier)) {
        return invalid("the model's FlatBuffer failed verification (corrupted or truncated file)");
    }
    const fb::Model* m = flatbuffers::GetSizePrefixedRoot<fb::Model>(data);
    if (m->schema_version_major() != kSchemaVersionMajor) {
        return invalid("model schema version " + std::to_string(m->schema_version_major()) + "." +
                       std::to_string(m->schema_version_minor()) + " is not supported (this runtime reads " +
                       std::to_string(kSchemaVersionMajor) + ".x); convert the model again");
    }
    const size_t data_start = align_up(4 + static_cast<size_t>(fb_size));
    const size_t data_available = data_start <= size ? size - data_start : 0;
    graph::Graph g;
    RKNN_RETURN_IF_ERROR(read_model(m, &g));
    RKNN_RETURN_IF_ERROR(read_buffers(m, data + data_start, data_available, keep_alive, &g));
    RKNN_RETURN_IF_ERROR(take_master_weights(master, &g));
    RKNN_RETURN_IF_ERROR(graph::validate_structure(g));
    RKNN_RETURN_IF_ERROR(graph::check_graph_shapes(g));
    return g;
}

}  // namespace

bool looks_like_vendor_model(const void* data, size_t size) {
    return size >= 4 && std::memcmp(data, "RKNN", 4) == 0;
}

StatusOr<graph::Graph> load_model_from_memory(const void* data, size_t size, BufferOwnership ownership,
                                              const graph::Graph* master) {
    if (data == nullptr) return Status(StatusCode::kInvalidArgument, "the model buffer is NULL");
    if (ownership == BufferOwnership::kBorrow) {
        // In-place use needs the alignment the format promises for weights.
        if (reinterpret_cast<uintptr_t>(data) % kDataAlignment == 0) {
            return parse(static_cast<const uint8_t*>(data), size, nullptr, master);
        }
    }
    auto copy = std::make_shared<AlignedBytes>(size);
    if (size) std::memcpy(copy->data(), data, size);
    return parse(copy->data(), size, copy, master);
}

StatusOr<graph::Graph> load_model_from_file(const std::string& path, const graph::Graph* master) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Status(StatusCode::kInvalidArgument, "cannot open model file " + path + ": " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        return Status(StatusCode::kInvalidArgument, path + " is not a regular file");
    }
    const size_t size = static_cast<size_t>(st.st_size);
    if (size == 0) {
        ::close(fd);
        return invalid(path + " is empty");
    }
    void* mapped = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (mapped == MAP_FAILED) return Status(StatusCode::kResourceExhausted, "cannot map " + path);
    auto file = std::make_shared<MappedFile>(mapped, size);
    return parse(file->data(), size, file, master);
}

}  // namespace rknn::model
