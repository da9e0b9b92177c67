#include "npu_runner.h"

#include <cstring>

#include "driver/rknpu_driver.h"
#include "hw/soc_profile.h"

namespace rknn::npu::testing {

namespace {
// Non-cacheable buffers: the CPU view is the device view, no sync needed.
constexpr uint32_t kBufferFlags = driver::buffer_flag::kWriteCombine;
}  // namespace

NpuRunner::NpuRunner(const char* soc) {
    kernel_ = std::make_shared<driver::mock::MockKernel>(*hw::find_soc(soc), driver::mock::MockOptions{});
    auto opened = driver::RknpuDriver::open(kernel_, driver::mock::MockKernel::kRknpuRenderNode,
                                            driver::RknpuDriver::Variant::kDrm, soc);
    if (opened.is_ok()) driver_ = std::move(opened).value();
}

NpuRunner::~NpuRunner() {
    for (auto& bo : buffers_) {
        if (bo.size != 0) (void)driver_->destroy_buffer(&bo);
    }
}

int NpuRunner::zeros(size_t size) {
    driver::BufferRequest request;
    request.size = size == 0 ? 16 : size;
    request.flags = kBufferFlags | driver::buffer_flag::kZeroing;
    auto created = driver_->create_buffer(request);
    if (!created.is_ok()) return -1;
    driver::BufferObject bo = created.value();
    if (!driver_->map_buffer(&bo).is_ok()) return -1;
    buffers_.push_back(bo);
    return static_cast<int>(buffers_.size() - 1);
}

int NpuRunner::add(const void* bytes, size_t size) {
    const int id = zeros(size);
    if (id >= 0 && size > 0) std::memcpy(buffers_[static_cast<size_t>(id)].host, bytes, size);
    return id;
}

Status NpuRunner::run(const Program& program, uint32_t* tasks_done) {
    driver::BufferRequest request;
    request.size = program.bytes();
    request.flags = kBufferFlags;
    auto created = driver_->create_buffer(request);
    if (!created.is_ok()) return created.status();
    driver::BufferObject stream = created.value();
    Status status = driver_->map_buffer(&stream);
    std::vector<uint64_t> bases;
    for (const auto& bo : buffers_) bases.push_back(bo.dma_addr);
    if (status.is_ok()) {
        auto linked = program.link(stream.dma_addr, bases);
        if (!linked.is_ok()) {
            status = linked.status();
        } else {
            std::memcpy(stream.host, linked.value().data(), program.bytes());
        }
    }
    if (status.is_ok()) {
        driver::SubmitRequest submit;
        for (const ProgramTask& t : program.tasks) {
            driver::Task task;
            task.regcmd_addr = stream.dma_addr + uint64_t{t.first_word} * 8;
            task.regcmd_words = t.body_words + hw::kTailWords;
            task.enable_mask = t.enable_mask;
            task.int_mask = t.int_mask;
            submit.tasks.push_back(task);
        }
        submit.core_mask = program.core_mask;
        submit.flags = driver::submit_flag::kPingPong;
        if (__builtin_popcount(program.core_mask) > 1) {
            for (int c = 0; c < kMaxProgramCores; ++c)
                submit.core_tasks[static_cast<size_t>(c)] = {program.cores[static_cast<size_t>(c)].start,
                                                             program.cores[static_cast<size_t>(c)].count};
        }
        auto result = driver_->submit(submit);
        if (!result.is_ok()) {
            status = result.status();
        } else if (tasks_done != nullptr) {
            *tasks_done = result.value().task_counter;
        }
    }
    (void)driver_->destroy_buffer(&stream);
    return status;
}

uint64_t NpuRunner::programs_on_core(int core) const { return kernel_->npu().stats(core).programs; }

}  // namespace rknn::npu::testing
