#include "driver/mock/mock_kernel.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "driver/mock/mock_rknpu.h"
#include "driver/mock/mock_rocket.h"

namespace rknn::driver::mock {

uint8_t* MockKernel::DeviceDma::map(uint64_t addr, uint64_t len, bool for_write) {
    // Every mock buffer is writable by the NPU; only liveness and the address
    // space decide.
    AddressSpace* space = device_.active_space.load();
    return space == nullptr ? nullptr : space->resolve(addr, len, for_write);
}

uint64_t MockKernel::DeviceDma::content_version(uint64_t addr) {
    AddressSpace* space = device_.active_space.load();
    return space == nullptr ? 0 : space->version(addr);
}

MockKernel::MockKernel(const hw::SocProfile& soc, MockOptions options) : device_(soc, options), dma_(device_) {
    emulator::NpuDevice::Options npu_options;
    npu_options.strict = options.strict;
    npu_options.threaded = options.threaded;
    npu_ = std::make_unique<emulator::NpuDevice>(soc, &dma_, npu_options);
    runner_ = std::make_unique<JobRunner>(*npu_, soc);
    device_.npu = npu_.get();
    device_.runner = runner_.get();
}

MockKernel::~MockKernel() {
    {
        std::lock_guard<std::mutex> lock(mu_);
        files_.clear();  // objects go back to the device state before it is destroyed
    }
    // The NPU's worker threads call into the runner: join them first.
    npu_.reset();
    runner_.reset();
}

std::shared_ptr<MockFile> MockKernel::find(int fd) const {
    auto it = files_.find(fd);
    return it == files_.end() ? nullptr : it->second;
}

int MockKernel::open(const std::string& path) {
    std::shared_ptr<MockFile> file;
    if (path == kRknpuRenderNode) {
        file = std::make_shared<RknpuFile>(device_, false);
    } else if (path == kRknpuMiscNode) {
        file = std::make_shared<RknpuFile>(device_, true);
    } else if (path == kRocketNode) {
        file = std::make_shared<RocketFile>(device_);
    } else {
        return -ENOENT;
    }
    std::lock_guard<std::mutex> lock(mu_);
    const int fd = next_fd_++;
    files_[fd] = std::move(file);
    return fd;
}

int MockKernel::close(int fd) {
    if (fd < kFirstFd) return ::close(fd) == 0 ? 0 : -errno;  // a dma-buf or fence fd
    std::shared_ptr<MockFile> file;
    std::lock_guard<std::mutex> lock(mu_);
    auto it = files_.find(fd);
    if (it == files_.end()) return -EBADF;
    file = std::move(it->second);
    files_.erase(it);
    file.reset();  // releases the file's buffers under the lock (or its SUBMIT in flight does, at its end)
    return 0;
}

int MockKernel::dup(int fd) {
    if (fd >= kFirstFd) return -EINVAL;  // device fds are not duplicated by the back-ends
    const int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    return copy >= 0 ? copy : -errno;
}

namespace {
thread_local int t_kernel_calls = 0;  // depth of mock-kernel calls on this thread

struct KernelCall {
    KernelCall() { ++t_kernel_calls; }
    ~KernelCall() { --t_kernel_calls; }
    KernelCall(const KernelCall&) = delete;
    KernelCall& operator=(const KernelCall&) = delete;
};
}  // namespace

bool serving_kernel_call() { return t_kernel_calls > 0; }

int MockKernel::ioctl(int fd, unsigned long request, void* arg) {
    const KernelCall in_kernel;
    std::unique_lock<std::mutex> lock(mu_);
    std::shared_ptr<MockFile> file = find(fd);
    if (file == nullptr) return fd < kFirstFd ? -ENOTTY : -EBADF;
    struct Held {
        explicit Held(std::unique_lock<std::mutex>* held) { set_held_kernel_lock(held); }
        ~Held() { set_held_kernel_lock(nullptr); }
    };
    int ret;
    {
        const Held held(&lock);
        ret = file->ioctl(request, arg);
    }
    file.reset();  // the last reference when the fd was closed meanwhile: released under the lock
    return ret;
}

int MockKernel::mmap(int fd, uint64_t offset, size_t length, void** out_addr) {
    *out_addr = nullptr;
    if (fd < kFirstFd) {
        // A dma-buf fd (a memfd): the real mmap does it, after dma_buf_mmap's
        // check that the range lies inside the buffer (a memfd would map past
        // its end, and the first touch there would raise SIGBUS).
        struct stat st {};
        if (::fstat(fd, &st) != 0) return -errno;
        const uint64_t size = static_cast<uint64_t>(st.st_size);
        if (length == 0 || offset > size || length > size - offset) return -EINVAL;
        void* p = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, static_cast<off_t>(offset));
        if (p == MAP_FAILED) return -errno;
        *out_addr = p;
        return 0;
    }
    std::lock_guard<std::mutex> lock(mu_);
    std::shared_ptr<MockFile> file = find(fd);
    if (file == nullptr) return -EBADF;
    return file->mmap(offset, length, out_addr);
}

int MockKernel::munmap(void* addr, size_t length) { return ::munmap(addr, length) == 0 ? 0 : -errno; }

size_t MockKernel::live_objects() const {
    std::lock_guard<std::mutex> lock(mu_);
    return device_.objects.size();
}

size_t MockKernel::open_files() const {
    std::lock_guard<std::mutex> lock(mu_);
    return files_.size();
}

size_t MockKernel::domain_mappings(int domain) const {
    std::lock_guard<std::mutex> lock(mu_);
    if (domain < 0 || domain >= RKNPU_MAX_IOMMU_DOMAIN_NUM) return 0;
    return device_.domains[static_cast<size_t>(domain)]->mapping_count();
}

uint64_t MockKernel::free_sram() const {
    std::lock_guard<std::mutex> lock(mu_);
    return device_.sram.free_bytes();
}

void MockKernel::reset_device() {
    std::lock_guard<std::mutex> lock(mu_);
    runner_->reset_all();
}

}  // namespace rknn::driver::mock
