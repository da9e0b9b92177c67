// The program controller: chained multi-task streams, and malformed streams
// or programs that must stop with a clear fault, never crash.
#include <gtest/gtest.h>

#include <random>

#include "npu_harness.h"

namespace {

namespace et = rknn::emutest;
namespace hw = rknn::hw;
namespace r = rknn::hw::reg;
namespace f = rknn::hw::field;
using rknn::emulator::FaultKind;

constexpr uint32_t kStream = 0x10000, kA = 0x100000, kW = 0x200000, kRec = 0x300000, kMid = 0x400000,
                   kPool = 0x500000, kB = 0x600000, kOut = 0x700000;
constexpr int kC = 16, kH = 8, kWd = 8;

std::vector<int8_t> random_bytes(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<int8_t> v(n);
    for (int8_t& x : v) x = static_cast<int8_t>(static_cast<int>(rng() % 256) - 128);
    return v;
}

// Three tasks on three different block sets: conv 3x3 (0x1d) -> max pool
// 2x2 (0x60) -> add of a second tensor (0x18).
struct Chain {
    std::vector<et::TaskEmitter> tasks{3};
    std::vector<int8_t> input = random_bytes(kC * kH * kWd, 1), weights = random_bytes(kC * kC * 9, 2),
                        other = random_bytes(kC * 4 * 4, 3);
    et::EpilogueRegs epi;
    et::ConvGeometry geo;
    et::PoolTask pool;

    Chain() {
        geo.in_c = geo.out_c = kC;
        geo.in_h = kH;
        geo.in_w = kWd;
        geo.kh = geo.kw = 3;
        geo.pad_top = geo.pad_left = geo.pad_bottom = geo.pad_right = 1;
        for (int c = 0; c < kC; ++c) {
            epi.bias.push_back(100 * c - 700);
            epi.mult.push_back(static_cast<int16_t>(9000 + 300 * c));
        }
        epi.shift = 22;
        epi.out_zp = -4;
        et::emit_conv_int8(&tasks[0], geo, {kA, kW, kRec, kMid}, epi, 3);
        pool.method = 1;
        pool.in_h = kH;
        pool.in_w = kWd;
        pool.c = kC;
        pool.pad_value = -128;
        et::emit_pool(&tasks[1], pool, kMid, kPool);
        et::DpuTask add;
        add.c = kC;
        add.h = add.w = 4;
        add.src = kPool;
        add.dst = kOut;
        add.ew.enabled = add.ew.op = add.ew.tensor = true;
        add.ew.operand_addr = kB;
        et::emit_dpu_task(&tasks[2], add);
    }

    void load(et::Device* dev) const {
        const auto in = et::pack_int8_cube(input.data(), kC, kH, kWd, kC, 0);
        dev->put(kA, in.data(), in.size());
        const auto w = et::pack_conv_weights_int8(weights.data(), kC, kC, 3, 3, kC);
        dev->put(kW, w.data(), w.size());
        const auto rec = et::bs_records(epi, kC);
        dev->put(kRec, rec.data(), rec.size());
        const auto o = et::pack_int8_cube(other.data(), kC, 4, 4, kC, 0);
        dev->put(kB, o.data(), o.size());
        dev->zeros(kMid, kC * kH * kWd);
        dev->zeros(kPool, kC * 16);
        dev->zeros(kOut, kC * 16);
    }
};

// Task i's stream at kStream + 0x1000 * i; `linked` chains the tails.
std::vector<uint64_t> finish_task(hw::RegcmdBuilder b, const hw::RegcmdBuilder* next, uint32_t mask, int index) {
    const uint32_t next_addr = next ? kStream + 0x1000u * static_cast<uint32_t>(index + 1) : 0;
    const uint32_t next_amount = next ? hw::pc_data_amount(static_cast<uint32_t>(next->size()), 2) : 0;
    b.tail(next_addr, next_amount, mask);
    EXPECT_TRUE(b.finish().is_ok()) << b.finish().message();
    return b.words();
}

TEST(EmulatorStream, ChainedTasksGiveWhatSeparateSubmitsGive) {
    Chain chain;
    const uint32_t masks[] = {0x1d, 0x60, 0x18};
    // One program of three linked tasks.
    et::Device linked;
    chain.load(&linked);
    for (int i = 0; i < 3; ++i) {
        linked.words(kStream + 0x1000u * static_cast<uint32_t>(i),
                     finish_task(chain.tasks[static_cast<size_t>(i)], i < 2 ? &chain.tasks[static_cast<size_t>(i) + 1] : nullptr,
                                 masks[i], i));
    }
    const auto result = linked.run(kStream, static_cast<uint32_t>(chain.tasks[0].size()), 3);
    ASSERT_TRUE(result.completed) << result.message;
    EXPECT_EQ(result.tasks_done, 3u);
    EXPECT_EQ(linked.core().mmio_read(r::PC_TASK_STATUS), 3u);
    const uint32_t raw = linked.core().mmio_read(r::PC_INTERRUPT_RAW_STATUS);
    EXPECT_NE(raw & (hw::irq::kDpu0 | hw::irq::kDpu1), 0u) << "DPU tasks report";
    EXPECT_NE(raw & (hw::irq::kPpu0 | hw::irq::kPpu1), 0u) << "the PPU task reports";

    // The same three tasks, one program each.
    et::Device separate;
    chain.load(&separate);
    for (int i = 0; i < 3; ++i) {
        separate.words(kStream + 0x1000u * static_cast<uint32_t>(i),
                       finish_task(chain.tasks[static_cast<size_t>(i)], nullptr, masks[i], i));
        const auto one = separate.run(kStream + 0x1000u * static_cast<uint32_t>(i),
                                      static_cast<uint32_t>(chain.tasks[static_cast<size_t>(i)].size()), 1);
        ASSERT_TRUE(one.completed) << one.message;
    }
    const uint8_t* a = linked.memory().buffer_at(kOut);
    const uint8_t* b = separate.memory().buffer_at(kOut);
    int differ = 0, nonzero = 0;
    for (int i = 0; i < kC * 16; ++i) {
        differ += a[i] != b[i];
        nonzero += a[i] != 0;
    }
    EXPECT_EQ(differ, 0);
    EXPECT_GT(nonzero, kC * 8) << "the chain produced an output";
}

TEST(EmulatorStream, MissingLinkStopsTheProgram) {
    Chain chain;
    et::Device dev;
    chain.load(&dev);
    dev.words(kStream, finish_task(chain.tasks[0], nullptr, 0x1d, 0));
    const auto result = dev.run(kStream, static_cast<uint32_t>(chain.tasks[0].size()), 2);
    EXPECT_FALSE(result.completed);
    EXPECT_EQ(result.tasks_done, 1u);
    EXPECT_EQ(result.fault, FaultKind::kBadProgram);
    EXPECT_NE(result.message.find("no link"), std::string::npos) << result.message;
}

// Runs `words` as one task program; the body length is the stream's length.
rknn::emulator::ProgramResult run_words(const std::vector<uint64_t>& words) {
    Chain chain;
    et::Device dev;
    chain.load(&dev);
    dev.words(kStream, words);
    return dev.run(kStream, static_cast<uint32_t>(words.size() > 4 ? words.size() - 4 : 0));
}

TEST(EmulatorStream, MalformedWordsAreDecodeFaults) {
    Chain chain;
    std::vector<uint64_t> good = finish_task(chain.tasks[1], nullptr, 0x60, 1);
    {
        auto w = good;
        w.back() = 0;  // the operation-enable word is lost (a no-op in its place)
        const auto res = run_words(w);
        EXPECT_EQ(res.fault, FaultKind::kDecode);
        EXPECT_NE(res.message.find("no operation-enable"), std::string::npos) << res.message;
    }
    {
        auto w = good;
        w[w.size() - 2] = 0;  // no arm marker before the enable
        const auto res = run_words(w);
        EXPECT_EQ(res.fault, FaultKind::kDecode);
        EXPECT_NE(res.message.find("0x0041"), std::string::npos) << res.message;
    }
    {
        auto w = good;
        w.insert(w.begin(), hw::encode_word(0x0201, 5, r::DPU_BS_CFG));  // CNA select, DPU offset
        const auto res = run_words(w);
        EXPECT_EQ(res.fault, FaultKind::kDecode);
        EXPECT_NE(res.message.find("block select"), std::string::npos) << res.message;
    }
    {
        auto w = good;
        w.insert(w.begin(), hw::encode_word(0x1001, 5, 0x4ffc));  // no such DPU register
        EXPECT_EQ(run_words(w).fault, FaultKind::kDecode);
    }
    {
        auto w = good;
        w.insert(w.begin(), hw::encode_write(r::PC_INTERRUPT_MASK, 0));  // PC register other than the link
        EXPECT_EQ(run_words(w).fault, FaultKind::kDecode);
    }
}

TEST(EmulatorStream, AccessesOutsideBuffersAreIommuFaults) {
    Chain chain;
    {
        hw::RegcmdBuilder b = chain.tasks[0];
        b.write(r::CNA_FEATURE_DATA_ADDR, 0x0ff00000);  // nothing mapped there
        et::Device dev;
        chain.load(&dev);
        dev.words(kStream, finish_task(b, nullptr, 0x1d, 0));
        const auto res = dev.run(kStream, static_cast<uint32_t>(b.size()));
        EXPECT_EQ(res.fault, FaultKind::kIommuRead);
        EXPECT_EQ(res.fault_address, 0x0ff00000u);
        EXPECT_NE(dev.core().mmio_read(r::PC_INTERRUPT_RAW_STATUS) & hw::irq::kDmaReadError, 0u);
    }
    {
        hw::RegcmdBuilder b = chain.tasks[2];
        b.write(r::DPU_DST_BASE_ADDR, kOut + kC * 16 - 32);  // the cube runs past the buffer's end
        et::Device dev;
        chain.load(&dev);
        dev.words(kStream, finish_task(b, nullptr, 0x18, 2));
        const auto res = dev.run(kStream, static_cast<uint32_t>(b.size()));
        EXPECT_EQ(res.fault, FaultKind::kIommuWrite);
        EXPECT_NE(dev.core().mmio_read(r::PC_INTERRUPT_RAW_STATUS) & hw::irq::kDmaWriteError, 0u);
    }
    {
        et::Device dev;
        const auto res = dev.run(0x7000000, 20);  // the command stream itself is unmapped
        EXPECT_EQ(res.fault, FaultKind::kIommuRead);
    }
}

// Random words, and valid register writes with random values, must stop
// with some result: never a crash, never an exhausted host.
TEST(EmulatorStream, RandomProgramsNeverCrash) {
    std::mt19937_64 rng(1234);
    size_t count = 0;
    const hw::RegisterInfo* table = hw::register_table(&count);
    int completed = 0, faulted = 0;
    for (int round = 0; round < 2000; ++round) {
        Chain chain;
        std::vector<uint64_t> words;
        if (round % 3 == 0) {  // pure noise
            for (int i = 0; i < 40; ++i) words.push_back(rng());
        } else {  // a real task with some registers overwritten by random values
            words = finish_task(chain.tasks[static_cast<size_t>(round % 3)], nullptr, round % 3 == 1 ? 0x60 : 0x18,
                                round % 3);
            const int n = 1 + static_cast<int>(rng() % 6);
            for (int i = 0; i < n; ++i) {
                const hw::RegisterInfo& reg = table[rng() % count];
                if (reg.block == hw::Block::kPc) continue;
                uint32_t v = static_cast<uint32_t>(rng());
                if (rng() % 2) v &= 0xff;  // small values reach deeper into the units
                words.insert(words.end() - 4, hw::encode_write(reg.offset, v));
            }
        }
        et::Device dev;
        chain.load(&dev);
        dev.words(kStream, words);
        const auto res = dev.run(kStream, static_cast<uint32_t>(words.size() - 4));
        (res.completed ? completed : faulted)++;
        if (!res.completed) {
            EXPECT_FALSE(res.message.empty()) << "a fault always says why";
        }
    }
    EXPECT_GT(faulted, 300);
    EXPECT_GT(completed, 30);
}

}  // namespace
