// libFuzzer target: sequences of public C API calls. The input's bytes pick
// each call and its arguments: rknn_init from a few valid models (int8, a
// 4-D output, dynamic shapes, a custom op) and corrupted copies of them,
// query with any command and size, inputs_set with any attrs, create_mem and
// set_io_mem with any attr, set_input_shapes, register_custom_ops, run
// (blocking, non-blocking with wait), outputs_get/release, dup_context,
// core masks, destroy, and matmul create/bind/run/destroy. Contexts and
// memory may be used after they were destroyed (handles are checked).
//
// What the target keeps honest is what no runtime can check: every buffer
// pointer it passes is its own memory with at least the size it says. A call
// may fail however it likes; nothing may crash, and when every context is
// destroyed no mock kernel buffer or file may be left (nothing outlived its
// context).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/log.h"
#include "driver/kernel_driver_factory.h"
#include "driver/mock/mock_kernel.h"
#include "fuzz_bytes.h"
#include "graph/graph.h"
#include "graph/shape_check.h"
#include "model/model_file.h"
#include "rknn_api.h"
#include "rknn_custom_op.h"
#include "rknn_matmul_api.h"
#include "runtime/contract_models.h"

namespace {

namespace graph = rknn::graph;
using rknn::fuzz::FuzzBytes;

constexpr size_t kSlots = 4;
constexpr size_t kPoolBytes = 1 << 16;

std::vector<std::vector<uint8_t>> build_models() {
    std::vector<graph::Graph> graphs;
    graphs.push_back(rknn::testing::quantized_cnn());
    graphs.push_back(rknn::testing::conv_pool_model());
    graph::Graph dynamic = rknn::testing::conv_pool_model();
    if (!graph::infer_graph_shapes(&dynamic, {{1, 3, 16, 16}}).is_ok()) std::abort();
    dynamic.shape_sets = {{{1, 3, 8, 8}}, {{1, 3, 16, 16}}, {{1, 3, 8, 16}}};
    graphs.push_back(dynamic);
    graph::Graph custom = rknn::testing::conv_pool_model();
    graph::Tensor out = custom.tensors[static_cast<size_t>(custom.outputs[0])];
    out.name = "custom_out";
    out.dtype = graph::DType::kFloat32;
    out.quant = graph::QuantParams();
    const int32_t t = custom.add_tensor(out);
    graph::Op op{graph::OpType::kCustom, "fuzz_node", "cstFuzz", {custom.outputs[0]}, {t}, {}};
    op.attrs.set_float("alpha", 0.5f);
    op.attrs.set_ints("ks", {1, 2, 3});
    custom.add_op(op);
    custom.custom_ops.push_back({"cstFuzz", {}});
    custom.outputs = {t};
    graphs.push_back(custom);
    std::vector<std::vector<uint8_t>> models;
    for (const graph::Graph& g : graphs) {
        auto bytes = rknn::model::serialize_model(g);
        if (!bytes.is_ok()) std::abort();
        models.push_back(std::move(bytes.value()));
    }
    return models;
}

const std::vector<std::vector<uint8_t>>& models() {
    static const std::vector<std::vector<uint8_t>> built = build_models();
    return built;
}

bool g_compute_fails = false;  // the input says whether the op's compute fails

int fuzz_compute(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs, uint32_t n_inputs,
                 rknn_custom_op_tensor* outputs, uint32_t n_outputs) {
    if (n_inputs < 1 || n_outputs < 1) return -1;
    rknn_custom_op_attr attr{};
    rknn_custom_op_get_op_attr(op_ctx, "alpha", &attr);
    const uint32_t in_bytes = inputs[0].attr.size, out_bytes = outputs[0].attr.size;
    const auto* in = static_cast<const uint8_t*>(inputs[0].mem.virt_addr) + inputs[0].mem.offset;
    auto* out = static_cast<uint8_t*>(outputs[0].mem.virt_addr) + outputs[0].mem.offset;
    std::memset(out, 0, out_bytes);
    std::memcpy(out, in, std::min(in_bytes, out_bytes));
    return g_compute_fails ? -1 : 0;
}

struct State {
    rknn_context holder = 0;  // never destroyed by the input (the leak count rests on it)
    rknn_context ctx[kSlots] = {};
    rknn_matmul_ctx mm[kSlots] = {};
    struct Mem {
        rknn_context owner;
        rknn_tensor_mem* mem;
    };
    std::vector<Mem> mems;
    std::vector<uint8_t> pool = std::vector<uint8_t>(kPoolBytes);
    rknn_output held[4] = {};
    rknn_context held_ctx = 0;
    uint32_t held_count = 0;
};

rknn_context any_context(State& s, FuzzBytes& in) {
    const uint32_t pick = in.below(kSlots * 2 + 1);
    if (pick < kSlots) return s.ctx[pick];
    if (pick < 2 * kSlots) return s.mm[pick - kSlots];
    const rknn_context garbage = in.chance(128) ? 0 : in.u64();  // never created, or garbage
    return garbage == s.holder ? 0 : garbage;
}

rknn_tensor_attr fuzzed_attr(FuzzBytes& in, rknn_context ctx) {
    rknn_tensor_attr attr{};
    attr.index = in.below(3);
    if (in.chance(192)) {  // start from what the context reports
        const int cmd = in.chance(128)   ? RKNN_QUERY_INPUT_ATTR
                        : in.chance(128) ? RKNN_QUERY_OUTPUT_ATTR
                                         : RKNN_QUERY_NATIVE_INPUT_ATTR;
        (void)rknn_query(ctx, static_cast<rknn_query_cmd>(cmd), &attr, sizeof(attr));
    }
    for (uint32_t edits = in.below(4); edits > 0; --edits) {
        switch (in.below(7)) {
            case 0:
                attr.type = static_cast<rknn_tensor_type>(in.below(12));
                break;
            case 1:
                attr.fmt = static_cast<rknn_tensor_format>(in.below(6));
                break;
            case 2:
                attr.n_dims = in.below(RKNN_MAX_DIMS + 2);
                break;
            case 3:
                attr.dims[in.below(RKNN_MAX_DIMS)] = in.below(40);
                break;
            case 4:
                attr.size = in.below(kPoolBytes);
                break;
            case 5:
                attr.pass_through = in.u8() & 1;
                break;
            default:
                attr.index = in.u32();
                break;
        }
    }
    if (attr.n_dims > RKNN_MAX_DIMS + 1) attr.n_dims = RKNN_MAX_DIMS + 1;  // one too many is checked
    return attr;
}

void step(State& s, FuzzBytes& in) {
    const size_t slot = in.below(kSlots);
    rknn_context& ctx = s.ctx[slot];
    switch (in.below(20)) {
        case 0: {  // init
            if (ctx != 0) (void)rknn_destroy(ctx);
            ctx = 0;
            std::vector<uint8_t> bytes = models()[in.below(static_cast<uint32_t>(models().size()))];
            for (uint32_t flips = in.chance(64) ? in.below(8) + 1 : 0; flips > 0; --flips)
                bytes[in.below(static_cast<uint32_t>(bytes.size()))] ^= static_cast<uint8_t>(1 + in.below(255));
            if (in.chance(16)) bytes.resize(in.below(static_cast<uint32_t>(bytes.size())));
            const uint32_t flags =
                in.u32() &
                (RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY | RKNN_FLAG_ASYNC_MASK | RKNN_FLAG_COLLECT_PERF_MASK |
                 RKNN_FLAG_ENABLE_SRAM | RKNN_FLAG_EXECUTE_FALLBACK_PRIOR_DEVICE_GPU | RKNN_FLAG_FENCE_OUT_OUTSIDE);
            if (rknn_init(&ctx, bytes.data(), static_cast<uint32_t>(bytes.size()), flags, nullptr) != RKNN_SUCC)
                ctx = 0;
            break;
        }
        case 1:
            (void)rknn_destroy(any_context(s, in));
            break;  // the slot keeps the stale handle
        case 2: {   // query
            const rknn_query_cmd cmd = static_cast<rknn_query_cmd>(in.below(48));
            const uint32_t size = in.below(4097);
            (void)rknn_query(any_context(s, in), cmd, in.chance(8) ? nullptr : s.pool.data(), size);
            break;
        }
        case 3: {  // inputs_set
            rknn_input inputs[3] = {};
            const uint32_t n = in.below(4);
            for (uint32_t i = 0; i < n; ++i) {
                inputs[i].index = in.below(3);
                inputs[i].size = in.below(4096);
                inputs[i].buf = s.pool.data() + in.below(kPoolBytes - 4096);
                inputs[i].pass_through = in.u8() & 1;
                inputs[i].type = static_cast<rknn_tensor_type>(in.below(12));
                inputs[i].fmt = static_cast<rknn_tensor_format>(in.below(6));
            }
            (void)rknn_inputs_set(ctx, n, inputs);
            break;
        }
        case 4: {  // run
            if (in.chance(128)) {
                (void)rknn_run(ctx, nullptr);
            } else {
                rknn_run_extend extend{};
                extend.non_block = in.u8() & 1;
                extend.timeout_ms = static_cast<int>(in.below(50));
                extend.fence_fd = -1;
                (void)rknn_run(ctx, &extend);
                if (extend.non_block) (void)rknn_wait(ctx, &extend);
                if (extend.fence_fd >= 0) ::close(extend.fence_fd);  // RKNN_FLAG_FENCE_OUT_OUTSIDE: ours to close
            }
            break;
        }
        case 5: {  // outputs_get / release
            if (s.held_count != 0) {
                (void)rknn_outputs_release(s.held_ctx, s.held_count, s.held);
                s.held_count = 0;
            }
            const uint32_t n = in.below(4);
            for (uint32_t i = 0; i < n; ++i) {
                s.held[i] = rknn_output{};
                s.held[i].index = in.below(3);
                s.held[i].want_float = in.u8() & 1;
                s.held[i].is_prealloc = in.u8() & 1;
                if (s.held[i].is_prealloc) {
                    s.held[i].size = in.below(8192);
                    s.held[i].buf = s.pool.data() + in.below(kPoolBytes - 8192);
                }
            }
            if (rknn_outputs_get(ctx, n, s.held, nullptr) == RKNN_SUCC) {
                s.held_ctx = ctx;
                s.held_count = n;
            }
            break;
        }
        case 6: {  // create_mem
            const rknn_context owner = any_context(s, in);
            rknn_tensor_mem* mem = rknn_create_mem(owner, in.below(1 << 20));
            if (mem != nullptr) s.mems.push_back({owner, mem});
            break;
        }
        case 7: {  // set_io_mem
            if (s.mems.empty()) break;
            State::Mem& m = s.mems[in.below(static_cast<uint32_t>(s.mems.size()))];
            rknn_tensor_attr attr = fuzzed_attr(in, ctx);
            (void)rknn_set_io_mem(ctx, in.chance(8) ? nullptr : m.mem, &attr);
            break;
        }
        case 8: {  // destroy_mem
            if (s.mems.empty()) break;
            const size_t k = in.below(static_cast<uint32_t>(s.mems.size()));
            (void)rknn_destroy_mem(s.mems[k].owner, s.mems[k].mem);
            s.mems.erase(s.mems.begin() + static_cast<std::ptrdiff_t>(k));
            break;
        }
        case 9: {  // set_input_shapes
            rknn_tensor_attr attrs[2] = {fuzzed_attr(in, ctx), fuzzed_attr(in, ctx)};
            (void)rknn_set_input_shapes(ctx, in.below(3), attrs);
            break;
        }
        case 10: {  // register_custom_ops
            rknn_custom_op op;
            std::memset(&op, 0, sizeof(op));
            op.version = in.chance(224) ? 1 : in.u32();
            op.target = static_cast<rknn_target_type>(in.below(3));
            std::snprintf(op.op_type, sizeof(op.op_type), "%s", in.chance(200) ? "cstFuzz" : "cstOther");
            op.compute = in.chance(240) ? fuzz_compute : nullptr;
            g_compute_fails = in.chance(32);
            rknn_custom_op twice[2] = {op, op};
            (void)rknn_register_custom_ops(ctx, twice, in.below(3));
            break;
        }
        case 11: {  // dup_context
            rknn_context copy = 0;
            const size_t to = in.below(kSlots);
            if (s.ctx[to] == 0 && rknn_dup_context(&ctx, &copy) == RKNN_SUCC) s.ctx[to] = copy;
            break;
        }
        case 12:
            (void)rknn_set_core_mask(ctx, static_cast<rknn_core_mask>(in.below(10)));
            break;
        case 13:
            (void)rknn_set_batch_core_num(ctx, static_cast<int>(in.below(5)) - 1);
            break;
        case 14: {  // matmul create
            rknn_matmul_ctx& mm = s.mm[slot];
            if (mm != 0) (void)rknn_matmul_destroy(mm);
            mm = 0;
            rknn_matmul_info info;
            std::memset(&info, 0, sizeof(info));
            info.M = static_cast<int32_t>(in.below(70)) - 2;
            info.K = static_cast<int32_t>(in.below(300)) - 2;
            info.N = static_cast<int32_t>(in.below(300)) - 2;
            info.type = static_cast<rknn_matmul_type>(in.below(16));
            info.B_layout = static_cast<int16_t>(in.below(4));
            info.B_quant_type = static_cast<int16_t>(in.below(4));
            info.AC_layout = static_cast<int16_t>(in.below(3));
            info.AC_quant_type = static_cast<int16_t>(in.below(3));
            info.group_size = static_cast<int16_t>(in.below(3) * 32);
            rknn_matmul_io_attr io{};
            if (rknn_matmul_create(&mm, &info, &io) != RKNN_SUCC) mm = 0;
            break;
        }
        case 15: {  // matmul bind: memory of the sizes the context asks for, or not
            rknn_matmul_ctx mm = s.mm[slot];
            if (mm == 0) break;
            rknn_matmul_tensor_attr attr{};
            rknn_tensor_mem* mem = rknn_create_mem(mm, 1 + in.below(1 << 18));
            if (mem == nullptr) break;
            s.mems.push_back({mm, mem});
            attr.size = in.below(1 << 19);
            attr.type = static_cast<rknn_tensor_type>(in.below(12));
            attr.n_dims = in.below(4);
            std::snprintf(attr.name, sizeof(attr.name), "%s", in.chance(85) ? "A" : in.chance(128) ? "B" : "C");
            (void)rknn_matmul_set_io_mem(mm, mem, &attr);
            break;
        }
        case 16:
            (void)rknn_matmul_run(s.mm[slot]);
            break;
        case 17:
            (void)rknn_matmul_destroy(s.mm[slot]);
            s.mm[slot] = 0;
            break;
        case 18: {  // matmul shapes and quantisation
            rknn_matmul_shape shape{static_cast<int32_t>(in.below(70)), static_cast<int32_t>(in.below(300)),
                                    static_cast<int32_t>(in.below(300))};
            (void)rknn_matmul_set_dynamic_shape(s.mm[slot], in.chance(16) ? nullptr : &shape);
            float scales[4] = {0.5f, 0.25f, 1.0f, 2.0f};
            int32_t zps[4] = {0, 1, -1, 3};
            rknn_quant_params q{};
            std::snprintf(q.name, sizeof(q.name), "%s", in.chance(128) ? "A" : "B");
            q.scale = scales;
            q.scale_len = static_cast<int32_t>(in.below(5));
            q.zp = zps;
            q.zp_len = static_cast<int32_t>(in.below(5));
            (void)rknn_matmul_set_quant_params(s.mm[slot], &q);
            break;
        }
        default: {  // a whole normal round on a live context
            std::vector<uint8_t> p = rknn::testing::pixels(in.u8());
            rknn_input input =
                rknn::testing::input_of(p.data(), static_cast<uint32_t>(p.size()), RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC);
            if (rknn_inputs_set(ctx, 1, &input) == RKNN_SUCC && rknn_run(ctx, nullptr) == RKNN_SUCC) {
                rknn_output out{};
                if (rknn_outputs_get(ctx, 1, &out, nullptr) == RKNN_SUCC) (void)rknn_outputs_release(ctx, 1, &out);
            }
            break;
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    // A context that never runs keeps the mock kernel (making one per input
    // would cost more than the input); what the input leaves is counted on it.
    static rknn_context holder = 0;
    static const bool quiet = [] {
        ::setenv("RKNN_NPU_TIMEOUT_MS", "50", 1);
        if (std::getenv("RKNN_FUZZ_LOG") == nullptr)
            rknn::log::set_sink([](const std::string&) {});  // RKNN_FUZZ_LOG=1 to debug
        std::vector<uint8_t> bytes = models()[0];
        if (rknn_init(&holder, bytes.data(), static_cast<uint32_t>(bytes.size()), 0, nullptr) != RKNN_SUCC)
            std::abort();
        return true;
    }();
    (void)quiet;
    std::shared_ptr<rknn::driver::mock::MockKernel> kernel = rknn::driver::live_mock_kernel("rk3588");
    if (kernel == nullptr) std::abort();
    const size_t buffers_before = kernel->live_objects(), files_before = kernel->open_files();
    FuzzBytes in(data, size);
    State s;
    s.holder = holder;
    for (int n = 0; n < 40 && !in.empty(); ++n) step(s, in);
    if (s.held_count != 0) (void)rknn_outputs_release(s.held_ctx, s.held_count, s.held);
    for (const State::Mem& m : s.mems) (void)rknn_destroy_mem(m.owner, m.mem);
    for (rknn_matmul_ctx mm : s.mm)
        if (mm != 0) (void)rknn_matmul_destroy(mm);
    for (rknn_context ctx : s.ctx)
        if (ctx != 0) (void)rknn_destroy(ctx);
    if (kernel->live_objects() != buffers_before || kernel->open_files() != files_before) {
        std::fprintf(stderr, "api_sequence_fuzzer: mock buffers %zu -> %zu, files %zu -> %zu over one input\n",
                     buffers_before, kernel->live_objects(), files_before, kernel->open_files());
        std::abort();
    }
    return 0;
}
