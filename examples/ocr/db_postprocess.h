// DB (differentiable binarisation) post-processing of a text detector's
// probability map, as PP-OCR's det models expect: threshold, connected
// regions, a score per region, the region's box grown by the unclip ratio,
// and reading order.
#pragma once

#include <vector>

namespace ocr {

struct TextBox {
    int x0 = 0, y0 = 0, x1 = 0, y1 = 0;  // inclusive, in the source image's pixels
    float score = 0.0f;                   // mean probability over the region
};

struct DbParams {
    float threshold = 0.3f;      // a pixel is text when its probability exceeds this
    float box_threshold = 0.6f;  // a region is kept when its mean probability exceeds this
    float unclip_ratio = 1.5f;   // DB's shrink ratio undone: grow by area * ratio / perimeter
    int min_size = 3;            // regions smaller than this on a side (map pixels) are noise
};

// `prob` is a height x width map. A map pixel (x, y) lies at image pixel
// (x * scale, y * scale); boxes are clipped to image_width x image_height.
std::vector<TextBox> boxes_from_probability_map(const float* prob, int width, int height, const DbParams& params,
                                                float scale, int image_width, int image_height);

// Top to bottom; boxes on one line (vertical centres within half a box
// height) left to right.
void sort_reading_order(std::vector<TextBox>* boxes);

}  // namespace ocr
