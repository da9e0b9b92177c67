#include "db_postprocess.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace ocr {
namespace {

struct Region {
    int x0, y0, x1, y1;
    double sum = 0.0;
    int64_t pixels = 0;
};

// 8-connected regions of `mask`, found with an explicit stack (no recursion:
// a page-sized region must not overflow the call stack).
std::vector<Region> connected_regions(const std::vector<uint8_t>& mask, const float* prob, int width, int height) {
    std::vector<Region> regions;
    std::vector<uint8_t> seen(mask.size(), 0);
    std::vector<int> stack;
    for (int start = 0; start < width * height; ++start) {
        if (!mask[start] || seen[start]) continue;
        Region r{start % width, start / width, start % width, start / width};
        seen[start] = 1;
        stack.push_back(start);
        while (!stack.empty()) {
            const int p = stack.back();
            stack.pop_back();
            const int x = p % width, y = p / width;
            r.x0 = std::min(r.x0, x);
            r.x1 = std::max(r.x1, x);
            r.y0 = std::min(r.y0, y);
            r.y1 = std::max(r.y1, y);
            r.sum += prob[p];
            ++r.pixels;
            for (int dy = -1; dy <= 1; ++dy) {
                for (int dx = -1; dx <= 1; ++dx) {
                    const int nx = x + dx, ny = y + dy;
                    if (nx < 0 || ny < 0 || nx >= width || ny >= height) continue;
                    const int q = ny * width + nx;
                    if (mask[q] && !seen[q]) {
                        seen[q] = 1;
                        stack.push_back(q);
                    }
                }
            }
        }
        regions.push_back(r);
    }
    return regions;
}

}  // namespace

std::vector<TextBox> boxes_from_probability_map(const float* prob, int width, int height, const DbParams& params,
                                                float scale, int image_width, int image_height) {
    std::vector<TextBox> boxes;
    if (prob == nullptr || width <= 0 || height <= 0) return boxes;
    std::vector<uint8_t> mask(static_cast<size_t>(width) * height);
    for (size_t i = 0; i < mask.size(); ++i) mask[i] = prob[i] > params.threshold;
    for (const Region& r : connected_regions(mask, prob, width, height)) {
        const double w = r.x1 - r.x0 + 1, h = r.y1 - r.y0 + 1;
        if (std::min(w, h) < params.min_size) continue;
        const float score = static_cast<float>(r.sum / static_cast<double>(r.pixels));
        if (score < params.box_threshold) continue;
        // The network predicts a shrunk kernel of each text region: grow it back.
        const double grow = w * h * params.unclip_ratio / (2.0 * (w + h));
        TextBox b;
        b.x0 = std::clamp(static_cast<int>(std::floor((r.x0 - grow) * scale)), 0, image_width - 1);
        b.y0 = std::clamp(static_cast<int>(std::floor((r.y0 - grow) * scale)), 0, image_height - 1);
        b.x1 = std::clamp(static_cast<int>(std::ceil((r.x1 + 1 + grow) * scale)) - 1, 0, image_width - 1);
        b.y1 = std::clamp(static_cast<int>(std::ceil((r.y1 + 1 + grow) * scale)) - 1, 0, image_height - 1);
        b.score = score;
        if (b.x1 > b.x0 && b.y1 > b.y0) boxes.push_back(b);
    }
    return boxes;
}

void sort_reading_order(std::vector<TextBox>* boxes) {
    std::sort(boxes->begin(), boxes->end(), [](const TextBox& a, const TextBox& b) { return a.y0 + a.y1 < b.y0 + b.y1; });
    // Group into lines, then order each line left to right.
    size_t line_start = 0;
    for (size_t i = 1; i <= boxes->size(); ++i) {
        const bool new_line = i == boxes->size() || [&] {
            const TextBox& first = (*boxes)[line_start];
            const TextBox& b = (*boxes)[i];
            const double centre_gap = std::fabs(0.5 * (b.y0 + b.y1) - 0.5 * (first.y0 + first.y1));
            return centre_gap > 0.5 * std::min(first.y1 - first.y0, b.y1 - b.y0);
        }();
        if (!new_line) continue;
        std::sort(boxes->begin() + static_cast<long>(line_start), boxes->begin() + static_cast<long>(i),
                  [](const TextBox& a, const TextBox& b) { return a.x0 < b.x0; });
        line_start = i;
    }
}

}  // namespace ocr
