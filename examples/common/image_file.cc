#include "image_file.h"

#include <algorithm>

#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_RESIZE_IMPLEMENTATION
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image.h>
#include <stb/stb_image_resize.h>
#include <stb/stb_image_write.h>

namespace examples {

bool load_image(const std::string& path, int channels, int width, int height, Image* out, std::string* error) {
    int w = 0, h = 0, file_channels = 0;
    unsigned char* data = stbi_load(path.c_str(), &w, &h, &file_channels, channels);
    if (data == nullptr) {
        *error = "cannot read image " + path + ": " + stbi_failure_reason();
        return false;
    }
    out->channels = channels;
    if (width > 0 && height > 0 && (w != width || h != height)) {
        out->pixels.resize(static_cast<size_t>(width) * height * channels);
        stbir_resize_uint8(data, w, h, 0, out->pixels.data(), width, height, 0, channels);
        out->width = width;
        out->height = height;
    } else {
        out->pixels.assign(data, data + static_cast<size_t>(w) * h * channels);
        out->width = w;
        out->height = h;
    }
    stbi_image_free(data);
    return true;
}

bool resize_region(const Image& src, int x0, int y0, int w, int h, int out_w, int out_h, Image* out) {
    if (w <= 0 || h <= 0 || out_w <= 0 || out_h <= 0 || x0 < 0 || y0 < 0 || x0 + w > src.width ||
        y0 + h > src.height || src.channels <= 0)
        return false;
    out->width = out_w;
    out->height = out_h;
    out->channels = src.channels;
    out->pixels.resize(static_cast<size_t>(out_w) * out_h * src.channels);
    const size_t stride = static_cast<size_t>(src.width) * src.channels;
    const uint8_t* first = src.pixels.data() + static_cast<size_t>(y0) * stride + static_cast<size_t>(x0) * src.channels;
    return stbir_resize_uint8(first, w, h, static_cast<int>(stride), out->pixels.data(), out_w, out_h, 0,
                              src.channels) != 0;
}

void draw_box(Image* image, int x0, int y0, int x1, int y1, const uint8_t rgb[3], int thickness) {
    const auto plot = [image, rgb](int x, int y) {
        if (x < 0 || y < 0 || x >= image->width || y >= image->height) return;
        uint8_t* p = &image->pixels[(static_cast<size_t>(y) * image->width + x) * image->channels];
        for (int c = 0; c < std::min(3, image->channels); ++c) p[c] = rgb[c];
    };
    for (int t = 0; t < thickness; ++t) {
        for (int x = x0; x <= x1; ++x) {
            plot(x, y0 + t);
            plot(x, y1 - t);
        }
        for (int y = y0; y <= y1; ++y) {
            plot(x0 + t, y);
            plot(x1 - t, y);
        }
    }
}

bool write_png(const std::string& path, const Image& image) {
    return stbi_write_png(path.c_str(), image.width, image.height, image.channels, image.pixels.data(),
                          image.width * image.channels) != 0;
}

}  // namespace examples
