#include "runtime/batch_fanout.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>

#include "base/log.h"
#include "runtime/context.h"
#include "runtime/io_convert.h"
#include "runtime/tensor_attrs.h"

namespace rknn::runtime {

namespace {

// The largest CPU cache line of the boards (and the NPU's address alignment).
constexpr uint64_t kLineBytes = 128;

// One item's attr as `batched` describes B items (dims[0] is the batch).
rknn_tensor_attr item_attr_of(const rknn_tensor_attr& batched, uint32_t batch) {
    rknn_tensor_attr a = batched;
    if (a.n_dims > 0 && a.dims[0] % batch == 0) a.dims[0] /= batch;
    if (a.n_elems % batch == 0) a.n_elems /= batch;
    if (a.size % batch == 0) a.size /= batch;
    if (a.size_with_stride % batch == 0) a.size_with_stride /= batch;
    a.h_stride = 0;  // the fan-out places the items; one item is dense
    return a;
}

}  // namespace

BatchFanout::BatchFanout(std::vector<std::shared_ptr<Context>> contexts, uint32_t batch)
    : batch_(batch),
      contexts_(std::move(contexts)),
      masks_(contexts_.size(), 0),
      inputs_(contexts_.front()->graph().inputs.size()),
      bound_item_(contexts_.size()),
      last_(std::make_unique<OutputSnapshot>()),
      staged_item_(contexts_.size(), -1),
      staged_version_(contexts_.size(), 0) {
    last_->declared = make_batched_outputs();
    last_->items.resize(batch_);
}

BatchFanout::~BatchFanout() {
    {
        std::lock_guard<std::mutex> lock(pool_mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    for (std::thread& worker : workers_) worker.join();
}

StatusOr<std::unique_ptr<BatchFanout>> BatchFanout::duplicate() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::shared_ptr<Context>> copies;
    for (const std::shared_ptr<Context>& context : contexts_) {
        RKNN_ASSIGN_OR_RETURN(std::shared_ptr<Context> copy, context->duplicate());  // keeps its core mask
        copies.push_back(std::move(copy));
    }
    auto fanout = std::make_unique<BatchFanout>(std::move(copies), batch_);
    fanout->masks_ = masks_;
    return fanout;
}

Status BatchFanout::query(int cmd, void* info, uint32_t size) {
    if (cmd == RKNN_QUERY_PERF_RUN) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (size != sizeof(rknn_perf_run))
            return make_status(StatusCode::kInvalidArgument, "size %u: rknn_perf_run is %zu bytes", size,
                               sizeof(rknn_perf_run));
        if (runs_ == 0) return Status(StatusCode::kFailedPrecondition, "PERF_RUN needs a finished rknn_run");
        static_cast<rknn_perf_run*>(info)->run_duration = last_run_us_;
        return Status::ok();
    }
    RKNN_RETURN_IF_ERROR(contexts_[0]->query(cmd, info, size));
    if (is_tensor_attr_query(cmd)) {
        auto* attr = static_cast<rknn_tensor_attr*>(info);
        if (attr->n_dims > 0) attr->dims[0] *= batch_;
        attr->n_elems *= batch_;
        attr->size *= batch_;
        attr->size_with_stride *= batch_;
    } else if (cmd == RKNN_QUERY_MEM_SIZE) {
        // Internal memory per context; the weights once (the duplicates share them).
        auto* total = static_cast<rknn_mem_size*>(info);
        for (size_t c = 1; c < contexts_.size(); ++c) {
            rknn_mem_size more{};
            RKNN_RETURN_IF_ERROR(contexts_[c]->query(cmd, &more, sizeof(more)));
            total->total_internal_size += more.total_internal_size;
            total->total_dma_allocated_size += more.total_dma_allocated_size - more.total_weight_size;
        }
    }
    return Status::ok();
}

Status BatchFanout::inputs_set(uint32_t count, const rknn_input* inputs) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<rknn_input> first(count);
    for (uint32_t k = 0; k < count; ++k) {
        const rknn_input& in = inputs[k];
        if (in.index >= inputs_.size())
            return make_status(StatusCode::kInvalidArgument, "inputs[%u].index %u: the model has %zu input(s)", k,
                               in.index, inputs_.size());
        if (in.buf == nullptr) return make_status(StatusCode::kInvalidArgument, "inputs[%u].buf is NULL", k);
        if (in.size == 0 || in.size % batch_ != 0)
            return make_status(StatusCode::kInvalidArgument,
                               "inputs[%u].size %u is not %u items of one size (a multi-batch model)", k, in.size,
                               batch_);
        first[k] = in;
        first[k].size = in.size / batch_;
    }
    // Item 0 checks the type, layout and size; every item is converted at the run.
    const bool held_first_item = staged_item_[0] == 0 && staged_version_[0] == inputs_version_;
    std::vector<bool> given(inputs_.size(), false);
    for (uint32_t k = 0; k < count; ++k) given[inputs[k].index] = true;
    ++inputs_version_;
    staged_item_[0] = -1;
    RKNN_RETURN_IF_ERROR(contexts_[0]->inputs_set(count, first.data()).with_context("batch item 0"));
    for (uint32_t k = 0; k < count; ++k) {
        const auto* bytes = static_cast<const uint8_t*>(inputs[k].buf);
        inputs_[inputs[k].index] = KeptInput{inputs[k], std::vector<uint8_t>(bytes, bytes + inputs[k].size)};
    }
    // Context 0 holds item 0 of every input given now; the others it held
    // before are item 0's too, unless it had another item.
    if (held_first_item || std::all_of(given.begin(), given.end(), [](bool g) { return g; })) {
        staged_item_[0] = 0;
        staged_version_[0] = inputs_version_;
    }
    return Status::ok();
}

Status BatchFanout::bind(std::shared_ptr<IoMemory> memory, uint8_t* data, uint64_t bytes,
                         const rknn_tensor_attr& attr) {
    std::lock_guard<std::mutex> lock(mutex_);
    Binding b;
    b.memory = std::move(memory);
    b.data = data;
    b.bytes = bytes;
    b.item_attr = item_attr_of(attr, batch_);
    // Item 0 on context 0 first: the checks of name, type, layout and size.
    RKNN_RETURN_IF_ERROR(contexts_[0]->bind_io_memory(b.memory, data, bytes, b.item_attr).with_context("batch item 0"));
    StatusOr<Context::BoundIo> bound = contexts_[0]->bound_io(b.item_attr);
    if (!bound.is_ok()) {
        (void)contexts_[0]->unbind_io(b.item_attr);
        return bound.status();
    }
    const Context::BoundIo io = bound.value();
    b.input = io.input;
    b.index = io.index;
    b.pitch = io.span;
    size_t slot = 0;
    while (slot < bindings_.size() && !(bindings_[slot].input == b.input && bindings_[slot].index == b.index)) ++slot;
    const bool rebinding = slot < bindings_.size();
    size_t touched = 1;  // contexts bound to the new buffer so far
    // Nothing changes when a check fails: the contexts bound so far go back
    // to the previous binding (at the next run) or to none.
    const auto undo = [&](Status status) {
        for (size_t c = 0; c < touched; ++c) {
            if (rebinding) {
                bound_item_[c][slot] = -1;
            } else {
                const Status unbound = contexts_[c]->unbind_io(b.item_attr);
                if (!unbound.is_ok()) RKNN_LOGE("batch item %zu: %s", c, unbound.message().c_str());
            }
        }
        return status;
    };
    if (io.input && attr.h_stride != 0) {
        if (io.shape.size() != 4 || io.shape[2] <= 0)
            return undo(make_status(StatusCode::kInvalidArgument, "input %u: h_stride is for 4-D inputs", io.index));
        const auto height = static_cast<uint64_t>(io.shape[2]);
        if (attr.h_stride < height)
            return undo(make_status(StatusCode::kInvalidArgument, "input %u: h_stride %u is below the height %llu",
                                    io.index, attr.h_stride, static_cast<unsigned long long>(height)));
        b.pitch = io.span / height * attr.h_stride;
    }
    b.in_place = b.pitch % kLineBytes == 0;
    if (!b.in_place) {  // item 0 again, copied on every run
        const Status status = contexts_[0]->bind_io_memory(b.memory, data, bytes, b.item_attr, false);
        if (!status.is_ok()) return undo(status.with_context("batch item 0"));
    }
    const uint64_t needed = (batch_ - 1) * b.pitch + io.span;
    if (bytes < needed)
        return undo(make_status(StatusCode::kInvalidArgument,
                                "%s %u: the buffer holds %llu bytes; %u items %llu bytes apart need %llu",
                                b.input ? "input" : "output", b.index, static_cast<unsigned long long>(bytes), batch_,
                                static_cast<unsigned long long>(b.pitch), static_cast<unsigned long long>(needed)));
    // The first item of each other context is bound now (each slice checked).
    for (size_t c = 1; c < contexts_.size() && c < batch_; ++c) {
        const uint64_t offset = c * b.pitch;
        const Status status =
            contexts_[c]->bind_io_memory(b.memory, data + offset, bytes - offset, b.item_attr, b.in_place);
        if (!status.is_ok()) return undo(status.with_context("batch item " + std::to_string(c)));
        ++touched;
    }
    if (!rebinding) {
        bindings_.push_back(b);
        for (auto& items : bound_item_) items.push_back(-1);
    } else {
        bindings_[slot] = b;
    }
    for (size_t c = 0; c < contexts_.size(); ++c) bound_item_[c][slot] = c < batch_ ? static_cast<int64_t>(c) : -1;
    if (b.input) {
        // The general and zero-copy APIs are not mixed (spec 4.7): inputs
        // given with rknn_inputs_set are dropped once an input is bound.
        bool dropped = false;
        for (std::optional<KeptInput>& kept : inputs_) {
            dropped = dropped || (kept.has_value() && &kept != &inputs_[b.index]);
            kept.reset();
        }
        if (dropped)
            RKNN_LOGW(
                "rknn_set_io_mem: inputs given with rknn_inputs_set are dropped (a multi-batch model takes all "
                "its inputs one way)");
    }
    ++inputs_version_;
    return Status::ok();
}

Status BatchFanout::stage(size_t c, uint32_t i) {
    Context& context = *contexts_[c];
    for (size_t slot = 0; slot < bindings_.size(); ++slot) {
        if (bound_item_[c][slot] == static_cast<int64_t>(i)) continue;
        const Binding& b = bindings_[slot];
        const uint64_t offset = i * b.pitch;
        bound_item_[c][slot] = -1;
        RKNN_RETURN_IF_ERROR(
            context.bind_io_memory(b.memory, b.data + offset, b.bytes - offset, b.item_attr, b.in_place));
        bound_item_[c][slot] = i;
    }
    if (staged_item_[c] == static_cast<int64_t>(i) && staged_version_[c] == inputs_version_) return Status::ok();
    std::vector<rknn_input> pieces;
    for (const std::optional<KeptInput>& kept : inputs_) {
        if (!kept) continue;
        rknn_input piece = kept->form;
        piece.size = kept->form.size / batch_;
        piece.buf = const_cast<uint8_t*>(kept->bytes.data()) + static_cast<size_t>(i) * piece.size;
        pieces.push_back(piece);
    }
    staged_item_[c] = -1;
    if (!pieces.empty()) RKNN_RETURN_IF_ERROR(context.inputs_set(static_cast<uint32_t>(pieces.size()), pieces.data()));
    staged_item_[c] = i;
    staged_version_[c] = inputs_version_;
    return Status::ok();
}

Status BatchFanout::run(OutputSnapshot* keep) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto start = std::chrono::steady_clock::now();
    const size_t n = masks_.size();
    runs_ = 0;  // until this run succeeds, there is nothing to get
    direct_ = keep == nullptr && n >= batch_;
    const std::function<Status(size_t)> job = [&](size_t c) -> Status {
        for (uint32_t i = static_cast<uint32_t>(c); i < batch_; i += static_cast<uint32_t>(n)) {
            Status status = stage(c, i);
            if (status.is_ok()) status = contexts_[c]->run(direct_ ? nullptr : &last_->items[i]);
            if (!status.is_ok()) return status.with_context("batch item " + std::to_string(i));
        }
        return Status::ok();
    };
    RKNN_RETURN_IF_ERROR(run_on_contexts(n, job));
    ++total_runs_;
    runs_ = total_runs_;
    last_run_us_ =
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count();
    if (keep != nullptr) {
        keep->declared = last_->declared;
        keep->values.clear();
        keep->items = last_->items;
    }
    return Status::ok();
}

Status BatchFanout::gather_last(uint32_t k, bool want_float, void* dst, size_t dst_bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!direct_) return gather_output(*last_, k, want_float, dst, dst_bytes);
    const size_t piece = dst_bytes / batch_;
    for (uint32_t i = 0; i < batch_; ++i)
        RKNN_RETURN_IF_ERROR(contexts_[i]
                                 ->output_to(k, want_float, static_cast<uint8_t*>(dst) + i * piece, piece)
                                 .with_context("batch item " + std::to_string(i)));
    return Status::ok();
}

bool BatchFanout::outputs_bound() const {
    for (const Binding& b : bindings_)
        if (!b.input) return true;
    return false;
}

Status BatchFanout::gather_output(const OutputSnapshot& kept, uint32_t k, bool want_float, void* dst,
                                  size_t dst_bytes) {
    if (kept.items.empty()) return Status(StatusCode::kInternal, "no batch items kept");
    const size_t piece = dst_bytes / kept.items.size();
    for (size_t i = 0; i < kept.items.size(); ++i) {
        if (k >= kept.items[i].values.size()) return Status(StatusCode::kInternal, "batch item without its outputs");
        RKNN_RETURN_IF_ERROR(
            convert_output(kept.items[i].values[k], want_float, static_cast<uint8_t*>(dst) + i * piece, piece)
                .with_context("batch item " + std::to_string(i)));
    }
    return Status::ok();
}

const std::vector<graph::Tensor>& BatchFanout::batched_outputs() const {
    return last_->declared;
}

std::vector<graph::Tensor> BatchFanout::make_batched_outputs() const {
    const graph::Graph& g = contexts_[0]->graph();
    std::vector<graph::Tensor> out;
    for (int32_t t : g.outputs) {
        graph::Tensor tensor = g.tensors[static_cast<size_t>(t)];
        tensor.shape[0] *= batch_;  // every output has a leading 1 (checked at init)
        out.push_back(std::move(tensor));
    }
    return out;
}

Status BatchFanout::use_cores(const std::vector<uint32_t>& masks) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (masks.empty() || masks.size() > contexts_.size())
        return make_status(StatusCode::kInvalidArgument, "%zu contexts asked for; the batch has %zu", masks.size(),
                           contexts_.size());
    for (size_t c = 0; c < masks.size(); ++c) {
        const Status status = contexts_[c]->set_core_mask(masks[c]);
        if (status.is_ok()) continue;
        for (size_t k = 0; k < c; ++k)
            (void)contexts_[k]->set_core_mask(k < masks_.size() ? masks_[k] : 0);  // as before
        return status.with_context("batch context " + std::to_string(c));
    }
    masks_ = masks;
    return Status::ok();
}

size_t BatchFanout::contexts_in_use() const {
    return masks_.size();
}
uint64_t BatchFanout::runs() const {
    return runs_;
}

Status BatchFanout::run_on_contexts(size_t n, const std::function<Status(size_t)>& job) {
    if (n == 1) return job(0);
    {
        std::lock_guard<std::mutex> lock(pool_mutex_);
        while (workers_.size() + 1 < n) workers_.emplace_back(&BatchFanout::worker_loop, this, workers_.size() + 1);
        job_ = &job;
        results_.assign(n, Status::ok());
        participants_ = n;
        pending_ = n - 1;
        ++generation_;
    }
    wake_.notify_all();
    Status first;
    try {
        first = job(0);
    } catch (const std::exception& e) {  // the workers are still to be waited for
        first = Status(StatusCode::kInternal, std::string("batch item run: ") + e.what());
    }
    std::unique_lock<std::mutex> lock(pool_mutex_);
    done_.wait(lock, [&] { return pending_ == 0; });
    job_ = nullptr;
    if (!first.is_ok()) return first;
    for (size_t c = 1; c < n; ++c)
        if (!results_[c].is_ok()) return results_[c];
    return Status::ok();
}

void BatchFanout::worker_loop(size_t c) {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(pool_mutex_);
    while (true) {
        wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
        if (stopping_) return;
        seen = generation_;
        if (c >= participants_) continue;
        const std::function<Status(size_t)>* job = job_;
        lock.unlock();
        Status status;
        try {
            status = (*job)(c);
        } catch (const std::exception& e) {
            status = Status(StatusCode::kInternal, std::string("batch worker: ") + e.what());
        }
        lock.lock();
        results_[c] = std::move(status);
        if (--pending_ == 0) done_.notify_all();
    }
}

}  // namespace rknn::runtime
