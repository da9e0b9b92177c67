// What rknn_run, rknn_wait and rknn_outputs_get do with the frames of one
// context handle:
//   - a blocking run (the default) runs on the caller's thread;
//   - rknn_run_extend.non_block = 1 hands the frame to the handle's worker
//     thread and returns; rknn_wait collects it (with a timeout), and must
//     come before the next run or rknn_outputs_get;
//   - RKNN_FLAG_ASYNC_MASK pipelines: every rknn_run returns once its frame
//     is started, and rknn_outputs_get hands out the frame before it (copied
//     aside when it finished) while that one runs. After rknn_wait, and for
//     the first frame, it hands out the newest frame, waiting for it;
//   - frame ids count the runs of the handle from 1 (rknn_run_extend and
//     rknn_output_extend report them);
//   - RKNN_FLAG_FENCE_IN_OUTSIDE: a run waits for extend->fence_fd (when
//     >= 0) before it starts; RKNN_FLAG_FENCE_OUT_OUTSIDE: rknn_run returns in
//     extend->fence_fd a fence that signals when the frame is over (run_fence.h).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>

#include "base/status.h"
#include "rknn_api.h"
#include "runtime/context.h"
#include "runtime/run_fence.h"

namespace rknn::runtime {

// Made with std::make_shared: the worker thread holds a reference, so a
// handle whose last reference goes on the worker itself (a custom-op
// callback calling its own handle while another thread destroys it) is
// freed when the worker is done, not from under it.
class FrameRunner : public std::enable_shared_from_this<FrameRunner> {
public:
    explicit FrameRunner(std::shared_ptr<Context> context);
    ~FrameRunner();
    FrameRunner(const FrameRunner&) = delete;
    FrameRunner& operator=(const FrameRunner&) = delete;

    Status run(rknn_run_extend* extend);
    Status wait(rknn_run_extend* extend);
    Status outputs_get(uint32_t count, rknn_output* outputs, rknn_output_extend* extend);
    // Waits until no frame is queued or running: every other call that
    // uses the context (inputs, bindings, shapes, masks) does this first,
    // so that a frame runs what was set when rknn_run was called.
    void settle();
    // The handle is being destroyed: drops a frame not started yet, stops an
    // in-fence wait, and waits for a running frame to end, unless called
    // from that frame's own thread (which then ends after it).
    void stop();

private:
    struct Frame {
        ~Frame();
        uint64_t id = 0;
        int in_fence = -1;  // our copy of the client's fence
        int in_fence_timeout_ms = 0;
        OutFence out_fence;
        bool done = false;  // with status; under mu_
        Status status;
        OutputSnapshot outputs;  // RKNN_FLAG_ASYNC_MASK: written before done
    };
    // The frame's in-fence (a wait that `cancel_fd` ends), the run, then its out-fence.
    Status execute(Frame& frame, int cancel_fd);
    void work();
    // Waits (mu_ held by `lock`) until no frame is queued or running.
    void wait_idle(std::unique_lock<std::mutex>& lock);

    const std::shared_ptr<Context> context_;
    const uint32_t flags_;
    std::mutex mu_;
    std::condition_variable cv_;
    std::thread worker_;  // started by the first frame that needs it
    bool stopping_ = false;
    std::shared_ptr<Frame> queued_;     // for the worker, not started yet
    std::shared_ptr<Frame> in_flight_;  // the newest frame handed to the worker
    bool waited_ = false;               // rknn_wait collected in_flight_
    std::shared_ptr<Frame> previous_;   // ASYNC_MASK: the finished frame before in_flight_
    uint64_t last_id_ = 0;
    uint64_t last_ok_id_ = 0;  // the newest frame that ran without error
    int cancel_[2] = {-1, -1};  // a pipe: readable once the handle is destroyed
};

}  // namespace rknn::runtime
