// The emulated NPU as the kernel driver sees it: per-core MMIO windows, a
// program started by the OP_EN write, and an interrupt when it stops.
//
// Each core runs its programs on its own thread (threaded mode), so a
// multi-core submit really runs the cores in parallel; in synchronous mode
// the kick write runs the program before returning (simpler to debug).
// A thread that is about to wait for a core anyway may claim it: the core's
// kicks then wait for that thread (run_claimed) instead of waking the
// worker, which saves two thread hand-offs per program (tens of
// microseconds, most of a small job's time).
// The stop handler is the "interrupt line": it is called once per started
// program, from the core's thread, with what happened.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "emulator/npu_core.h"

namespace rknn::emulator {

class NpuDevice {
public:
    struct Options {
        bool strict = true;    // malformed words stop the program
        bool threaded = true;  // one worker thread per core
    };

    NpuDevice(const hw::SocProfile& soc, DmaPort* dma, Options options);
    ~NpuDevice();
    NpuDevice(const NpuDevice&) = delete;
    NpuDevice& operator=(const NpuDevice&) = delete;

    const hw::SocProfile& soc() const { return soc_; }
    int num_cores() const { return static_cast<int>(cores_.size()); }

    // MMIO as the driver does it; a write of OP_EN = 1 starts the core's program.
    // Writes to a busy core other than OP_EN and the interrupt registers are dropped.
    void write(int core, uint32_t offset, uint32_t value);
    uint32_t read(int core, uint32_t offset) const;

    using StopHandler = std::function<void(int core, const ProgramResult& result)>;
    // A call already in flight may still complete after the handler is
    // replaced: destroy the device before what its handler refers to.
    void set_stop_handler(StopHandler handler);

    // While a core is claimed, a program its kick starts runs only when the
    // claimer calls run_claimed (on the claimer's thread). release() hands a
    // kick nobody ran yet to the worker.
    void claim(int core);
    void release(int core);
    // Runs the program the last kick started, if it has not run yet; true
    // when it ran (the stop handler has been called).
    bool run_claimed(int core);

    // Waits until the core is idle; false on timeout.
    bool wait_idle(int core, std::chrono::milliseconds timeout);
    bool busy(int core) const;
    // The last finished program's result.
    ProgramResult last_result(int core) const;
    // Soft reset of one core (registers, groups, LUT); ends an injected hang.
    // A task that is running finishes first: the model cannot abort mid-task.
    // A kick on a claimed core that its claimer has not run is dropped.
    void reset(int core);
    // Fault injection: the next program started on `core` never finishes
    // (until reset), as a board does after a bad program.
    void inject_hang(int core);
    CoreStats stats(int core) const;

private:
    struct Core {
        std::unique_ptr<NpuCore> npu;
        mutable std::mutex mu;
        std::condition_variable cv;         // state changes, for waiters on idle
        std::condition_variable worker_cv;  // work for the worker thread
        bool running = false;
        bool kick = false;     // started, not yet taken by a thread
        bool claimed = false;  // kicks wait for run_claimed
        bool hang_next = false;
        bool hanging = false;
        bool stop = false;
        ProgramResult last;
        std::thread worker;
    };

    void worker_loop(Core* core);
    void execute(Core* core, std::unique_lock<std::mutex>* lock);

    const hw::SocProfile& soc_;
    Options options_;
    std::vector<std::unique_ptr<Core>> cores_;
    std::mutex handler_mu_;
    StopHandler handler_;
};

}  // namespace rknn::emulator
