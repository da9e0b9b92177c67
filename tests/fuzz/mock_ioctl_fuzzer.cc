// libFuzzer target: the mock kernel's ioctl dispatcher. The input opens one
// of the three nodes (rknpu render, rknpu misc, rocket) and then plays a
// sequence of steps on it: ioctls with known or random command numbers and
// argument bytes, mmaps of what was created with bytes written into them
// (so that submits run whatever the input put in a buffer), device resets,
// closing and reopening the node. Nothing may crash, and once everything the
// input opened is closed the kernel holds no buffer and no file.
//
// Fields a real kernel reads through copy_from_user (user pointers) or as
// file descriptors are pointed at this target's own scratch memory and fds:
// an in-process mock cannot refuse a wild pointer as -EFAULT the way a
// kernel does, and a random fd could be the fuzzer's own. Sizes of new
// buffers are capped at 16 MiB and waits at 20 ms to keep executions short.
#include <drm.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "driver/mock/mock_kernel.h"
#include "fuzz_bytes.h"
#include "hw/soc_profile.h"
#include "rknpu_ioctl.h"
#include "rocket_accel.h"

namespace {

using rknn::driver::mock::MockKernel;
using rknn::fuzz::FuzzBytes;

enum class Node { kRender, kMisc, kRocket };

constexpr size_t kArgBytes = 16384;  // the largest _IOC_SIZE
constexpr uint64_t kMaxBufferBytes = 16u << 20;
constexpr uint32_t kMaxWaitMs = 20;

MockKernel& kernel() {
    static MockKernel* k = [] {
        rknn::driver::mock::MockOptions options;
        options.threaded = false;  // one thread: reproducible executions
        options.rocket_job_timeout_ms = kMaxWaitMs;
        return new MockKernel(*rknn::hw::find_soc("rk3588"), options);
    }();
    return *k;
}

const char* node_path(Node node) {
    switch (node) {
        case Node::kRender:
            return MockKernel::kRknpuRenderNode;
        case Node::kMisc:
            return MockKernel::kRknpuMiscNode;
        default:
            return MockKernel::kRocketNode;
    }
}

const std::vector<unsigned long>& known_commands(Node node) {
    static const std::vector<unsigned long> drm_generic = {DRM_IOCTL_VERSION, DRM_IOCTL_GEM_CLOSE,
                                                           DRM_IOCTL_PRIME_HANDLE_TO_FD, DRM_IOCTL_PRIME_FD_TO_HANDLE};
    static const std::vector<unsigned long> render = [] {
        std::vector<unsigned long> c = {DRM_IOCTL_RKNPU_ACTION,     DRM_IOCTL_RKNPU_SUBMIT,
                                        DRM_IOCTL_RKNPU_MEM_CREATE, DRM_IOCTL_RKNPU_MEM_CREATE_V1,
                                        DRM_IOCTL_RKNPU_MEM_MAP,    DRM_IOCTL_RKNPU_MEM_DESTROY,
                                        DRM_IOCTL_RKNPU_MEM_SYNC};
        c.insert(c.end(), drm_generic.begin(), drm_generic.end());
        return c;
    }();
    static const std::vector<unsigned long> misc = {IOCTL_RKNPU_ACTION,      IOCTL_RKNPU_SUBMIT,
                                                    IOCTL_RKNPU_MEM_CREATE,  IOCTL_RKNPU_MEM_MAP,
                                                    IOCTL_RKNPU_MEM_DESTROY, IOCTL_RKNPU_MEM_SYNC};
    static const std::vector<unsigned long> rocket = [] {
        std::vector<unsigned long> c = {DRM_IOCTL_ROCKET_CREATE_BO, DRM_IOCTL_ROCKET_SUBMIT, DRM_IOCTL_ROCKET_PREP_BO,
                                        DRM_IOCTL_ROCKET_FINI_BO};
        c.insert(c.end(), drm_generic.begin(), drm_generic.end());
        return c;
    }();
    return node == Node::kRender ? render : node == Node::kMisc ? misc : rocket;
}

// Everything one input opened, closed at its end.
struct Session {
    Node node = Node::kRender;
    int fd = -1;
    std::vector<int> owned_fds;         // dma-bufs and fences handed to us
    std::vector<uint64_t> map_offsets;  // mmap offsets the kernel reported
    std::vector<uint8_t> scratch = std::vector<uint8_t>(1 << 16);

    int pick_fd(FuzzBytes& in) {
        const uint32_t choice = in.below(static_cast<uint32_t>(owned_fds.size()) + 2);
        if (choice < owned_fds.size()) return owned_fds[choice];
        return choice == owned_fds.size() ? -1 : 0x7ffffff0;  // none, or one nobody has open
    }
    void own(int handed_out) {
        if (handed_out >= 0 && handed_out < MockKernel::kFirstFd) owned_fds.push_back(handed_out);
    }
};

// Which handler a command reaches on `node` (the dispatch goes by _IOC_NR).
enum class Handler {
    kOther,
    kVersion,
    kPrimeToFd,
    kFdToPrime,
    kRknpuSubmit,
    kRknpuMemCreate,
    kRknpuMemMap,
    kRocketSubmit,
    kRocketCreateBo
};

Handler handler_of(Node node, unsigned long cmd) {
    const unsigned nr = _IOC_NR(cmd);
    if (node == Node::kMisc) {
        if (nr == RKNPU_NR_SUBMIT) return Handler::kRknpuSubmit;
        if (nr == RKNPU_NR_MEM_CREATE) return Handler::kRknpuMemCreate;
        if (nr == RKNPU_NR_MEM_MAP) return Handler::kRknpuMemMap;
        return Handler::kOther;
    }
    if (nr == _IOC_NR(DRM_IOCTL_VERSION)) return Handler::kVersion;
    if (nr == _IOC_NR(DRM_IOCTL_PRIME_HANDLE_TO_FD)) return Handler::kPrimeToFd;
    if (nr == _IOC_NR(DRM_IOCTL_PRIME_FD_TO_HANDLE)) return Handler::kFdToPrime;
    if (node == Node::kRender) {
        if (nr == RKNPU_DRM_COMMAND_BASE + RKNPU_NR_SUBMIT) return Handler::kRknpuSubmit;
        if (nr == RKNPU_DRM_COMMAND_BASE + RKNPU_NR_MEM_CREATE) return Handler::kRknpuMemCreate;
        if (nr == RKNPU_DRM_COMMAND_BASE + RKNPU_NR_MEM_MAP) return Handler::kRknpuMemMap;
    } else {
        if (nr == ROCKET_DRM_COMMAND_BASE + DRM_ROCKET_SUBMIT) return Handler::kRocketSubmit;
        if (nr == ROCKET_DRM_COMMAND_BASE + DRM_ROCKET_CREATE_BO) return Handler::kRocketCreateBo;
    }
    return Handler::kOther;
}

template <typename T, typename Fn>
void patch(std::vector<uint8_t>& arg, Fn&& fn) {
    T value;
    std::memcpy(&value, arg.data(), sizeof(T));
    fn(value);
    std::memcpy(arg.data(), &value, sizeof(T));
}

template <typename T>
T read_back(const std::vector<uint8_t>& arg) {
    T value;
    std::memcpy(&value, arg.data(), sizeof(T));
    return value;
}

uint64_t pointer_to(const void* p) {
    return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p));
}

// Rocket's SUBMIT reads arrays of jobs, tasks and handles through user
// pointers: they are laid out in the session's scratch from the input.
void lay_out_rocket_jobs(Session& s, FuzzBytes& in, drm_rocket_submit* submit) {
    uint8_t* scratch = s.scratch.data();
    const size_t half = s.scratch.size() / 2;
    in.fill(scratch, half);  // jobs, tasks and handles as the input has them
    submit->jobs = pointer_to(scratch);
    submit->job_count = std::min<uint32_t>(submit->job_count, 8);
    submit->job_struct_size = std::min<uint32_t>(submit->job_struct_size, 256);
    if (submit->job_struct_size < sizeof(drm_rocket_job)) return;  // refused before any read
    for (uint32_t j = 0; j < submit->job_count; ++j) {
        drm_rocket_job job;
        uint8_t* at = scratch + static_cast<size_t>(j) * submit->job_struct_size;
        std::memcpy(&job, at, sizeof(job));
        job.task_struct_size = std::min<uint32_t>(job.task_struct_size, 64);
        job.task_count = std::min<uint32_t>(job.task_count, 64);
        job.in_bo_handle_count = std::min<uint32_t>(job.in_bo_handle_count, 64);
        job.out_bo_handle_count = std::min<uint32_t>(job.out_bo_handle_count, 64);
        uint8_t* arrays = scratch + half;  // every job's arrays share the second half (64*64 + 2*256 bytes fit)
        if (job.tasks != 0) job.tasks = pointer_to(arrays);
        if (job.in_bo_handles != 0) job.in_bo_handles = pointer_to(arrays + 4096);
        if (job.out_bo_handles != 0) job.out_bo_handles = pointer_to(arrays + 4096 + 256);
        std::memcpy(at, &job, sizeof(job));
    }
    in.fill(scratch + half, s.scratch.size() - half);
}

void do_ioctl(Session& s, FuzzBytes& in) {
    unsigned long cmd;
    const std::vector<unsigned long>& known = known_commands(s.node);
    if (in.chance(224)) {
        cmd = known[in.below(static_cast<uint32_t>(known.size()))];
        if (in.chance(16))
            cmd = (cmd & ~(static_cast<unsigned long>(_IOC_SIZEMASK) << _IOC_SIZESHIFT)) |
                  (static_cast<unsigned long>(in.below(_IOC_SIZEMASK + 1)) << _IOC_SIZESHIFT);
    } else {
        cmd = in.u32();
    }
    std::vector<uint8_t> arg(kArgBytes, 0);
    in.fill(arg.data(), in.below(257));
    const Handler handler = handler_of(s.node, cmd);
    // A DRM node copies in only the command's size: a pointer or fd field it
    // cuts would reach the handler as a few of our bytes and zeros. A kernel
    // refuses such a pointer with -EFAULT; in-process it would be a wild
    // write, so such pointers go in as NULL and such fds are not sent.
    const size_t in_size = s.node == Node::kMisc ? kArgBytes : (_IOC_DIR(cmd) & _IOC_WRITE) ? _IOC_SIZE(cmd) : 0;
    auto covered = [in_size](size_t offset, size_t bytes) { return offset + bytes <= in_size; };
    switch (handler) {
        case Handler::kVersion:
            patch<drm_version>(arg, [&](drm_version& v) {
                v.name = v.name != nullptr ? reinterpret_cast<char*>(s.scratch.data()) : nullptr;
                v.date = v.date != nullptr ? reinterpret_cast<char*>(s.scratch.data() + 256) : nullptr;
                v.desc = v.desc != nullptr ? reinterpret_cast<char*>(s.scratch.data() + 512) : nullptr;
                if (!covered(offsetof(drm_version, name), sizeof(v.name))) v.name = nullptr;
                if (!covered(offsetof(drm_version, date), sizeof(v.date))) v.date = nullptr;
                if (!covered(offsetof(drm_version, desc), sizeof(v.desc))) v.desc = nullptr;
                v.name_len = std::min<__kernel_size_t>(v.name_len, 256);
                v.date_len = std::min<__kernel_size_t>(v.date_len, 256);
                v.desc_len = std::min<__kernel_size_t>(v.desc_len, 256);
            });
            break;
        case Handler::kFdToPrime:
            if (!covered(offsetof(drm_prime_handle, fd), sizeof(int32_t))) return;
            patch<drm_prime_handle>(arg, [&](drm_prime_handle& p) { p.fd = s.pick_fd(in); });
            break;
        case Handler::kRknpuSubmit:
            if (!covered(offsetof(rknpu_submit, fence_fd), sizeof(int32_t))) return;
            patch<rknpu_submit>(arg, [&](rknpu_submit& sub) {
                sub.timeout = std::min(sub.timeout, kMaxWaitMs);
                sub.fence_fd = s.pick_fd(in);
                sub.task_number = std::min<uint32_t>(sub.task_number, 4096);
            });
            break;
        case Handler::kRknpuMemCreate:
            patch<rknpu_mem_create>(arg, [&](rknpu_mem_create& m) {
                m.size %= kMaxBufferBytes + 1;
                m.sram_size %= kMaxBufferBytes + 1;
                if (s.node == Node::kMisc && static_cast<int32_t>(m.handle) > 0)
                    m.handle = static_cast<uint32_t>(s.pick_fd(in));  // the misc device imports this dma-buf fd
            });
            break;
        case Handler::kRocketCreateBo:
            patch<drm_rocket_create_bo>(arg, [&](drm_rocket_create_bo& b) { b.size %= kMaxBufferBytes + 1; });
            break;
        case Handler::kRocketSubmit:
            patch<drm_rocket_submit>(arg, [&](drm_rocket_submit& sub) {
                lay_out_rocket_jobs(s, in, &sub);
                if (!covered(offsetof(drm_rocket_submit, jobs), sizeof(sub.jobs))) sub.jobs = 0;
            });
            break;
        default:
            break;
    }
    const int ret = kernel().ioctl(s.fd, cmd, arg.data());
    if (ret != 0) return;
    // What the kernel handed out: fds to close, offsets to map.
    switch (handler) {
        case Handler::kPrimeToFd:
            s.own(read_back<drm_prime_handle>(arg).fd);
            break;
        case Handler::kRknpuSubmit: {
            const rknpu_submit sub = read_back<rknpu_submit>(arg);
            if (sub.flags & RKNPU_JOB_FENCE_OUT) s.own(sub.fence_fd);
            break;
        }
        case Handler::kRknpuMemCreate:
            if (s.node == Node::kMisc) s.own(static_cast<int32_t>(read_back<rknpu_mem_create>(arg).handle));
            break;
        case Handler::kRknpuMemMap:
            s.map_offsets.push_back(read_back<rknpu_mem_map>(arg).offset);
            break;
        case Handler::kRocketCreateBo:
            s.map_offsets.push_back(read_back<drm_rocket_create_bo>(arg).offset);
            break;
        default:
            break;
    }
}

// Maps a buffer (by a reported offset, or a dma-buf fd) and writes input
// bytes into it: the contents later submits run.
void do_mmap(Session& s, FuzzBytes& in) {
    const bool by_fd = !s.owned_fds.empty() && in.chance(64);
    const int fd = by_fd ? s.owned_fds[in.below(static_cast<uint32_t>(s.owned_fds.size()))] : s.fd;
    uint64_t offset = 0;
    if (!by_fd)
        offset = s.map_offsets.empty() || in.chance(16)
                     ? in.u64()
                     : s.map_offsets[in.below(static_cast<uint32_t>(s.map_offsets.size()))];
    const size_t length = 4096u * (1 + in.below(16));
    void* p = nullptr;
    if (kernel().mmap(fd, offset, length, &p) != 0 || p == nullptr) return;
    const std::vector<uint8_t> bytes = in.bytes(length);
    if (!bytes.empty()) {
        const size_t at = in.below(static_cast<uint32_t>(length - bytes.size() + 1));
        std::memcpy(static_cast<uint8_t*>(p) + at, bytes.data(), bytes.size());
    }
    (void)kernel().munmap(p, length);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    FuzzBytes in(data, size);
    Session s;
    s.node = static_cast<Node>(in.below(3));
    s.fd = kernel().open(node_path(s.node));
    if (s.fd < 0) std::abort();
    for (int step = 0; step < 48 && !in.empty(); ++step) {
        switch (in.below(16)) {
            case 0:
                do_mmap(s, in);
                break;
            case 1:
                kernel().reset_device();
                break;
            case 2:  // close the node with its buffers (a crashed client), and open a new one
                (void)kernel().close(s.fd);
                s.map_offsets.clear();
                s.fd = kernel().open(node_path(s.node));
                break;
            case 3:
                if (!s.owned_fds.empty()) {
                    const size_t k = in.below(static_cast<uint32_t>(s.owned_fds.size()));
                    (void)kernel().close(s.owned_fds[k]);
                    s.owned_fds.erase(s.owned_fds.begin() + static_cast<std::ptrdiff_t>(k));
                }
                break;
            default:
                do_ioctl(s, in);
                break;
        }
    }
    for (int fd : s.owned_fds) (void)kernel().close(fd);
    (void)kernel().close(s.fd);
    kernel().faults().clear();
    // Every buffer went with the fds that held it.
    if (kernel().open_files() != 0 || kernel().live_objects() != 0) {
        std::fprintf(stderr, "mock kernel leaked: %zu files, %zu buffers\n", kernel().open_files(),
                     kernel().live_objects());
        std::abort();
    }
    return 0;
}
