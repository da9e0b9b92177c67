// libFuzzer target: register-command streams into the emulated NPU through
// the real submit path. Each input picks a small model (or a matmul), a SoC,
// a core mask and where the context's memory lives (the runtime's own
// buffers, or the client's with RKNN_FLAG_MEM_ALLOC_OUTSIDE), initialises it
// through the public API, and then rewrites the streams the runtime
// generated as they reach the mock kernel's SUBMIT (FaultInjector::
// corrupt_streams): words replaced, bits flipped, values nudged (addresses
// off by a little), words copied or zeroed, or the whole stream random. The
// run may fail however the hardware would; nothing may crash, hang past the
// submit timeout, or outlive the context (no mock kernel buffer or file).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/log.h"
#include "common/test_graphs.h"
#include "driver/kernel_driver_factory.h"
#include "driver/mock/mock_kernel.h"
#include "fuzz_bytes.h"
#include "graph/graph.h"
#include "model/model_file.h"
#include "rknn_api.h"
#include "rknn_matmul_api.h"
#include "runtime/contract_models.h"

namespace {

using rknn::fuzz::FuzzBytes;

constexpr const char* kSocs[] = {"rk3588", "rk3568", "rk3562", "rk3576"};
constexpr rknn_core_mask kMasks[] = {RKNN_NPU_CORE_AUTO, RKNN_NPU_CORE_0, RKNN_NPU_CORE_1, RKNN_NPU_CORE_0_1,
                                     RKNN_NPU_CORE_0_1_2};
constexpr size_t kModels = 3;

[[noreturn]] void die(const char* why) {
    std::fprintf(stderr, "regcmd_stream_fuzzer: %s\n", why);
    std::abort();
}

// The models, serialised per SoC once.
const std::vector<uint8_t>& model_bytes(size_t model, size_t soc) {
    static std::vector<std::vector<uint8_t>> cache = [] {
        std::vector<std::vector<uint8_t>> all;
        const rknn::graph::Graph graphs[kModels] = {rknn::testing::quantized_cnn(), rknn::testing::conv_pool_model(),
                                                    rknn::testing::small_cnn()};
        for (const rknn::graph::Graph& base : graphs)
            for (const char* name : kSocs) {
                rknn::graph::Graph g = base;
                g.target_soc = name;
                auto bytes = rknn::model::serialize_model(g);
                if (!bytes.is_ok()) {
                    die(("a model for " + std::string(name) + " does not serialise: " + bytes.status().message())
                            .c_str());
                }
                all.push_back(std::move(bytes.value()));
            }
        return all;
    }();
    return cache[model * (sizeof(kSocs) / sizeof(kSocs[0])) + soc];
}

// The mock kernel of SoC `soc`, kept alive by a context of the first model
// that never runs (making a kernel per input would cost more than the input).
std::shared_ptr<rknn::driver::mock::MockKernel> kernel_for(size_t soc) {
    static rknn_context holders[sizeof(kSocs) / sizeof(kSocs[0])] = {};
    if (holders[soc] == 0) {
        const std::vector<uint8_t>& bytes = model_bytes(0, soc);
        if (rknn_init(&holders[soc], const_cast<uint8_t*>(bytes.data()), static_cast<uint32_t>(bytes.size()), 0,
                      nullptr) != RKNN_SUCC)
            die("the holder context does not initialise");
    }
    std::shared_ptr<rknn::driver::mock::MockKernel> kernel = rknn::driver::live_mock_kernel(kSocs[soc]);
    if (kernel == nullptr) die("no mock kernel behind the holder context");
    return kernel;
}

struct Mutation {
    uint8_t kind;
    uint32_t index;
    uint64_t value;
};

// The input's edits, applied to each stream a submit carries.
void corrupt(const std::vector<Mutation>& edits, bool random_stream, const std::vector<uint8_t>& noise, uint8_t* stream,
             size_t bytes) {
    const size_t words = bytes / 8;
    if (words == 0) return;
    if (random_stream && !noise.empty()) {
        for (size_t i = 0; i < std::min(bytes, size_t{4096}); ++i) stream[i] = noise[i % noise.size()];
        return;
    }
    // Edits land in the first 4 KiB of words (where the first tasks are).
    const size_t span = std::min<size_t>(words, 512);
    for (const Mutation& m : edits) {
        uint8_t* word = stream + (m.index % span) * 8;
        uint64_t v;
        std::memcpy(&v, word, 8);
        switch (m.kind % 6) {
            case 0:
                v = m.value;
                break;  // any word
            case 1:
                v ^= uint64_t{1} << (m.value % 64);
                break;  // one bit
            case 2:
                v += static_cast<int64_t>(static_cast<int8_t>(m.value)) * 16;
                break;  // value nudged (an address by atoms)
            case 3:
                v = (v & ~uint64_t{0xffff0000ffffffff}) | (m.value & 0xffff0000ffffffff);
                break;  // the register kept
            case 4:
                std::memcpy(&v, stream + (m.value % span) * 8, 8);
                break;  // another word
            default:
                v = 0;
                break;  // an end
        }
        std::memcpy(word, &v, 8);
    }
}

void run_model(FuzzBytes& in) {
    const size_t model = in.below(kModels);
    const size_t soc = in.below(sizeof(kSocs) / sizeof(kSocs[0]));
    const rknn_core_mask mask = kMasks[in.below(sizeof(kMasks) / sizeof(kMasks[0]))];
    const bool outside = in.chance(48);
    ::setenv("RKNN_MOCK_SOC", kSocs[soc], 1);
    std::shared_ptr<rknn::driver::mock::MockKernel> kernel = kernel_for(soc);
    const size_t buffers_before = kernel->live_objects(), files_before = kernel->open_files();
    const std::vector<uint8_t>& bytes = model_bytes(model, soc);
    rknn_context ctx = 0;
    if (rknn_init(&ctx, const_cast<uint8_t*>(bytes.data()), static_cast<uint32_t>(bytes.size()),
                  outside ? RKNN_FLAG_MEM_ALLOC_OUTSIDE : 0, nullptr) != RKNN_SUCC)
        die("rknn_init of an untouched model failed");
    rknn_tensor_mem* weights = nullptr;
    rknn_tensor_mem* internal = nullptr;
    if (outside && !rknn::testing::give_all_memory(ctx, &weights, &internal)) die("the client's memory was refused");
    (void)rknn_set_core_mask(ctx, mask);

    std::vector<Mutation> edits;
    const bool random_stream = in.chance(24);
    const std::vector<uint8_t> noise = random_stream ? in.bytes(4096) : std::vector<uint8_t>{};
    for (uint32_t n = in.below(33); n > 0 && !in.empty(); --n) edits.push_back({in.u8(), in.u32(), in.u64()});
    kernel->faults().corrupt_streams(
        [&](uint8_t* stream, size_t len) { corrupt(edits, random_stream, noise, stream, len); });

    std::vector<uint8_t> pixels = rknn::testing::pixels(in.u8());
    rknn_input input = rknn::testing::input_of(pixels.data(), static_cast<uint32_t>(pixels.size()), RKNN_TENSOR_UINT8,
                                               RKNN_TENSOR_NHWC);
    if (rknn_inputs_set(ctx, 1, &input) == RKNN_SUCC && rknn_run(ctx, nullptr) == RKNN_SUCC) {
        rknn_output out{};
        out.want_float = 1;
        if (rknn_outputs_get(ctx, 1, &out, nullptr) == RKNN_SUCC) (void)rknn_outputs_release(ctx, 1, &out);
    }
    kernel->faults().clear();
    if (rknn_destroy(ctx) != RKNN_SUCC) die("rknn_destroy failed");
    if (weights != nullptr) rknn_destroy_mem(ctx, weights);
    if (internal != nullptr) rknn_destroy_mem(ctx, internal);
    // Nothing outlives the context.
    if (kernel->live_objects() != buffers_before || kernel->open_files() != files_before)
        die("a buffer or file outlived its context");
}

void run_matmul(FuzzBytes& in) {
    ::setenv("RKNN_MOCK_SOC", "rk3588", 1);
    std::shared_ptr<rknn::driver::mock::MockKernel> kernel = kernel_for(0);
    const size_t buffers_before = kernel->live_objects();
    rknn_matmul_info info;
    std::memset(&info, 0, sizeof(info));
    info.M = 1 + static_cast<int32_t>(in.below(8));
    info.K = 32 * (1 + static_cast<int32_t>(in.below(4)));
    info.N = 32 * (1 + static_cast<int32_t>(in.below(4)));
    info.type = in.chance(128) ? RKNN_INT8_MM_INT8_TO_INT32 : RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32;
    rknn_matmul_io_attr io{};
    rknn_matmul_ctx ctx = 0;
    if (rknn_matmul_create(&ctx, &info, &io) != RKNN_SUCC) die("rknn_matmul_create failed");
    rknn_tensor_mem* a = rknn_create_mem(ctx, io.A.size);
    rknn_tensor_mem* b = rknn_create_mem(ctx, io.B.size);
    rknn_tensor_mem* c = rknn_create_mem(ctx, io.C.size);
    if (a == nullptr || b == nullptr || c == nullptr) die("rknn_create_mem failed");
    in.fill(a->virt_addr, std::min<size_t>(io.A.size, 256));
    in.fill(b->virt_addr, std::min<size_t>(io.B.size, 256));
    std::vector<Mutation> edits;
    for (uint32_t n = in.below(17); n > 0 && !in.empty(); --n) edits.push_back({in.u8(), in.u32(), in.u64()});
    kernel->faults().corrupt_streams([&](uint8_t* stream, size_t len) { corrupt(edits, false, {}, stream, len); });
    if (rknn_matmul_set_io_mem(ctx, a, &io.A) == RKNN_SUCC && rknn_matmul_set_io_mem(ctx, b, &io.B) == RKNN_SUCC &&
        rknn_matmul_set_io_mem(ctx, c, &io.C) == RKNN_SUCC)
        (void)rknn_matmul_run(ctx);
    kernel->faults().clear();
    rknn_destroy_mem(ctx, a);
    rknn_destroy_mem(ctx, b);
    rknn_destroy_mem(ctx, c);
    if (rknn_matmul_destroy(ctx) != RKNN_SUCC) die("rknn_matmul_destroy failed");
    if (kernel->live_objects() != buffers_before) die("a matmul buffer outlived its context");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const bool quiet = [] {
        ::setenv("RKNN_NPU_TIMEOUT_MS", "20", 1);  // a stream that never ends costs this much
        if (std::getenv("RKNN_FUZZ_LOG") == nullptr)
            rknn::log::set_sink([](const std::string&) {});  // RKNN_FUZZ_LOG=1 to debug
        return true;
    }();
    (void)quiet;
    FuzzBytes in(data, size);
    if (in.chance(40))
        run_matmul(in);
    else
        run_model(in);
    return 0;
}
