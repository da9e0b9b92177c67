#include "runtime/frame_runner.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "base/log.h"

namespace rknn::runtime {
namespace {

// How long a run waits for its in-fence when rknn_run_extend gives no
// timeout: as long as the runtime lets one run take (spec 1.2: 20 s).
constexpr int kDefaultFenceWaitMs = 20000;

std::string frame_text(uint64_t id) { return "frame " + std::to_string(id); }

}  // namespace

FrameRunner::Frame::~Frame() {
    if (in_fence >= 0) ::close(in_fence);
}

FrameRunner::FrameRunner(std::shared_ptr<Context> context)
    : context_(std::move(context)), flags_(context_->flags()) {}

void FrameRunner::stop() {
    {
        std::lock_guard<std::mutex> lock(mu_);
        stopping_ = true;
        if (cancel_[1] >= 0) {
            const char stop = 1;
            (void)!::write(cancel_[1], &stop, 1);
        }
    }
    cv_.notify_all();
    if (worker_.joinable() && worker_.get_id() != std::this_thread::get_id()) worker_.join();
}

FrameRunner::~FrameRunner() {
    // The last reference went on the worker thread, as its loop ended.
    if (worker_.joinable()) {
        RKNN_LOG_AT(3, "rknn_destroy: the handle's last reference was its own frame worker's; it ends on that thread");
        worker_.detach();
    }
    for (int fd : cancel_)
        if (fd >= 0) ::close(fd);
}

Status FrameRunner::execute(Frame& frame, int cancel_fd) {
    Status status;
    if (frame.in_fence >= 0) {
        status = wait_for_fence(frame.in_fence, frame.in_fence_timeout_ms, cancel_fd);
        ::close(frame.in_fence);
        frame.in_fence = -1;
    }
    if (status.is_ok()) status = context_->run((flags_ & RKNN_FLAG_ASYNC_MASK) ? &frame.outputs : nullptr);
    frame.out_fence.signal();  // also after a failure: nobody waits forever
    return status.is_ok() ? status : status.with_context(frame_text(frame.id));
}

void FrameRunner::work() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
        cv_.wait(lock, [&] { return stopping_ || queued_ != nullptr; });
        if (stopping_) {
            if (queued_ != nullptr) {
                queued_->status = Status(StatusCode::kFailedPrecondition, "the context was destroyed first");
                queued_->out_fence.signal();
                queued_->done = true;
                queued_.reset();
                cv_.notify_all();
            }
            return;
        }
        std::shared_ptr<Frame> frame = std::move(queued_);
        const int cancel_fd = cancel_[0];
        lock.unlock();
        const Status status = execute(*frame, cancel_fd);
        // Said here too: with a pipelined or non-blocking run, the client
        // may hear of it only at a later call, or never.
        if (!status.is_ok()) RKNN_LOGE("rknn_run: %s", status.message().c_str());
        lock.lock();
        frame->status = status;
        frame->done = true;
        if (status.is_ok()) last_ok_id_ = std::max(last_ok_id_, frame->id);
        cv_.notify_all();
    }
}

void FrameRunner::wait_idle(std::unique_lock<std::mutex>& lock) {
    // Re-checked on every wake-up: another thread (misusing the handle) may
    // have queued a frame meanwhile.
    cv_.wait(lock, [&] { return queued_ == nullptr && (in_flight_ == nullptr || in_flight_->done); });
}

void FrameRunner::settle() {
    std::unique_lock<std::mutex> lock(mu_);
    wait_idle(lock);
}

Status FrameRunner::run(rknn_run_extend* extend) {
    const bool pipelined = (flags_ & RKNN_FLAG_ASYNC_MASK) != 0;
    const bool non_block = pipelined || (extend != nullptr && extend->non_block != 0);
    if ((flags_ & RKNN_FLAG_FENCE_OUT_OUTSIDE) && extend == nullptr)
        return Status(StatusCode::kInvalidArgument,
                      "RKNN_FLAG_FENCE_OUT_OUTSIDE: rknn_run needs an rknn_run_extend to return the fence in");
    // A blocking run allocates nothing (clients count on it, as
    // run_allocation_test does); a frame for the worker lives on the heap.
    Frame local;
    std::shared_ptr<Frame> shared = non_block ? std::make_shared<Frame>() : nullptr;
    Frame* frame = non_block ? shared.get() : &local;
    if ((flags_ & RKNN_FLAG_FENCE_IN_OUTSIDE) && extend != nullptr && extend->fence_fd >= 0) {
        RKNN_ASSIGN_OR_RETURN(frame->in_fence, import_fence(extend->fence_fd));
        frame->in_fence_timeout_ms = extend->timeout_ms > 0 ? extend->timeout_ms : kDefaultFenceWaitMs;
    }
    if (flags_ & RKNN_FLAG_FENCE_OUT_OUTSIDE) {
        RKNN_ASSIGN_OR_RETURN(frame->out_fence, OutFence::create());
    }

    std::unique_lock<std::mutex> lock(mu_);
    if (!pipelined && in_flight_ != nullptr && !waited_)
        return make_status(StatusCode::kFailedPrecondition,
                           "frame %llu was run with non_block = 1 and not waited for: call rknn_wait before the next "
                           "rknn_run",
                           static_cast<unsigned long long>(in_flight_->id));
    if (non_block && !worker_.joinable()) {
        if (::pipe2(cancel_, O_CLOEXEC) != 0) {
            cancel_[0] = cancel_[1] = -1;
            return Status(StatusCode::kResourceExhausted, "no fds for the run worker");
        }
        worker_ = std::thread([self = shared_from_this()] { self->work(); });
    }
    if (pipelined) {
        // One frame at a time runs in a context: this one starts when the
        // one before is over, whose outputs rknn_outputs_get hands out next.
        wait_idle(lock);
        if (in_flight_ != nullptr) previous_ = std::move(in_flight_);
    }
    frame->id = ++last_id_;
    if (extend != nullptr) extend->frame_id = frame->id;
    if (!non_block) {
        const int cancel_fd = cancel_[0];
        lock.unlock();
        const Status status = execute(*frame, cancel_fd);  // a failed run's fence is closed with the frame
        if (!status.is_ok()) {
            if (flags_ & RKNN_FLAG_FENCE_OUT_OUTSIDE) extend->fence_fd = -1;
            return status;
        }
        if (flags_ & RKNN_FLAG_FENCE_OUT_OUTSIDE) extend->fence_fd = frame->out_fence.take_client_fd();
        lock.lock();
        last_ok_id_ = std::max(last_ok_id_, frame->id);
        return Status::ok();
    }
    if (flags_ & RKNN_FLAG_FENCE_OUT_OUTSIDE) extend->fence_fd = frame->out_fence.take_client_fd();
    in_flight_ = shared;
    waited_ = false;
    queued_ = std::move(shared);
    lock.unlock();
    cv_.notify_all();
    return Status::ok();
}

Status FrameRunner::wait(rknn_run_extend* extend) {
    const bool pipelined = (flags_ & RKNN_FLAG_ASYNC_MASK) != 0;
    std::unique_lock<std::mutex> lock(mu_);
    if (in_flight_ == nullptr || (waited_ && !pipelined))
        return Status(StatusCode::kFailedPrecondition,
                      "no run to wait for: rknn_wait follows rknn_run with non_block = 1 (or RKNN_FLAG_ASYNC_MASK)");
    const std::shared_ptr<Frame> frame = in_flight_;
    const int timeout_ms = extend != nullptr ? extend->timeout_ms : 0;
    if (timeout_ms > 0) {
        if (!cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return frame->done; }))
            return make_status(StatusCode::kDeadlineExceeded,
                               "frame %llu is still running after %d ms (it goes on; rknn_wait again to collect it)",
                               static_cast<unsigned long long>(frame->id), timeout_ms);
    } else {
        cv_.wait(lock, [&] { return frame->done; });
    }
    waited_ = true;
    if (extend != nullptr) extend->frame_id = frame->id;
    return frame->status;
}

Status FrameRunner::outputs_get(uint32_t count, rknn_output* outputs, rknn_output_extend* extend) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!(flags_ & RKNN_FLAG_ASYNC_MASK)) {
        if (in_flight_ != nullptr && !waited_)
            return make_status(StatusCode::kFailedPrecondition,
                               "frame %llu was run with non_block = 1 and not waited for: call rknn_wait before "
                               "rknn_outputs_get",
                               static_cast<unsigned long long>(in_flight_->id));
        const uint64_t id = last_ok_id_;  // whose outputs the context holds
        lock.unlock();
        RKNN_RETURN_IF_ERROR(context_->outputs_get(count, outputs));
        if (extend != nullptr) extend->frame_id = id;
        return Status::ok();
    }
    if (in_flight_ == nullptr) return Status(StatusCode::kFailedPrecondition, "rknn_run has not been called yet");
    const std::shared_ptr<Frame> frame = (waited_ || previous_ == nullptr) ? in_flight_ : previous_;
    cv_.wait(lock, [&] { return frame->done; });
    lock.unlock();
    if (!frame->status.is_ok()) return frame->status;
    RKNN_RETURN_IF_ERROR(context_->outputs_get_from(frame->outputs, count, outputs).with_context(frame_text(frame->id)));
    if (extend != nullptr) extend->frame_id = frame->id;
    return Status::ok();
}

}  // namespace rknn::runtime
