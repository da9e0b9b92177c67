#include "util/progress.h"

#include <unistd.h>

#include <cmath>

namespace rknn::convert {
namespace {

using Clock = std::chrono::steady_clock;

std::string seconds_text(double s) {
    char text[32];
    if (s < 60.0) {
        std::snprintf(text, sizeof(text), "%.1f s", s);
    } else {
        std::snprintf(text, sizeof(text), "%d min %02d s", static_cast<int>(s / 60.0), static_cast<int>(std::fmod(s, 60.0)));
    }
    return text;
}

}  // namespace

Progress::Progress(std::string label, size_t total, std::string unit, bool enabled, std::FILE* out)
    : label_(std::move(label)), total_(total), unit_(std::move(unit)), enabled_(enabled && total > 0), out_(out),
      terminal_(out != nullptr && isatty(fileno(out)) != 0), start_(Clock::now()), last_print_(start_) {
    if (enabled_ && !terminal_) {
        std::fprintf(out_, "%s: %zu %s\n", label_.c_str(), total_, unit_.c_str());
        std::fflush(out_);
    }
}

Progress::~Progress() { finish(); }

std::string Progress::format(const std::string& label, size_t done, size_t total, const std::string& unit,
                             double elapsed_s, bool bar) {
    std::string line = label + " ";
    if (bar) {
        constexpr int kWidth = 28;
        const int filled = total > 0 ? static_cast<int>(kWidth * done / total) : kWidth;
        line += "[" + std::string(static_cast<size_t>(filled), '#') + std::string(static_cast<size_t>(kWidth - filled), '.') + "] ";
    }
    line += std::to_string(done) + "/" + std::to_string(total) + " " + unit + ", " + seconds_text(elapsed_s);
    if (done > 0 && done < total) {
        line += ", about " + seconds_text(elapsed_s / static_cast<double>(done) * static_cast<double>(total - done)) +
                " left";
    }
    return line;
}

void Progress::update(size_t done) {
    if (!enabled_ || finished_) return;
    last_done_ = done;
    const Clock::time_point now = Clock::now();
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    if (terminal_) {
        std::fprintf(out_, "\r%s\033[K", format(label_, done, total_, unit_, elapsed, true).c_str());
        std::fflush(out_);
        return;
    }
    // Plain lines: at most one every 5 seconds, and the last one.
    if (done < total_ && std::chrono::duration<double>(now - last_print_).count() < 5.0) return;
    last_print_ = now;
    std::fprintf(out_, "%s\n", format(label_, done, total_, unit_, elapsed, false).c_str());
    std::fflush(out_);
}

void Progress::finish() {
    if (!enabled_ || finished_) return;
    finished_ = true;
    if (terminal_) {
        std::fprintf(out_, "\n");
        std::fflush(out_);
    } else if (last_done_ < total_) {
        std::fprintf(out_, "%s: stopped at %zu/%zu %s\n", label_.c_str(), last_done_, total_, unit_.c_str());
    }
}

}  // namespace rknn::convert
