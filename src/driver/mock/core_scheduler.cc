#include "driver/mock/core_scheduler.h"

#include <iterator>

namespace rknn::driver::mock {

CoreScheduler::CoreScheduler(int num_cores, std::atomic<AddressSpace*>* active_space)
    : num_cores_(num_cores < 1 ? 1 : (num_cores > kMaxCores ? kMaxCores : num_cores)), active_space_(active_space) {}

uint32_t CoreScheduler::startable(const Waiter& w, std::list<Waiter>::const_iterator position,
                                  AddressSpace* space) const {
    if (alone_running_) return 0;
    if (!w.alone && running_ > 0 && active_space_->load() != space) return 0;
    // Waiters ahead of this one: a more urgent priority, or the same one
    // and earlier. It may not take cores they are owed; one of them that
    // wants any core, runs alone, or is in another space (which this job
    // would lock out) keeps it waiting altogether.
    uint32_t owed = 0;
    bool before = true, anyone_ahead = false;
    for (auto it = waiting_.begin(); it != waiting_.end(); ++it) {
        if (it == position) {
            before = false;
            continue;
        }
        if (!(it->priority < w.priority || (it->priority == w.priority && before))) continue;
        anyone_ahead = true;
        if (it->alone || it->mask == 0 || it->space != space) return 0;
        owed |= it->mask;
    }
    if (w.alone) return (running_ == 0 && !anyone_ahead) ? (w.mask != 0 ? w.mask : 1u) : 0;
    if (w.mask != 0) return (w.mask & (busy_ | owed)) == 0 ? w.mask : 0;
    for (int core = 0; core < num_cores_; ++core) {
        const uint32_t bit = 1u << core;
        if (!((busy_ | owed) & bit)) return bit;
    }
    return 0;
}

uint32_t CoreScheduler::acquire(uint32_t mask, AddressSpace* space, bool alone, int32_t priority) {
    std::unique_lock<std::mutex> lock(mu_);
    const auto me = waiting_.insert(waiting_.end(), Waiter{mask, space, alone, priority});
    uint32_t cores = 0;
    cv_.wait(lock, [&] { return (cores = startable(*me, me, space)) != 0; });
    waiting_.erase(me);
    busy_ |= cores;
    if (running_++ == 0) active_space_->store(space);
    alone_running_ = alone;
    cv_.notify_all();  // a waiter behind this one may start now too
    return cores;
}

void CoreScheduler::release(uint32_t cores, int64_t busy_ns) {
    {
        std::lock_guard<std::mutex> lock(mu_);
        busy_ &= ~cores;
        for (int core = 0; core < num_cores_; ++core)
            if (cores & (1u << core)) busy_ns_[static_cast<size_t>(core)] += busy_ns;
        if (--running_ == 0) active_space_->store(nullptr);
        alone_running_ = false;
    }
    cv_.notify_all();
}

int64_t CoreScheduler::busy_ns(int core) const {
    std::lock_guard<std::mutex> lock(mu_);
    return core >= 0 && core < num_cores_ ? busy_ns_[static_cast<size_t>(core)] : 0;
}

int CoreScheduler::running() const {
    std::lock_guard<std::mutex> lock(mu_);
    return running_;
}

int CoreScheduler::waiting() const {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<int>(waiting_.size());
}

}  // namespace rknn::driver::mock
