#include "base/log.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cctype>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

namespace {

// True if `line` is "<S> RKNN: [hh:mm:ss.mmm] <message>" with S one of E/W/I/D.
bool has_vendor_prefix(const std::string& line, std::string* message) {
    if (line.size() < 23 || std::string("EWID").find(line[0]) == std::string::npos) return false;
    if (line.compare(1, 8, " RKNN: [") != 0) return false;
    const std::string stamp = line.substr(9, 12);  // hh:mm:ss.mmm
    for (size_t i = 0; i < stamp.size(); ++i) {
        const bool separator = i == 2 || i == 5 || i == 8;
        if (separator ? (stamp[i] != (i == 8 ? '.' : ':')) : !isdigit(static_cast<unsigned char>(stamp[i])))
            return false;
    }
    if (line.compare(21, 2, "] ") != 0) return false;
    *message = line.substr(23);
    return true;
}

class LogTest : public ::testing::Test {
protected:
    void SetUp() override {
        rknn::log::set_sink([this](const std::string& line) { lines_.push_back(line); });
    }
    void TearDown() override {
        rknn::log::set_sink(nullptr);
        unsetenv("RKNN_LOG_LEVEL");
        rknn::log::reload_level_from_env();
    }
    std::vector<std::string> lines_;
};

TEST_F(LogTest, LinesHaveTheVendorFormat) {
    rknn::log::set_level(5);
    RKNN_LOGE("bad %s %d", "thing", 7);
    RKNN_LOGW("careful");
    RKNN_LOGI("fyi");
    RKNN_LOGD("details");
    ASSERT_EQ(lines_.size(), 4u);
    std::string message;
    for (const std::string& line : lines_) EXPECT_TRUE(has_vendor_prefix(line, &message)) << line;
    ASSERT_TRUE(has_vendor_prefix(lines_[0], &message));
    EXPECT_EQ(message, "bad thing 7");
    EXPECT_EQ(lines_[1][0], 'W');
    EXPECT_EQ(lines_[2][0], 'I');
    EXPECT_EQ(lines_[3][0], 'D');
}

TEST_F(LogTest, LevelsFilterBySeverity) {
    rknn::log::set_level(0);
    RKNN_LOGE("hidden at 0");
    EXPECT_TRUE(lines_.empty());
    rknn::log::set_level(1);
    RKNN_LOGE("error");
    RKNN_LOGW("warning");
    RKNN_LOGI("info");
    EXPECT_EQ(lines_.size(), 2u);
    rknn::log::set_level(3);
    RKNN_LOG_AT(rknn::log::kLevelMemoryReport, "memory table");
    RKNN_LOG_AT(rknn::log::kLevelPerfTable, "perf table");
    RKNN_LOGD("debug");
    ASSERT_EQ(lines_.size(), 3u);
    EXPECT_NE(lines_[2].find("memory table"), std::string::npos);
}

TEST_F(LogTest, EnvironmentPicksTheLevel) {
    setenv("RKNN_LOG_LEVEL", "4", 1);
    rknn::log::reload_level_from_env();
    EXPECT_EQ(rknn::log::level(), 4);
    setenv("RKNN_LOG_LEVEL", "99", 1);
    rknn::log::reload_level_from_env();
    EXPECT_EQ(rknn::log::level(), 5) << "clamped";
    setenv("RKNN_LOG_LEVEL", "-3", 1);
    rknn::log::reload_level_from_env();
    EXPECT_EQ(rknn::log::level(), 0);
    setenv("RKNN_LOG_LEVEL", "loud", 1);
    rknn::log::reload_level_from_env();
    EXPECT_EQ(rknn::log::level(), rknn::log::kDefaultLevel);
    ASSERT_FALSE(lines_.empty());
    EXPECT_NE(lines_.back().find("not a number"), std::string::npos);
    unsetenv("RKNN_LOG_LEVEL");
    rknn::log::reload_level_from_env();
    EXPECT_EQ(rknn::log::level(), rknn::log::kDefaultLevel);
}

TEST_F(LogTest, ConcurrentWritersNeverInterleaveLines) {
    rknn::log::set_level(2);
    constexpr int kThreads = 4;
    constexpr int kLines = 500;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([t] {
            for (int i = 0; i < kLines; ++i) RKNN_LOGI("thread %d line %d end", t, i);
        });
    }
    for (std::thread& thread : threads) thread.join();
    ASSERT_EQ(lines_.size(), static_cast<size_t>(kThreads * kLines));
    std::vector<std::vector<int>> seen(kThreads);
    for (const std::string& line : lines_) {
        std::string message;
        ASSERT_TRUE(has_vendor_prefix(line, &message)) << line;
        int thread = -1, index = -1;
        char tail[8] = {};
        ASSERT_EQ(std::sscanf(message.c_str(), "thread %d line %d %7s", &thread, &index, tail), 3) << line;
        ASSERT_STREQ(tail, "end") << line;
        ASSERT_TRUE(thread >= 0 && thread < kThreads) << line;
        seen[thread].push_back(index);
    }
    for (const std::vector<int>& indices : seen) {
        ASSERT_EQ(indices.size(), static_cast<size_t>(kLines));
        for (int i = 0; i < kLines; ++i) EXPECT_EQ(indices[i], i) << "lines of one thread stay in order";
    }
}

}  // namespace
