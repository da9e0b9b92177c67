#include "base/parallel.h"

#include <algorithm>
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

int configured_threads() {
    if (const char* env = std::getenv("RKNN_HOST_THREADS")) {
        const int n = std::atoi(env);
        if (n >= 1) return std::min(n, 64);
    }
    const unsigned cores = std::thread::hardware_concurrency();
    return std::max(1, std::min(kMaxThreads, static_cast<int>(cores)));
}

// Helpers sleep until a job is posted; the caller runs share 0 and waits for
// the rest. One job at a time (busy_ guards it).
class Pool {
public:
    explicit Pool(int helpers) {
        for (int i = 0; i < helpers; ++i) threads_.emplace_back([this, i] { loop(i + 1); });
    }
    ~Pool() {
        {
            std::lock_guard<std::mutex> lock(mu_);
            stop_ = true;
        }
        wake_.notify_all();
        for (std::thread& t : threads_) t.join();
    }

    int shares() const { return static_cast<int>(threads_.size()) + 1; }

    // False when another caller holds the pool, when called from inside a
    // job (nested), or in a child forked after the pool started (it has no
    // helper threads).
    bool try_run(const std::function<void(int share)>& job) {
        if (inside_job_ || ::getpid() != owner_pid_) return false;
        std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
        if (!busy.owns_lock()) return false;
        {
            std::lock_guard<std::mutex> lock(mu_);
            job_ = &job;
            pending_ = static_cast<int>(threads_.size());
            failure_ = nullptr;
            ++generation_;
        }
        wake_.notify_all();
        std::exception_ptr mine;
        run_share(job, 0, &mine);
        std::unique_lock<std::mutex> lock(mu_);
        done_.wait(lock, [this] { return pending_ == 0; });
        job_ = nullptr;
        // Every share has finished with `job` before an exception leaves.
        if (mine != nullptr) std::rethrow_exception(mine);
        if (failure_ != nullptr) std::rethrow_exception(failure_);
        return true;
    }

private:
    static void run_share(const std::function<void(int)>& job, int share, std::exception_ptr* failure) {
        inside_job_ = true;
        try {
            job(share);
        } catch (...) {
            *failure = std::current_exception();
        }
        inside_job_ = false;
    }

    void loop(int share) {
        uint64_t seen = 0;
        for (;;) {
            const std::function<void(int)>* job = nullptr;
            {
                std::unique_lock<std::mutex> lock(mu_);
                wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
                if (stop_) return;
                seen = generation_;
                job = job_;
            }
            std::exception_ptr failure;
            run_share(*job, share, &failure);
            {
                std::lock_guard<std::mutex> lock(mu_);
                if (failure != nullptr && failure_ == nullptr) failure_ = failure;
                --pending_;
            }
            done_.notify_one();
        }
    }

    static thread_local bool inside_job_;
    const pid_t owner_pid_ = ::getpid();
    std::vector<std::thread> threads_;
    std::mutex busy_;  // held by the caller whose job runs
    std::mutex mu_;
    std::condition_variable wake_, done_;
    const std::function<void(int)>* job_ = nullptr;
    uint64_t generation_ = 0;
    int pending_ = 0;
    std::exception_ptr failure_;  // the first a helper's share threw
    bool stop_ = false;
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
    const int64_t chunks = (n + grain - 1) / grain;
    Pool* p = chunks > 1 ? pool() : nullptr;
    if (p == nullptr) {
        body(0, n);
        return;
    }
    const int64_t shares = std::min<int64_t>(p->shares(), chunks);
    const int64_t per_share = (chunks + shares - 1) / shares * grain;
    const std::function<void(int)> job = [&](int share) {
        const int64_t begin = share * per_share;
        const int64_t end = std::min(n, begin + per_share);
        if (begin < end) body(begin, end);
    };
    if (!p->try_run(job)) body(0, n);
}

}  // namespace rknn
