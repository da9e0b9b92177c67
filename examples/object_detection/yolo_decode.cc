#include "yolo_decode.h"

#include <algorithm>
#include <cmath>

namespace examples {
namespace {

// YOLOv5s anchors (pixels) per stride 8, 16, 32.
constexpr float kAnchors[3][6] = {{10, 13, 16, 30, 33, 23}, {30, 61, 62, 45, 59, 119}, {116, 90, 156, 198, 373, 326}};

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

float iou(const Detection& a, const Detection& b) {
    const float w = std::max(0.0f, std::min(a.x1, b.x1) - std::max(a.x0, b.x0));
    const float h = std::max(0.0f, std::min(a.y1, b.y1) - std::max(a.y0, b.y0));
    const float inter = w * h;
    const float area = (a.x1 - a.x0) * (a.y1 - a.y0) + (b.x1 - b.x0) * (b.y1 - b.y0) - inter;
    return area > 0 ? inter / area : 0.0f;
}

}  // namespace

std::vector<Detection> decode_yolov5(const std::vector<HeadOutput>& heads, int classes, float score_threshold) {
    std::vector<Detection> boxes;
    const int per_anchor = 5 + classes;
    for (size_t level = 0; level < heads.size() && level < 3; ++level) {
        const HeadOutput& head = heads[level];
        const int plane = head.grid_h * head.grid_w;
        for (int a = 0; a < 3; ++a) {
            const float* base = head.data + static_cast<size_t>(a) * per_anchor * plane;
            for (int y = 0; y < head.grid_h; ++y)
                for (int x = 0; x < head.grid_w; ++x) {
                    const int at = y * head.grid_w + x;
                    const float objectness = sigmoid(base[4 * plane + at]);
                    if (objectness < score_threshold) continue;
                    int best = 0;
                    float best_logit = base[5 * plane + at];
                    for (int c = 1; c < classes; ++c) {
                        const float logit = base[(5 + c) * plane + at];
                        if (logit > best_logit) best_logit = logit, best = c;
                    }
                    const float score = objectness * sigmoid(best_logit);
                    if (score < score_threshold) continue;
                    const float cx = (sigmoid(base[at]) * 2.0f - 0.5f + static_cast<float>(x)) * head.stride;
                    const float cy = (sigmoid(base[plane + at]) * 2.0f - 0.5f + static_cast<float>(y)) * head.stride;
                    const float bw = std::pow(sigmoid(base[2 * plane + at]) * 2.0f, 2.0f) * kAnchors[level][2 * a];
                    const float bh = std::pow(sigmoid(base[3 * plane + at]) * 2.0f, 2.0f) * kAnchors[level][2 * a + 1];
                    boxes.push_back({cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2, score, best});
                }
        }
    }
    return boxes;
}

std::vector<Detection> decode_yolox(const std::vector<HeadOutput>& heads, int classes, float score_threshold) {
    std::vector<Detection> boxes;
    for (const HeadOutput& head : heads) {
        const size_t plane = static_cast<size_t>(head.grid_h) * head.grid_w;
        for (int y = 0; y < head.grid_h; ++y)
            for (int x = 0; x < head.grid_w; ++x) {
                const float* cell = head.data + static_cast<size_t>(y) * head.grid_w + x;
                int best = 0;
                for (int c = 1; c < classes; ++c)
                    if (cell[(5 + c) * plane] > cell[(5 + best) * plane]) best = c;
                const float score = cell[4 * plane] * cell[(5 + best) * plane];
                if (score < score_threshold) continue;
                const float cx = (cell[0] + static_cast<float>(x)) * head.stride;
                const float cy = (cell[plane] + static_cast<float>(y)) * head.stride;
                const float w = std::exp(cell[2 * plane]) * head.stride, h = std::exp(cell[3 * plane]) * head.stride;
                boxes.push_back({cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2, score, best});
            }
    }
    return boxes;
}

std::vector<Detection> non_max_suppression(std::vector<Detection> boxes, float iou_threshold) {
    std::stable_sort(boxes.begin(), boxes.end(), [](const Detection& a, const Detection& b) { return a.score > b.score; });
    std::vector<Detection> kept;
    for (const Detection& box : boxes) {
        const bool overlaps = std::any_of(kept.begin(), kept.end(), [&](const Detection& k) {
            return k.label == box.label && iou(k, box) > iou_threshold;
        });
        if (!overlaps) kept.push_back(box);
    }
    return kept;
}

}  // namespace examples
