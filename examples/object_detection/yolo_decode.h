// YOLO post-processing for the detection demos: heads decoded to boxes
// (YOLOv5's anchors, or YOLOX's anchor-free cells), then per-class
// non-maximum suppression.
#pragma once

#include <vector>

namespace examples {

struct Detection {
    float x0, y0, x1, y1;  // input-image pixels
    float score;
    int label;
};

struct HeadOutput {
    const float* data;  // NCHW [1, 3 * (5 + classes), grid_h, grid_w]; YOLOX: [1, 5 + classes, grid_h, grid_w]
    int grid_h, grid_w;
    int stride;
};

std::vector<Detection> decode_yolov5(const std::vector<HeadOutput>& heads, int classes, float score_threshold);
// YOLOX heads: per cell (dx, dy, log w, log h) in strides, then objectness
// and class scores with the sigmoid already applied (by the model).
std::vector<Detection> decode_yolox(const std::vector<HeadOutput>& heads, int classes, float score_threshold);
std::vector<Detection> non_max_suppression(std::vector<Detection> boxes, float iou_threshold);

}  // namespace examples
