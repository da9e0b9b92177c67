// The emulator's non-convolution tasks against memcpy, in the same run
// (issue 19, item 2: a 1x16x240x240 int8 Add at >= 0.25x the throughput of
// a memcpy of the same bytes).
//
// Each task is one register stream, as the code generator emits it, run
// through the program controller as a submit would (decode, operand reads,
// the DPU or PPU model, the output write), on the host threads the emulator
// uses. The baseline is one memcpy of the task's output cube (the bytes one
// int8 tensor of that shape takes in the NPU's layout), single-threaded.
// Throughput ratio = memcpy time / task time, so 1.0 means "as fast as
// copying the result". Rounds alternate task and memcpy; the table gives
// medians and the spread over rounds.
//
// The Add runs twice: in the pairwise multiply-add form the emulator takes
// (kernels/dpu_int8_pairs.h) and, for the gain, in the staged int32 lanes.
// The fp16 HardSwish pass (the float pipeline, as PP-OCRv4 rec runs it after
// most convolutions) runs at two sizes: 12 rows, as the model's, and 48.
//
// Usage: emulator_eltwise_bench [rounds] [reps per round] [name filter]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "base/half.h"
#include "cpu/int8/requant.h"
#include "emulator/kernels/dpu_int8_pairs.h"
#include "npu_harness.h"

namespace {

namespace et = rknn::emutest;
namespace i8 = rknn::cpu::int8;

constexpr uint32_t kStream = 0x10000, kA = 0x1000000, kB = 0x2000000, kOut = 0x3000000;

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<uint8_t> v(n);
    for (uint8_t& x : v) x = static_cast<uint8_t>(rng());
    return v;
}

// One emulated task with its memory, ready to run again and again.
struct Task {
    std::string name;
    size_t out_bytes = 0;
    et::Device dev;
    std::vector<uint64_t> words;
    uint32_t body_words = 0;
    bool staged = false;  // the int8 Add in the staged int32 lanes (set_int8_pairs(false))

    bool run(std::string* why) {
        rknn::emulator::set_int8_pairs(!staged);
        const auto result = dev.run(kStream, body_words);
        if (!result.completed) *why = result.message;
        return result.completed;
    }
};

bool finish(Task* t, et::TaskEmitter& b, uint32_t op_enable) {
    b.tail(0, 0, op_enable);
    if (!b.finish().is_ok()) {
        std::fprintf(stderr, "%s: %s\n", t->name.c_str(), b.finish().message().c_str());
        return false;
    }
    t->words = b.words();
    t->body_words = static_cast<uint32_t>(b.body_words());
    t->dev.words(kStream, t->words);
    return true;
}

// A DPU task over an int8 cube of c x h x w at kA, with an operand of
// `operand_bytes` random bytes at kB, written to kOut.
et::DpuTask dpu_task(Task* t, int c, int h, int w, size_t operand_bytes, uint32_t seed) {
    t->out_bytes = static_cast<size_t>(et::align_up(c, 16)) * h * w;
    const auto a = random_bytes(t->out_bytes, seed), b = random_bytes(operand_bytes, seed + 1);
    t->dev.put(kA, a.data(), a.size());
    t->dev.put(kB, b.data(), b.size());
    t->dev.zeros(kOut, t->out_bytes);
    et::DpuTask d;
    d.c = c;
    d.h = h;
    d.w = w;
    d.src = kA;
    d.dst = kOut;
    d.ew.operand_addr = kB;
    d.out.offset = -2;
    return d;
}

std::string shape_name(int c, int h, int w) {
    return "1x" + std::to_string(c) + "x" + std::to_string(h) + "x" + std::to_string(w);
}

// int8 Add of two cubes of the same shape, registers as prepare_binary
// writes them: a through BS (zero point, multiplier), b through the EW
// converter, one rounding at OUT_CVT.
bool make_add(Task* t, int c, int h, int w) {
    t->name = "Add int8 " + shape_name(c, h, w);
    et::DpuTask d = dpu_task(t, c, h, w, static_cast<size_t>(et::align_up(c, 16)) * h * w, 1);
    const i8::Requant rq = i8::make_requant({0.04 / 0.09, 0.07 / 0.09});
    d.bs.enabled = d.bs.alu = d.bs.mul = true;
    d.bs.alu_value = 3;
    d.bs.mul_value = static_cast<int16_t>(rq.multiplier(0));
    d.ew.enabled = d.ew.op = d.ew.tensor = d.ew.cvt = true;
    d.ew.cvt_offset = -6;
    d.ew.cvt_scale = static_cast<int16_t>(rq.multiplier(1));
    d.out.shift = rq.shift;
    et::TaskEmitter b;
    et::emit_dpu_task(&b, d);
    return finish(t, b, 0x18);
}

// int8 Mul by a per-channel tensor (an SE gate), as prepare_binary writes it.
bool make_channel_mul(Task* t, int c, int h, int w) {
    t->name = "Mul int8 " + shape_name(c, h, w) + " by 1x" + std::to_string(c) + "x1x1";
    et::DpuTask d = dpu_task(t, c, h, w, static_cast<size_t>(et::align_up(c, 16)), 3);
    const i8::Requant rq = i8::make_requant(0.04 * 0.004 / 0.05);
    d.bs.enabled = d.bs.alu = true;
    d.bs.alu_value = 3;
    d.ew.enabled = d.ew.op = d.ew.tensor = d.ew.cvt = d.ew.op_mul = d.ew.per_channel = true;
    d.ew.cvt_offset = 128;
    d.out.scale = static_cast<int16_t>(rq.multiplier(0));
    d.out.shift = rq.shift;
    et::TaskEmitter b;
    et::emit_dpu_task(&b, d);
    return finish(t, b, 0x18);
}

// The fp16 HardSwish pass after a convolution (npu/graph_conv_fp16.cc):
// clip(y + 3, 0, 6) / 6 in BS and BN, times y from the EW operand, over an
// fp16 cube (8 channels per 16-byte atom). The baseline copies its bytes.
bool make_hardswish_fp16(Task* t, int c, int h, int w) {
    t->name = "HardSwish fp16 " + shape_name(c, h, w);
    const size_t bytes = static_cast<size_t>(et::align_up(c, 8)) * h * w * 2;
    std::vector<uint8_t> a(bytes);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> value(-6.0f, 6.0f);
    for (size_t i = 0; i < bytes; i += 2) {
        const uint16_t half = rknn::float_to_half(value(rng));
        std::memcpy(&a[i], &half, 2);
    }
    t->out_bytes = bytes;
    t->dev.put(kA, a.data(), a.size());
    t->dev.zeros(kOut, bytes);
    et::DpuTask d;
    d.c = c;
    d.h = h;
    d.w = w;
    d.fp16 = true;
    d.src = kA;
    d.dst = kOut;
    d.bs.enabled = d.bs.alu = d.bs.relu = d.bs.relux = true;
    d.bs.alu_value = static_cast<int32_t>(rknn::float_bits(3.0f));
    d.bs.relux_value = static_cast<int32_t>(rknn::float_bits(6.0f));
    d.bn.enabled = d.bn.mul = true;
    d.bn.mul_value = static_cast<int16_t>(rknn::float_to_half(1.0f / 6.0f));
    d.ew.enabled = d.ew.op = d.ew.op_mul = d.ew.tensor = true;
    d.ew.operand_bytes = 2;
    d.ew.operand_addr = kA;
    et::TaskEmitter b;
    et::emit_dpu_task(&b, d);
    return finish(t, b, 0x18);
}

// A PPU 3x3 stride-2 max pool; the baseline copies its output's bytes.
bool make_max_pool(Task* t, int c, int h, int w) {
    t->name = "MaxPool 3x3/2 int8 " + shape_name(c, h, w);
    et::PoolTask p;
    p.method = 1;
    p.k = 3;
    p.stride = 2;
    p.pad = 1;
    p.in_h = h;
    p.in_w = w;
    p.c = c;
    p.pad_value = -128;
    const int ca = et::align_up(c, 16);
    const auto a = random_bytes(static_cast<size_t>(ca) * h * w, 5);
    t->dev.put(kA, a.data(), a.size());
    t->out_bytes = static_cast<size_t>(ca) * p.out_h() * p.out_w();
    t->dev.zeros(kOut, t->out_bytes);
    et::TaskEmitter b;
    et::emit_pool(&b, p, kA, kOut);
    return finish(t, b, 0x60);
}

double seconds_of(const std::function<bool()>& body, int reps) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) {
        if (!body()) return -1.0;
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / reps;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int main(int argc, char** argv) {
    const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 9;
    const int reps = argc > 2 ? std::max(1, std::atoi(argv[2])) : 20;
    std::vector<Task> tasks(6);
    if (!make_add(&tasks[0], 16, 240, 240) || !make_add(&tasks[1], 16, 240, 240) ||
        !make_channel_mul(&tasks[2], 96, 120, 120) || !make_max_pool(&tasks[3], 16, 240, 240) ||
        !make_hardswish_fp16(&tasks[4], 240, 12, 80) || !make_hardswish_fp16(&tasks[5], 240, 48, 80))
        return 1;
    // The same Add without the pairwise multiply-add form, for the gain.
    tasks[1].staged = true;
    tasks[1].name += " (staged)";
    std::printf("int8 Add lanes: %s\n", rknn::emulator::dpu_int8_pairs_target());
    std::printf("%d rounds of %d runs each, task and memcpy alternating\n\n", rounds, reps);
    std::printf("%-40s %10s %10s %12s %12s\n", "task", "task ms", "memcpy ms", "ratio", "ratio range");
    const std::string filter = argc > 3 ? argv[3] : "";
    for (Task& t : tasks) {
        if (t.name.find(filter) == std::string::npos) continue;
        std::vector<uint8_t> from(t.out_bytes, 1), to(t.out_bytes, 0);
        std::string why;
        if (!t.run(&why)) {  // warm-up, and a check that the stream runs
            std::fprintf(stderr, "%s: %s\n", t.name.c_str(), why.c_str());
            return 1;
        }
        std::vector<double> task_s, copy_s, ratios;
        for (int r = 0; r < rounds; ++r) {
            const double ts = seconds_of([&] { return t.run(&why); }, reps);
            if (ts < 0) {
                std::fprintf(stderr, "%s: %s\n", t.name.c_str(), why.c_str());
                return 1;
            }
            const double cs = seconds_of(
                [&] {
                    std::memcpy(to.data(), from.data(), to.size());
                    // Keep the copy from being dropped.
                    asm volatile("" : : "r"(to.data()) : "memory");
                    return true;
                },
                reps);
            task_s.push_back(ts);
            copy_s.push_back(cs);
            ratios.push_back(cs / ts);
        }
        const auto [lo, hi] = std::minmax_element(ratios.begin(), ratios.end());
        std::printf("%-40s %10.3f %10.3f %12.3f %5.3f-%.3f\n", t.name.c_str(), median(task_s) * 1e3,
                    median(copy_s) * 1e3, median(ratios), *lo, *hi);
    }
    return 0;
}
