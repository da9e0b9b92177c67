// A multi-batch model (rknn_convert --batch B, spec 5.3): every rknn_run
// takes B items, and each item runs as the model's batch-1 graph.
//
// The context the client holds is a front over up to one batch-1 context per
// NPU core (the first made from the model, the others its duplicates: one
// weights buffer, internal memory each). A run gives item i to context
// i % n, where n is the number of contexts in use (set by the core mask or
// rknn_set_batch_core_num); context 0 runs on the caller's thread and the
// others on threads of this fan-out's own, so the items of different
// contexts run on the NPU side by side.
//
// Item i reads its input at i * (input bytes / B) and writes its output at
// i * (output bytes / B). A zero-copy buffer is split the same way, at the
// bytes one item's binding covers; a 4-D input's `h_stride` (rows) makes the
// items that many rows apart instead, for buffers of padded height. Each
// item's outputs are copied aside when it ends, so that a context can run
// its next item, and rknn_outputs_get gathers the copies.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "base/status.h"
#include "rknn_api.h"
#include "runtime/io_memory.h"

namespace rknn::graph {
struct Tensor;
}

namespace rknn::runtime {

class Context;
struct OutputSnapshot;

class BatchFanout {
public:
    // `contexts`: batch-1 contexts of one model, all idle; the first made
    // from the model, the others its duplicates.
    BatchFanout(std::vector<std::shared_ptr<Context>> contexts, uint32_t batch);
    ~BatchFanout();  // joins the threads
    BatchFanout(const BatchFanout&) = delete;
    BatchFanout& operator=(const BatchFanout&) = delete;

    uint32_t batch() const { return batch_; }
    const std::vector<std::shared_ptr<Context>>& contexts() const { return contexts_; }
    // A fan-out of duplicates of these contexts, with the same cores in use.
    StatusOr<std::unique_ptr<BatchFanout>> duplicate();

    // The batch-1 answer, with B-times dims[0], element counts and sizes
    // where it describes an input or output.
    Status query(int cmd, void* info, uint32_t size);
    // `inputs[k].size` holds B items; they are kept until the run.
    Status inputs_set(uint32_t count, const rknn_input* inputs);
    // rknn_set_io_mem with the B-times attr the client queried.
    Status bind(std::shared_ptr<IoMemory> memory, uint8_t* data, uint64_t bytes, const rknn_tensor_attr& attr);
    // Every item; the first failure is returned, naming its item.
    Status run(OutputSnapshot* keep);
    // Output `k` of every item of the last successful run, converted one
    // after another into `dst` (as rknn_outputs_get converts one item's).
    Status gather_last(uint32_t k, bool want_float, void* dst, size_t dst_bytes);
    // The same from the copies a run kept (run(keep)).
    static Status gather_output(const OutputSnapshot& kept, uint32_t k, bool want_float, void* dst, size_t dst_bytes);
    // The model's outputs as B items declare them.
    const std::vector<graph::Tensor>& batched_outputs() const;
    bool outputs_bound() const;

    // One context per mask in `masks` is used from the next run (a mask per
    // context: 0 for the kernel's choice, or one core). At most contexts().size().
    Status use_cores(const std::vector<uint32_t>& masks);
    size_t contexts_in_use() const;
    uint64_t runs() const;

private:
    // An input kept from rknn_inputs_set until the run.
    struct KeptInput {
        rknn_input form{};           // as given; buf and size point at one item in a run
        std::vector<uint8_t> bytes;  // B items
    };
    // A zero-copy buffer of B items.
    struct Binding {
        std::shared_ptr<IoMemory> memory;
        uint8_t* data = nullptr;
        uint64_t bytes = 0;
        rknn_tensor_attr item_attr{};  // what one item's context is bound with
        bool input = false;
        uint32_t index = 0;
        uint64_t pitch = 0;  // bytes from one item to the next
        // Items a whole number of cache lines apart: each may be used in
        // place. Otherwise none is: an item the NPU writes in place and one
        // the CPU copies would share a line at their edge.
        bool in_place = true;
    };
    // batched_outputs(), made once.
    std::vector<graph::Tensor> make_batched_outputs() const;
    // Context `c` made ready for item `i`: its inputs and bindings.
    Status stage(size_t c, uint32_t i);
    // `job(c)` for c in [0, n): c = 0 on this thread, the others on the pool.
    Status run_on_contexts(size_t n, const std::function<Status(size_t)>& job);
    void worker_loop(size_t c);

    const uint32_t batch_;
    std::vector<std::shared_ptr<Context>> contexts_;
    std::vector<uint32_t> masks_;  // per context in use

    std::mutex mutex_;                              // the calls below, one at a time
    std::vector<std::optional<KeptInput>> inputs_;  // per model input
    std::vector<Binding> bindings_;
    // Per context, per binding: the item it is bound at (-1: not yet).
    std::vector<std::vector<int64_t>> bound_item_;
    // Per item, of the last run; not made when each context ran one item
    // and nothing asked for copies (`direct_`): the outputs are read from
    // the contexts then.
    std::unique_ptr<OutputSnapshot> last_;
    bool direct_ = false;
    // Inputs change with every rknn_inputs_set; a context that holds the
    // item and the version it runs is not given them again.
    uint64_t inputs_version_ = 1;
    std::vector<int64_t> staged_item_;
    std::vector<uint64_t> staged_version_;
    uint64_t runs_ = 0;  // 0 after a failed run: nothing to get
    uint64_t total_runs_ = 0;
    int64_t last_run_us_ = 0;

    // The pool: worker c - 1 runs context c's items.
    std::mutex pool_mutex_;
    std::condition_variable wake_, done_;
    std::vector<std::thread> workers_;
    uint64_t generation_ = 0;
    size_t pending_ = 0, participants_ = 0;
    bool stopping_ = false;
    const std::function<Status(size_t)>* job_ = nullptr;
    std::vector<Status> results_;
};

}  // namespace rknn::runtime
