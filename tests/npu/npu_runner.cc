#include "npu_runner.h"

#include <chrono>
#include <cstring>

#include "driver/rknpu_driver.h"
#include "hw/soc_profile.h"
#include "npu/prepared_op.h"
#include "runtime/native_tensor.h"
#include "runtime/npu_segments.h"

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
        // Sanitizer builds run the emulator many times slower than a board.
        const driver::SubmitRequest submit = runtime::make_submit(program, stream.dma_addr, 120000);
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

std::string NpuRunner::last_fault(int core) const { return kernel_->npu().last_result(core).message; }

StatusOr<OpRun> run_graph_op(const graph::Graph& g, const graph::Op& op,
                             const std::function<const cpu::HostTensor&(int32_t)>& value_of, uint32_t core_mask,
                             bool packed_input, const char* soc) {
    OpRun run;
    NpuRunner runner(soc);
    if (!runner.ready()) return RKNN_INTERNAL_ERROR("could not open the rknpu back-end on the mock kernel");
    const runtime::NativeForm form = runtime::native_form(runner.soc());
    const auto start = std::chrono::steady_clock::now();
    RKNN_ASSIGN_OR_RETURN(std::unique_ptr<PreparedOp> prepared, prepare_op(g, op, runner.soc()));
    if (packed_input && !prepared->reads_packed_input())
        return RKNN_INVALID_ARGUMENT("the op does not read a channel-packed input");
    // Buffers in binding order: feature cubes, constants, then the output cube.
    OpBuffers buffers;
    int32_t next = 0;
    for (size_t i = 0; i < prepared->feature_inputs().size(); ++i) buffers.features.push_back(BufferRef(next++, 0));
    for (size_t i = 0; i < prepared->constants().size(); ++i) buffers.constants.push_back(BufferRef(next++, 0));
    buffers.output = BufferRef(next, 0);
    if (prepared->scratch_bytes() > 0) buffers.scratch = BufferRef(next + 1, 0);
    const auto tensor_of = [&](int index) -> const graph::Tensor& {
        return g.tensors[static_cast<size_t>(op.inputs[static_cast<size_t>(index)])];
    };
    const int first_input = prepared->feature_inputs()[0];
    if (packed_input) {
        buffers.packed_row_pixels = static_cast<int>(runtime::packed_image_row_pixels(tensor_of(first_input), form));
        if (buffers.packed_row_pixels == 0) return RKNN_INVALID_ARGUMENT("the input has no channel-packed form on %s", soc);
    }
    ProgramBuilder builder(runner.soc());
    RKNN_RETURN_IF_ERROR(prepared->lower(buffers, runner.soc(), core_mask, &builder));
    const Program program = builder.finish();
    run.codegen_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    run.tasks = program.tasks.size();
    run.regcmd_bytes = program.bytes();

    for (int index : prepared->feature_inputs()) {
        const uint32_t pitch = packed_input && index == first_input ? static_cast<uint32_t>(buffers.packed_row_pixels) : 0;
        const graph::Tensor& declared = tensor_of(index);
        std::vector<uint8_t> bytes(pitch > 0 ? runtime::packed_image_bytes(declared, form)
                                             : runtime::native_cube_bytes(declared, form));
        RKNN_RETURN_IF_ERROR(runtime::pack_native(value_of(op.inputs[static_cast<size_t>(index)]), bytes.data(),
                                                  bytes.size(), form, pitch));
        if (runner.add(bytes.data(), bytes.size()) < 0) return RKNN_INTERNAL_ERROR("buffer creation failed");
    }
    for (const auto& bytes : prepared->constants())
        if (runner.add(bytes.data(), bytes.size()) < 0) return RKNN_INTERNAL_ERROR("buffer creation failed");
    const graph::Tensor& y = g.tensors[static_cast<size_t>(op.outputs[0])];
    const uint64_t out_bytes = runtime::native_cube_bytes(y, form);
    if (out_bytes == 0) return RKNN_INVALID_ARGUMENT("output is not a cube");
    if (runner.zeros(out_bytes) != next ||
        (prepared->scratch_bytes() > 0 && runner.zeros(prepared->scratch_bytes()) != next + 1))
        return RKNN_INTERNAL_ERROR("buffer creation failed");
    RKNN_RETURN_IF_ERROR(runner.run(program));
    RKNN_ASSIGN_OR_RETURN(const cpu::HostTensor value, runtime::unpack_native(runner.data(next), out_bytes, y, form));
    const auto* raw = static_cast<const uint8_t*>(value.raw());
    run.output.assign(raw, raw + value.byte_size());
    return run;
}

}  // namespace rknn::npu::testing
