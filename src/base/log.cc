#include "base/log.h"

#include <sys/time.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <vector>

namespace rknn::log {
namespace {

struct Logger {
    std::atomic<int> level{-1};  // -1: not read from the environment yet
    std::mutex write_mutex;
    Sink sink;
};

Logger& logger() {
    static Logger instance;
    return instance;
}

int parse_level(const char* text, bool* ok) {
    *ok = false;
    if (text == nullptr || *text == '\0') return kDefaultLevel;
    char* end = nullptr;
    errno = 0;
    const long value = std::strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0') return kDefaultLevel;
    *ok = true;
    if (value < 0) return 0;
    if (value > kLevelDebug) return kLevelDebug;
    return static_cast<int>(value);
}

void emit(const std::string& line) {
    Logger& log = logger();
    std::lock_guard<std::mutex> lock(log.write_mutex);
    if (log.sink) {
        log.sink(line);
        return;
    }
    std::string with_newline = line;
    with_newline.push_back('\n');
    std::fwrite(with_newline.data(), 1, with_newline.size(), stderr);
    std::fflush(stderr);
}

std::string vformat(const char* fmt, va_list args) {
    va_list copy;
    va_copy(copy, args);
    const int needed = std::vsnprintf(nullptr, 0, fmt, copy);
    va_end(copy);
    if (needed <= 0) return std::string();
    std::vector<char> buffer(static_cast<size_t>(needed) + 1);
    std::vsnprintf(buffer.data(), buffer.size(), fmt, args);
    return std::string(buffer.data(), static_cast<size_t>(needed));
}

}  // namespace

void reload_level_from_env() {
    const char* text = std::getenv("RKNN_LOG_LEVEL");
    bool ok = false;
    const int value = parse_level(text, &ok);
    const int previous = logger().level.exchange(value);
    if (!ok && text != nullptr && *text != '\0' && previous != value) {
        write(kLevelWarning, Severity::kWarning, "RKNN_LOG_LEVEL=\"%s\" is not a number 0..5; using %d",
              text, value);
    }
}

int level() {
    int value = logger().level.load(std::memory_order_relaxed);
    if (value < 0) {
        reload_level_from_env();
        value = logger().level.load(std::memory_order_relaxed);
    }
    return value;
}

void set_level(int value) {
    if (value < 0) value = 0;
    if (value > kLevelDebug) value = kLevelDebug;
    logger().level.store(value);
}

std::string format_line(Severity severity, const std::string& message) {
    struct timeval now {};
    gettimeofday(&now, nullptr);
    struct tm local {};
    const time_t seconds = now.tv_sec;
    localtime_r(&seconds, &local);
    char prefix[48];
    std::snprintf(prefix, sizeof(prefix), "%c RKNN: [%02d:%02d:%02d.%03d] ", static_cast<char>(severity),
                  local.tm_hour, local.tm_min, local.tm_sec, static_cast<int>(now.tv_usec / 1000));
    return std::string(prefix) + message;
}

void write(int min_level, Severity severity, const char* fmt, ...) {
    if (level() < min_level) return;
    va_list args;
    va_start(args, fmt);
    std::string message = vformat(fmt, args);
    va_end(args);
    emit(format_line(severity, message));
}

void set_sink(Sink sink) {
    Logger& log = logger();
    std::lock_guard<std::mutex> lock(log.write_mutex);
    log.sink = std::move(sink);
}

}  // namespace rknn::log
