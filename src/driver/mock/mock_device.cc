#include "driver/mock/mock_device.h"

#include <cerrno>

#include "base/log.h"

namespace rknn::driver::mock {

MockDevice::MockDevice(const hw::SocProfile& soc_profile, const MockOptions& mock_options)
    : soc(soc_profile), options(mock_options), sram(soc_profile.sram_bytes) {
    for (auto& domain : domains) domain = std::make_shared<AddressSpace>();
}

std::shared_ptr<MockObject> MockDevice::allocate(NodeKind kind, uint64_t size, uint32_t flags, int* err) {
    if (faults.take_allocation_failure()) {
        *err = -ENOMEM;
        return nullptr;
    }
    const uint64_t aligned = page_align(size);
    if (aligned == 0 || aligned >= AddressSpace::kLimit) {
        *err = -ENOMEM;
        return nullptr;
    }
    auto memory = MockMemory::create(aligned, (flags & RKNPU_MEM_CACHEABLE) != 0, err);
    if (!memory) return nullptr;
    auto object = std::make_shared<MockObject>();
    object->kind = kind;
    object->size = aligned;
    object->flags = flags;
    object->memory = std::move(memory);
    objects.add(object);
    return object;
}

JobOutcome MockDevice::run_job(AddressSpace& space, JobRunner::Protocol protocol, const std::vector<CoreJob>& cores,
                               const KickParams& params, uint32_t timeout_ms) {
    const JobFaults faults_now = faults.take_job_faults();
    for (uint64_t addr : faults_now.unmapped) {
        if (!space.block(addr)) RKNN_LOGW("mock: no buffer is mapped at 0x%llx to fault on", static_cast<unsigned long long>(addr));
    }
    active_space.store(&space);
    JobOutcome outcome = runner->run(protocol, cores, params, timeout_ms, faults_now);
    active_space.store(nullptr);
    space.unblock_all();
    return outcome;
}

}  // namespace rknn::driver::mock
