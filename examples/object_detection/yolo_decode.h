// YOLOv5 post-processing for the detection demo: the three raw heads
// (3 anchors x (4 box + 1 objectness + classes) channels each, strides 8,
// 16 and 32) decoded to boxes, then per-class non-maximum suppression.
#pragma once

#include <vector>

namespace examples {

struct Detection {
    float x0, y0, x1, y1;  // input-image pixels
    float score;
    int label;
};

struct HeadOutput {
    const float* data;  // NCHW [1, 3 * (5 + classes), grid_h, grid_w]
    int grid_h, grid_w;
    int stride;
};

std::vector<Detection> decode_yolov5(const std::vector<HeadOutput>& heads, int classes, float score_threshold);
std::vector<Detection> non_max_suppression(std::vector<Detection> boxes, float iou_threshold);

}  // namespace examples
