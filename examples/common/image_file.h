// Image helpers for the examples, on stb (Debian's libstb-dev): load any
// image as RGB pixels resized to the model's input, draw boxes, write PNG.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace examples {

struct Image {
    int width = 0, height = 0, channels = 0;
    std::vector<uint8_t> pixels;  // HWC, row-major
};

// Loads `path` with `channels` channels (stb_image), resized to width x height
// when both are > 0 and differ from the file's size.
bool load_image(const std::string& path, int channels, int width, int height, Image* out, std::string* error);
// The w x h region of `src` at (x0, y0), resized to out_w x out_h (stb's
// filter). false when the region is not inside the image or a size is 0.
bool resize_region(const Image& src, int x0, int y0, int w, int h, int out_w, int out_h, Image* out);
// A rectangle outline, clipped to the image.
void draw_box(Image* image, int x0, int y0, int x1, int y1, const uint8_t rgb[3], int thickness = 2);
bool write_png(const std::string& path, const Image& image);

}  // namespace examples
