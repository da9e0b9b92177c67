// Logging in the vendor runtime's style: "E RKNN: [hh:mm:ss.mmm] message", to stderr.
//
// RKNN_LOG_LEVEL picks how much is printed:
//   0  nothing
//   1  errors and warnings (the default)
//   2  + information (which device was chosen, model summary)
//   3  + memory allocation report
//   4  + per-layer performance table after each run
//   5  + debug messages and per-layer output dumps
//
// The level is read from the environment on first use and again at every
// rknn_init (context creation), never on a hot path. Writing is thread-safe:
// each line is formatted first and written with one call under a lock.
#pragma once

#include <functional>
#include <string>

namespace rknn::log {

enum class Severity : char { kError = 'E', kWarning = 'W', kInfo = 'I', kDebug = 'D' };

// The lowest RKNN_LOG_LEVEL at which each severity is printed.
constexpr int kLevelError = 1;
constexpr int kLevelWarning = 1;
constexpr int kLevelInfo = 2;
constexpr int kLevelMemoryReport = 3;
constexpr int kLevelPerfTable = 4;
constexpr int kLevelDebug = 5;
constexpr int kDefaultLevel = 1;

int level();
// Re-reads RKNN_LOG_LEVEL (called at context creation). Values outside 0..5
// are clamped; a non-number leaves the default and says so once.
void reload_level_from_env();
void set_level(int level);

inline bool enabled(int min_level) { return level() >= min_level; }

// Emits one line if the current level is >= min_level.
void write(int min_level, Severity severity, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));

// Formats a complete line as the logger would print it (no trailing newline).
std::string format_line(Severity severity, const std::string& message);

// Tests capture output here; nullptr restores stderr.
using Sink = std::function<void(const std::string& line)>;
void set_sink(Sink sink);

}  // namespace rknn::log

#define RKNN_LOGE(...) ::rknn::log::write(::rknn::log::kLevelError, ::rknn::log::Severity::kError, __VA_ARGS__)
#define RKNN_LOGW(...) \
    ::rknn::log::write(::rknn::log::kLevelWarning, ::rknn::log::Severity::kWarning, __VA_ARGS__)
#define RKNN_LOGI(...) ::rknn::log::write(::rknn::log::kLevelInfo, ::rknn::log::Severity::kInfo, __VA_ARGS__)
#define RKNN_LOGD(...) ::rknn::log::write(::rknn::log::kLevelDebug, ::rknn::log::Severity::kDebug, __VA_ARGS__)
// Information printed only from a given level on (memory report, perf table).
#define RKNN_LOG_AT(min_level, ...) ::rknn::log::write((min_level), ::rknn::log::Severity::kInfo, __VA_ARGS__)
