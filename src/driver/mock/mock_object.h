// A kernel buffer object of the mock: what a GEM handle, a /dev/rknpu
// session entry or an rknpu obj_addr cookie names. It owns its IOVA mapping
// and SRAM chunks and gives them back when the last reference goes.
//
// ObjectTable is the device-wide registry: it hands out the obj_addr cookie
// and the DRM fake mmap offset, and finds objects by cookie (SUBMIT, MEM_SYNC)
// or by the file behind a dma-buf fd (import). It is only touched under the
// mock kernel's lock.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>

#include "driver/mock/address_space.h"
#include "driver/mock/mock_memory.h"
#include "driver/mock/sram_pool.h"

namespace rknn::driver::mock {

class ObjectTable;

// Which device node created an object: a dma-buf imported into the node that
// exported it finds the same object again (DRM self-import).
enum class NodeKind { kRknpuDrm, kRknpuMisc, kRocket };

struct MockObject : std::enable_shared_from_this<MockObject> {
    NodeKind kind = NodeKind::kRknpuDrm;
    uint64_t id = 0;
    uint64_t cookie = 0;        // rknpu obj_addr
    uint64_t mmap_offset = 0;   // DRM fake offset
    uint64_t size = 0;
    uint32_t flags = 0;         // RKNPU_MEM_* bits the object has
    std::shared_ptr<MockMemory> memory;
    std::shared_ptr<AddressSpace> space;  // where it is mapped for the NPU
    uint64_t dma_addr = 0;
    int32_t domain = 0;
    SramPool* sram = nullptr;
    uint64_t sram_offset = 0;
    uint64_t sram_size = 0;
    ObjectTable* table = nullptr;

    MockObject() = default;
    MockObject(const MockObject&) = delete;
    MockObject& operator=(const MockObject&) = delete;
    ~MockObject();

    // Maps the memory's device view into `s`; false when the space is full.
    bool map_into(std::shared_ptr<AddressSpace> s);
};

class ObjectTable {
public:
    // Gives the object its id, cookie and mmap offset and registers it.
    void add(const std::shared_ptr<MockObject>& object);
    void remove(const MockObject* object);

    std::shared_ptr<MockObject> find_cookie(uint64_t cookie) const;
    // An object whose memory is the file (dev, ino): one of kind `kind` if
    // there is one (the DRM self-import case), else any.
    std::shared_ptr<MockObject> find_file(dev_t dev, ino_t ino, NodeKind kind) const;
    size_t size() const { return objects_.size(); }

private:
    std::map<uint64_t, MockObject*> objects_;  // by cookie
    uint64_t next_id_ = 1;
    uint64_t next_offset_ = 1ull << 32;        // DRM_FILE_PAGE_OFFSET_START on 64-bit
};

}  // namespace rknn::driver::mock
