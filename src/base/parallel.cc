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

// How long a helper polls for the next job before it sleeps: jobs come back
// to back (one per emulated unit, every few microseconds to milliseconds),
// and waking a sleeping thread costs tens of microseconds, and up to a
// millisecond on a loaded VM. The poll adapts between kShortestPoll and
// kLongestPoll: a job that comes while the helper polls, or soon after it
// gave up, doubles the next poll; a later one halves it. Callers with long
// serial work between their loops (the converter's float reference) then
// stop burning a core that another process could use.
constexpr std::chrono::microseconds kLongestPoll{2000};
constexpr std::chrono::microseconds kShortestPoll{10};
constexpr int kPausesPerClockRead = 64;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

// Helpers poll, then sleep, until a job is posted; the caller takes chunks of
// the range with them. One job at a time (busy_ guards it).
//
// A helper joins a job while it is open; the caller closes it once its own
// chunks are done and waits only for the helpers that joined. A helper that
// wakes late (asleep, or its CPU taken away) finds the job closed and leaves
// it alone, so the caller never waits for a thread that did none of the
// work. Chunks are handed out through one counter, so a helper that joins
// late takes fewer of them.
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
        job_ = &job;
        failure_ = nullptr;
        finished_.store(0, std::memory_order_relaxed);
        generation_ += 1;
        entry_.store(generation_ << kGenerationShift | kOpen);  // publishes job_
        if (sleepers_.load() > 0) {
            { std::lock_guard<std::mutex> lock(mu_); }  // a helper between its check and its wait gets the notify
            wake_.notify_all();
        }
        std::exception_ptr mine;
        run_job(job, &mine);
        const int joined = static_cast<int>(entry_.fetch_and(~kOpen) & kJoinedMask);
        const auto deadline = std::chrono::steady_clock::now() + kLongestPoll;
        for (int i = 0; finished_.load(std::memory_order_acquire) < joined; ++i) {
            if (i % kPausesPerClockRead == 0 && std::chrono::steady_clock::now() > deadline) break;
            cpu_relax();
        }
        {
            std::unique_lock<std::mutex> lock(mu_);
            done_.wait(lock, [&] { return finished_.load() >= joined; });
            job_ = nullptr;
        }
        // Every helper that joined has finished with `job` before an exception leaves.
        if (mine != nullptr) std::rethrow_exception(mine);
        if (failure_ != nullptr) std::rethrow_exception(failure_);
        return true;
    }

private:
    static constexpr uint64_t kJoinedMask = 0x7fff;
    static constexpr uint64_t kOpen = 0x8000;
    static constexpr int kGenerationShift = 16;

    static void run_job(const std::function<void()>& job, std::exception_ptr* failure) {
        inside_job_ = true;
        try {
            job();
        } catch (...) {
            *failure = std::current_exception();
        }
        inside_job_ = false;
    }

    bool posted(uint64_t seen) const { return entry_.load() >> kGenerationShift != seen; }

    // Polls for a generation other than `seen` for up to `poll`, then sleeps
    // until one comes. Returns false when the pool stops; *past_poll says how
    // long after the poll's end the job came (0 when the poll caught it).
    bool wait_for_post(uint64_t seen, std::chrono::microseconds poll, std::chrono::microseconds* past_poll) {
        *past_poll = std::chrono::microseconds{0};
        const auto deadline = std::chrono::steady_clock::now() + poll;
        for (int i = 0; !posted(seen) && !stop_.load(std::memory_order_relaxed); ++i) {
            if (i % kPausesPerClockRead == 0 && std::chrono::steady_clock::now() > deadline) {
                std::unique_lock<std::mutex> lock(mu_);
                sleepers_.fetch_add(1);
                wake_.wait(lock, [&] { return stop_.load() || posted(seen); });
                sleepers_.fetch_sub(1);
                *past_poll = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - deadline);
                break;
            }
            cpu_relax();
        }
        return !stop_.load();
    }

    void loop() {
        uint64_t seen = 0;
        std::chrono::microseconds poll = kLongestPoll;
        for (;;) {
            std::chrono::microseconds past_poll;
            if (!wait_for_post(seen, poll, &past_poll)) return;
            poll = past_poll < kLongestPoll ? std::min(kLongestPoll, poll * 2) : std::max(kShortestPoll, poll / 2);
            // Join whichever job is open; none is when the caller has closed it already.
            uint64_t entry = entry_.load();
            bool joined = false;
            while ((entry & kOpen) != 0 && !joined) joined = entry_.compare_exchange_weak(entry, entry + 1);
            seen = entry >> kGenerationShift;  // the generation joined, or the last one seen closed
            if (!joined) continue;
            std::exception_ptr failure;
            run_job(*job_, &failure);
            {
                std::lock_guard<std::mutex> lock(mu_);
                if (failure != nullptr && failure_ == nullptr) failure_ = failure;
                finished_.fetch_add(1);
            }
            done_.notify_one();
        }
    }

    static thread_local bool inside_job_;
    const pid_t owner_pid_ = ::getpid();
    std::vector<std::thread> threads_;
    std::mutex busy_;  // held by the caller whose job runs
    std::mutex mu_;    // the sleeps' mutex; guards failure_
    std::condition_variable wake_, done_;
    const std::function<void()>* job_ = nullptr;  // written before entry_ opens the job
    uint64_t generation_ = 0;                     // the caller's count of jobs (under busy_)
    // The job's generation, whether it is open, and how many helpers joined it.
    std::atomic<uint64_t> entry_{0};
    std::atomic<int> finished_{0};  // helpers of this job that are done with it
    std::atomic<int> sleepers_{0};
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
