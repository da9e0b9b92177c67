// Vendor regcmd captures (golden/allbilly-rk3588/derived/, golden/INDEX.md
// section 3b): every word must decode under the strict RK3588 rules, every
// task must end where its task descriptor says, and the captures must
// survive a print -> assemble round trip. Skipped when the golden folder is
// absent (RKNN_GOLDEN_DIR, a CMake cache variable).
#include <gtest/gtest.h>

#include <dirent.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "hw/regcmd.h"
#include "hw/regcmd_text.h"

namespace rknn::hw {
namespace {

const std::string kDerived = "/allbilly-rk3588/derived";
const std::string kBinSuffix = ".regcmd.u64le.bin";

struct MetaTask {
    uint64_t enable_mask = 0;
    uint64_t regcfg_amount = 0;
    uint64_t first_word = 0;  // qword_index_in_bin
};

std::string read_all(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Every value of "key": N or "key": "0x.." in file order. The meta files are
// flat enough that this is all the JSON reading the test needs.
std::vector<uint64_t> json_numbers(const std::string& json, const std::string& key) {
    std::vector<uint64_t> out;
    const std::string needle = "\"" + key + "\"";
    for (size_t pos = json.find(needle); pos != std::string::npos; pos = json.find(needle, pos + 1)) {
        size_t i = json.find(':', pos + needle.size());
        if (i == std::string::npos) break;
        ++i;
        while (i < json.size() && (json[i] == ' ' || json[i] == '"')) ++i;
        out.push_back(std::strtoull(json.c_str() + i, nullptr, 0));
    }
    return out;
}

std::vector<MetaTask> read_meta(const std::string& path) {
    const std::string json = read_all(path);
    const auto masks = json_numbers(json, "enable_mask");
    const auto amounts = json_numbers(json, "regcfg_amount");
    const auto starts = json_numbers(json, "qword_index_in_bin");
    EXPECT_EQ(masks.size(), amounts.size()) << path;
    EXPECT_EQ(masks.size(), starts.size()) << path;
    std::vector<MetaTask> tasks;
    for (size_t i = 0; i < std::min({masks.size(), amounts.size(), starts.size()}); ++i) {
        tasks.push_back(MetaTask{masks[i], amounts[i], starts[i]});
    }
    return tasks;
}

std::vector<uint64_t> read_words(const std::string& path) {
    const std::string bytes = read_all(path);
    EXPECT_EQ(bytes.size() % 8, 0u) << path;
    std::vector<uint64_t> words(bytes.size() / 8);
    for (size_t i = 0; i < words.size(); ++i) {
        uint64_t w = 0;
        for (int b = 7; b >= 0; --b) w = (w << 8) | static_cast<unsigned char>(bytes[i * 8 + static_cast<size_t>(b)]);
        words[i] = w;
    }
    return words;
}

std::vector<std::string> capture_stems(const std::string& dir) {
    std::vector<std::string> stems;
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) return stems;
    while (const dirent* e = readdir(d)) {
        const std::string name = e->d_name;
        if (name.size() > kBinSuffix.size() &&
            name.compare(name.size() - kBinSuffix.size(), kBinSuffix.size(), kBinSuffix) == 0) {
            stems.push_back(dir + "/" + name.substr(0, name.size() - kBinSuffix.size()));
        }
    }
    closedir(d);
    std::sort(stems.begin(), stems.end());
    return stems;
}

TEST(GoldenCaptures, VendorStreamsDecodeStrictly) {
    const std::string dir = std::string(RKNN_GOLDEN_DIR) + kDerived;
    const std::vector<std::string> stems = capture_stems(dir);
    if (stems.empty()) GTEST_SKIP() << "no vendor captures under " << dir << " (golden data absent)";

    const DecodeRules strict;  // RK3588: block select checked, unknown registers rejected
    size_t total_words = 0, total_tasks = 0, total_invalid = 0, padding = 0, writes = 0;
    for (const std::string& stem : stems) {
        SCOPED_TRACE(stem);
        const std::vector<uint64_t> words = read_words(stem + kBinSuffix);
        const std::vector<MetaTask> tasks = read_meta(stem + ".meta.json");
        ASSERT_FALSE(tasks.empty());

        std::vector<size_t> enables;
        size_t invalid = 0;
        for (size_t i = 0; i < words.size(); ++i) {
            const DecodedWord d = decode_word(words[i], strict);
            if (d.kind == WordKind::kInvalid) {
                ++invalid;
                ADD_FAILURE() << "word " << i << " " << print_word(words[i], {});
            }
            if (d.kind == WordKind::kOpEnable) enables.push_back(i);
            writes += d.kind == WordKind::kWrite;
        }
        // Each task is regcfg_amount body words plus the 4-word tail, which
        // ends with an op-enable carrying the descriptor's enable_mask.
        ASSERT_EQ(enables.size(), tasks.size());
        for (size_t t = 0; t < tasks.size(); ++t) {
            const size_t end = tasks[t].first_word + tasks[t].regcfg_amount + kTailWords - 1;
            ASSERT_LT(end, words.size()) << "task " << t;
            EXPECT_EQ(enables[t], end) << "task " << t;
            EXPECT_EQ(decode_word(words[end], strict).value, tasks[t].enable_mask) << "task " << t;
            EXPECT_EQ(words[end - 1], encode_arm()) << "task " << t;
            // Between this task's tail and the next task: zero padding only.
            const size_t next = t + 1 < tasks.size() ? tasks[t + 1].first_word : words.size();
            for (size_t i = end + 1; i < next; ++i) {
                EXPECT_EQ(words[i], 0u) << "word " << i << " after task " << t;
                ++padding;
            }
        }
        const auto back = assemble_listing(print_listing(words, {}));
        ASSERT_TRUE(back.is_ok()) << back.status().message();
        EXPECT_EQ(back.value(), words);

        std::printf("golden: %-90s %5zu words %3zu tasks %zu invalid\n",
                    stem.substr(dir.size() + 1).c_str(), words.size(), tasks.size(), invalid);
        total_words += words.size();
        total_tasks += tasks.size();
        total_invalid += invalid;
    }
    std::printf("golden: %zu captures, %zu words (%zu writes, %zu zero padding), %zu tasks, %zu invalid words\n",
                stems.size(), total_words, writes, padding, total_tasks, total_invalid);
    RecordProperty("captures", static_cast<int>(stems.size()));
    RecordProperty("words", static_cast<int>(total_words));
    RecordProperty("tasks", static_cast<int>(total_tasks));
    RecordProperty("invalid", static_cast<int>(total_invalid));
    EXPECT_EQ(total_invalid, 0u);
}

}  // namespace
}  // namespace rknn::hw
