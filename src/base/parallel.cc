#include "base/parallel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include <unistd.h>

namespace rknn {
namespace {

constexpr int kMaxThreads = 4;
constexpr int kChunksPerThread = 8;

int configured_threads() {
    if (const char* env = std::getenv("RKNN_HOST_THREADS")) {
        const int n = std::atoi(env);
        if (n >= 1) return std::min(n, 64);
    }
    const unsigned cores = std::thread::hardware_concurrency();
    return std::max(1, std::min(kMaxThreads, static_cast<int>(cores)));
}

// Spin iterations a thread polls before it sleeps: jobs come back to back
// (one per emulated unit, every few microseconds to milliseconds), and a
// futex wake-up costs tens of microseconds on a loaded VM.
constexpr int kSpins = 20000;
// A helper spins at most kSpins after a job, and fewer when jobs come
// further apart than a full spin lasts: a job that comes within kSoonAfter of
// the end of the spin (caught, or just missed) doubles the next spin, a later
// one halves it (down to kFewestSpins). Callers with serial work between
// their loops (the converter's float reference) then stop burning a core
// that another process could use, and back-to-back jobs keep the full spin.
constexpr int kFewestSpins = 256;
constexpr std::chrono::microseconds kSoonAfter{1000};  // about a full spin

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

// Helpers poll, then sleep, until a job is posted; the caller takes chunks of
// the range with them and waits for the rest. One job at a time (busy_
// guards it). Chunks are handed out through one counter, so a helper that
// wakes late takes fewer of them instead of holding the caller up.
class Pool {
public:
    explicit Pool(int helpers) {
        for (int i = 0; i < helpers; ++i) threads_.emplace_back([this] { loop(); });
    }
    ~Pool() {
        {
            std::lock_guard<std::mutex> lock(mu_);
            stop_.store(true);
        }
        wake_.notify_all();
        for (std::thread& t : threads_) t.join();
    }

    int threads() const { return static_cast<int>(threads_.size()) + 1; }

    // False when another caller holds the pool, when called from inside a
    // job (nested), or in a child forked after the pool started (it has no
    // helper threads).
    bool try_run(const std::function<void()>& job) {
        if (inside_job_ || ::getpid() != owner_pid_) return false;
        std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
        if (!busy.owns_lock()) return false;
        {
            std::lock_guard<std::mutex> lock(mu_);
            job_ = &job;
            pending_.store(static_cast<int>(threads_.size()));
            failure_ = nullptr;
            generation_.fetch_add(1);
        }
        wake_.notify_all();
        std::exception_ptr mine;
        run_job(job, &mine);
        for (int i = 0; i < kSpins && pending_.load(std::memory_order_acquire) != 0; ++i) cpu_relax();
        {
            std::unique_lock<std::mutex> lock(mu_);
            done_.wait(lock, [this] { return pending_.load() == 0; });
            job_ = nullptr;
        }
        // Every helper has finished with `job` before an exception leaves.
        if (mine != nullptr) std::rethrow_exception(mine);
        if (failure_ != nullptr) std::rethrow_exception(failure_);
        return true;
    }

private:
    static void run_job(const std::function<void()>& job, std::exception_ptr* failure) {
        inside_job_ = true;
        try {
            job();
        } catch (...) {
            *failure = std::current_exception();
        }
        inside_job_ = false;
    }

    void loop() {
        uint64_t seen = 0;
        int spins = kSpins;
        for (;;) {
            int i = 0;
            for (; i < spins && generation_.load(std::memory_order_acquire) == seen && !stop_.load(); ++i) cpu_relax();
            const bool caught = i < spins;
            const auto spun = caught ? std::chrono::steady_clock::time_point{} : std::chrono::steady_clock::now();
            const std::function<void()>* job = nullptr;
            {
                std::unique_lock<std::mutex> lock(mu_);
                wake_.wait(lock, [&] { return stop_.load() || generation_.load() != seen; });
                if (stop_.load()) return;
                seen = generation_.load();
                job = job_;
            }
            const bool soon = caught || std::chrono::steady_clock::now() - spun < kSoonAfter;
            spins = soon ? std::min(kSpins, spins * 2) : std::max(kFewestSpins, spins / 2);
            std::exception_ptr failure;
            run_job(*job, &failure);
            {
                std::lock_guard<std::mutex> lock(mu_);
                if (failure != nullptr && failure_ == nullptr) failure_ = failure;
                pending_.fetch_sub(1);
            }
            done_.notify_one();
        }
    }

    static thread_local bool inside_job_;
    const pid_t owner_pid_ = ::getpid();
    std::vector<std::thread> threads_;
    std::mutex busy_;  // held by the caller whose job runs
    std::mutex mu_;    // guards job_ and failure_; generation_, pending_ and stop_ change under it
    std::condition_variable wake_, done_;
    const std::function<void()>* job_ = nullptr;
    std::atomic<uint64_t> generation_{0};
    std::atomic<int> pending_{0};
    std::exception_ptr failure_;  // the first a helper's job threw
    std::atomic<bool> stop_{false};
};

thread_local bool Pool::inside_job_ = false;

Pool* pool() {
    static Pool* instance = host_threads() > 1 ? new Pool(host_threads() - 1) : nullptr;  // lives as long as the process
    return instance;
}

}  // namespace

int host_threads() {
    static const int threads = configured_threads();
    return threads;
}

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& body) {
    if (n <= 0) return;
    grain = std::max<int64_t>(1, grain);
    const int64_t grains = (n + grain - 1) / grain;
    Pool* p = grains > 1 ? pool() : nullptr;
    if (p == nullptr) {
        body(0, n);
        return;
    }
    // A few chunks per thread, so that the work evens out when a thread
    // starts late; each chunk is whole grains.
    const int64_t chunks = std::min<int64_t>(grains, int64_t{kChunksPerThread} * p->threads());
    const int64_t chunk = (grains + chunks - 1) / chunks * grain;
    std::atomic<int64_t> next{0};
    const std::function<void()> job = [&] {
        for (int64_t begin = next.fetch_add(chunk); begin < n; begin = next.fetch_add(chunk))
            body(begin, std::min(n, begin + chunk));
    };
    if (!p->try_run(job)) body(0, n);
}

}  // namespace rknn
