#include "emulator/npu_device.h"

#include "base/log.h"

namespace rknn::emulator {

namespace r = hw::reg;

NpuDevice::NpuDevice(const hw::SocProfile& soc, DmaPort* dma, Options options) : soc_(soc), options_(options) {
    for (int i = 0; i < soc.num_cores; ++i) {
        auto c = std::make_unique<Core>();
        c->npu = std::make_unique<NpuCore>(soc, i, dma, options.strict);
        cores_.push_back(std::move(c));
    }
    if (options_.threaded) {
        for (auto& c : cores_) {
            Core* core = c.get();
            c->worker = std::thread([this, core] { worker_loop(core); });
        }
    }
}

NpuDevice::~NpuDevice() {
    for (auto& c : cores_) {
        {
            std::lock_guard<std::mutex> lock(c->mu);
            c->stop = true;
        }
        c->worker_cv.notify_all();
    }
    for (auto& c : cores_) {
        if (c->worker.joinable()) c->worker.join();
    }
}

void NpuDevice::set_stop_handler(StopHandler handler) {
    std::lock_guard<std::mutex> lock(handler_mu_);
    handler_ = std::move(handler);
}

void NpuDevice::write(int core, uint32_t offset, uint32_t value) {
    if (core < 0 || core >= num_cores()) return;
    Core& c = *cores_[static_cast<size_t>(core)];
    std::unique_lock<std::mutex> lock(c.mu);
    if (c.running) {
        // The driver may clear the kick bit or touch the interrupt registers
        // while the core works; anything else would race the hardware.
        if (offset != r::PC_OPERATION_ENABLE && offset != r::PC_INTERRUPT_CLEAR && offset != r::PC_INTERRUPT_MASK) {
            RKNN_LOGW("NPU core %d: register 0x%04x written while the core is busy; ignored", core, offset);
            return;
        }
        if (offset == r::PC_OPERATION_ENABLE) {
            c.npu->latch_op_enable(value);  // the driver's "1 then 0": no second kick
            return;
        }
    }
    if (!c.npu->mmio_write(offset, value)) return;
    c.running = true;
    if (c.hang_next) {
        c.hang_next = false;
        c.hanging = true;
        return;  // never finishes until reset()
    }
    if (options_.threaded) {
        c.kick = true;
        if (!c.claimed) c.worker_cv.notify_all();
        return;
    }
    execute(&c, &lock);
}

void NpuDevice::execute(Core* core, std::unique_lock<std::mutex>* lock) {
    // The program runs without the lock: the driver only polls or waits meanwhile.
    lock->unlock();
    ProgramResult result = core->npu->run();
    lock->lock();
    core->last = result;
    core->running = false;
    core->cv.notify_all();
    StopHandler handler;
    {
        std::lock_guard<std::mutex> hl(handler_mu_);
        handler = handler_;
    }
    if (handler) {
        lock->unlock();
        handler(core->npu->index(), result);
        lock->lock();
    }
}

void NpuDevice::worker_loop(Core* core) {
    std::unique_lock<std::mutex> lock(core->mu);
    for (;;) {
        core->worker_cv.wait(lock, [core] { return core->stop || (core->kick && !core->claimed); });
        if (core->stop) return;
        core->kick = false;
        execute(core, &lock);
    }
}

void NpuDevice::claim(int core) {
    if (core < 0 || core >= num_cores()) return;
    Core& c = *cores_[static_cast<size_t>(core)];
    std::lock_guard<std::mutex> lock(c.mu);
    c.claimed = true;
}

void NpuDevice::release(int core) {
    if (core < 0 || core >= num_cores()) return;
    Core& c = *cores_[static_cast<size_t>(core)];
    std::lock_guard<std::mutex> lock(c.mu);
    c.claimed = false;
    if (c.kick) c.worker_cv.notify_all();
}

bool NpuDevice::run_claimed(int core) {
    if (core < 0 || core >= num_cores()) return false;
    Core& c = *cores_[static_cast<size_t>(core)];
    std::unique_lock<std::mutex> lock(c.mu);
    if (!c.kick) return false;
    c.kick = false;
    execute(&c, &lock);
    return true;
}

uint32_t NpuDevice::read(int core, uint32_t offset) const {
    if (core < 0 || core >= num_cores()) return 0;
    const Core& c = *cores_[static_cast<size_t>(core)];
    std::lock_guard<std::mutex> lock(c.mu);
    return c.npu->mmio_read(offset);
}

bool NpuDevice::wait_idle(int core, std::chrono::milliseconds timeout) {
    if (core < 0 || core >= num_cores()) return true;
    Core& c = *cores_[static_cast<size_t>(core)];
    std::unique_lock<std::mutex> lock(c.mu);
    return c.cv.wait_for(lock, timeout, [&c] { return !c.running; });
}

bool NpuDevice::busy(int core) const {
    if (core < 0 || core >= num_cores()) return false;
    const Core& c = *cores_[static_cast<size_t>(core)];
    std::lock_guard<std::mutex> lock(c.mu);
    return c.running;
}

ProgramResult NpuDevice::last_result(int core) const {
    if (core < 0 || core >= num_cores()) return {};
    const Core& c = *cores_[static_cast<size_t>(core)];
    std::lock_guard<std::mutex> lock(c.mu);
    return c.last;
}

void NpuDevice::reset(int core) {
    if (core < 0 || core >= num_cores()) return;
    Core& c = *cores_[static_cast<size_t>(core)];
    std::unique_lock<std::mutex> lock(c.mu);
    // A program in flight finishes first (the model cannot abort mid-task);
    // a hung one is simply dropped, and so is one a claimer has not started.
    c.cv.wait(lock, [&c] { return !c.running || c.hanging || (c.kick && c.claimed); });
    c.hanging = false;
    c.running = false;
    c.kick = false;
    c.npu->reset();
    c.cv.notify_all();
}

void NpuDevice::inject_hang(int core) {
    if (core < 0 || core >= num_cores()) return;
    Core& c = *cores_[static_cast<size_t>(core)];
    std::lock_guard<std::mutex> lock(c.mu);
    c.hang_next = true;
}

CoreStats NpuDevice::stats(int core) const {
    if (core < 0 || core >= num_cores()) return {};
    const Core& c = *cores_[static_cast<size_t>(core)];
    std::lock_guard<std::mutex> lock(c.mu);
    return c.npu->stats();
}

}  // namespace rknn::emulator
