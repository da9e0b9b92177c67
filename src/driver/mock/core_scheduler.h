// Which job runs on which emulated core, and when: the mock kernel's answer
// to the vendor driver's per-core job queues.
//
// A job holds its cores from start to end. Jobs on different cores run at
// the same time; jobs wanting a core start in the order they asked for it
// (a job waits behind every earlier waiter it shares a core with, and behind
// every earlier waiter in another address space), except that a more urgent
// priority goes ahead of less urgent waiters. A job for
// "any core" (rknpu's core_mask 0) takes the lowest idle core that no
// earlier waiter wants, as the vendor driver gives it an idle core. The NPU
// translates through one address space at a time (DmaPort has no core
// argument), so jobs run together only in the same space; a job with
// injected faults runs alone. Busy time is counted per core.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <list>
#include <mutex>

namespace rknn::driver::mock {

class AddressSpace;

class CoreScheduler {
public:
    static constexpr int kMaxCores = 3;
    // `active_space` is what the NPU translates through: set while any job
    // runs, nullptr when none does.
    CoreScheduler(int num_cores, std::atomic<AddressSpace*>* active_space);

    // Blocks until the job may start and returns the cores it now holds:
    // `mask`, or for mask 0 one idle core. A lower `priority` value is more
    // urgent (rknpu_submit.priority as the runtime fills it: its PRIOR_*
    // init flag, 0 high .. 2 low) and goes ahead of waiters with higher ones.
    uint32_t acquire(uint32_t mask, AddressSpace* space, bool alone, int32_t priority = 0);
    // The job is over; `busy_ns` of it are counted on each of its cores.
    void release(uint32_t cores, int64_t busy_ns);

    // Nanoseconds each core spent on jobs since the device was made.
    int64_t busy_ns(int core) const;
    // Jobs running now, and jobs waiting (tests).
    int running() const;
    int waiting() const;

private:
    struct Waiter {
        uint32_t mask;  // 0: any one core
        AddressSpace* space;
        bool alone;
        int32_t priority;
    };
    // The cores `w` may take now (0: not yet); waiters before it in
    // waiting_ come first.
    uint32_t startable(const Waiter& w, std::list<Waiter>::const_iterator position, AddressSpace* space) const;

    const int num_cores_;
    std::atomic<AddressSpace*>* const active_space_;
    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::list<Waiter> waiting_;
    uint32_t busy_ = 0;
    int running_ = 0;
    bool alone_running_ = false;
    std::array<int64_t, kMaxCores> busy_ns_{};
};

}  // namespace rknn::driver::mock
