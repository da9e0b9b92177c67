// Progress of long converter stages (calibration, accuracy analysis) on
// stderr: a bar redrawn in place on a terminal, plain lines otherwise (a log
// file or CI), each with the samples done, the elapsed time and an estimate of
// the time left.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

namespace rknn::convert {

class Progress {
public:
    // `total` steps of `unit` ("samples"); nothing is printed when `enabled` is false.
    Progress(std::string label, size_t total, std::string unit, bool enabled = true, std::FILE* out = stderr);
    ~Progress();
    Progress(const Progress&) = delete;
    Progress& operator=(const Progress&) = delete;

    // `done` steps are finished.
    void update(size_t done);
    // Ends the bar's line (also done by the destructor).
    void finish();

    // The line printed for `done` of `total` after `elapsed_s` seconds; `bar`
    // adds the drawn bar (exposed for tests).
    static std::string format(const std::string& label, size_t done, size_t total, const std::string& unit,
                              double elapsed_s, bool bar);

private:
    std::string label_;
    size_t total_;
    std::string unit_;
    bool enabled_;
    std::FILE* out_;
    bool terminal_;
    bool finished_ = false;
    size_t last_done_ = 0;
    std::chrono::steady_clock::time_point start_;
    std::chrono::steady_clock::time_point last_print_;
};

}  // namespace rknn::convert
