#include "data/dataset.h"

#include <stb_image.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/npy.h"
#include "cpu/convert.h"
#include "layout/preprocess.h"

namespace rknn::convert {
namespace {

namespace fs = std::filesystem;
using graph::DType;

bool has_extension(const std::string& path, const std::vector<std::string>& extensions) {
    std::string ext = fs::path(path).extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return std::find(extensions.begin(), extensions.end(), ext) != extensions.end();
}

const std::vector<std::string> kImageExtensions = {".jpg", ".jpeg", ".png", ".bmp"};

// Bilinear resize of an interleaved uint8 image (half-pixel centres).
std::vector<uint8_t> resize_bilinear(const uint8_t* src, int sw, int sh, int c, int dw, int dh) {
    std::vector<uint8_t> dst(static_cast<size_t>(dw) * dh * c);
    for (int y = 0; y < dh; ++y) {
        const float fy = std::max(0.0f, (y + 0.5f) * sh / dh - 0.5f);
        const int y0 = std::min(static_cast<int>(fy), sh - 1);
        const int y1 = std::min(y0 + 1, sh - 1);
        const float wy = fy - y0;
        for (int x = 0; x < dw; ++x) {
            const float fx = std::max(0.0f, (x + 0.5f) * sw / dw - 0.5f);
            const int x0 = std::min(static_cast<int>(fx), sw - 1);
            const int x1 = std::min(x0 + 1, sw - 1);
            const float wx = fx - x0;
            for (int ch = 0; ch < c; ++ch) {
                const float top = src[(y0 * sw + x0) * c + ch] * (1 - wx) + src[(y0 * sw + x1) * c + ch] * wx;
                const float bottom = src[(y1 * sw + x0) * c + ch] * (1 - wx) + src[(y1 * sw + x1) * c + ch] * wx;
                dst[(static_cast<size_t>(y) * dw + x) * c + ch] =
                    static_cast<uint8_t>(std::clamp(std::nearbyint(top * (1 - wy) + bottom * wy), 0.0f, 255.0f));
            }
        }
    }
    return dst;
}

// An image as NHWC uint8 [1, H, W, C] with the input's H, W and C.
StatusOr<cpu::HostTensor> read_image(const std::string& file, const graph::Shape& nchw) {
    if (nchw.size() != 4 || nchw[1] < 1 || nchw[1] > 4) {
        return Status(StatusCode::kInvalidArgument, file + ": images can only feed 4-D inputs with 1 to 4 channels");
    }
    const int c = static_cast<int>(nchw[1]);
    int w = 0, h = 0, file_channels = 0;
    uint8_t* pixels = stbi_load(file.c_str(), &w, &h, &file_channels, c);
    if (pixels == nullptr) {
        return Status(StatusCode::kInvalidArgument, file + ": cannot read image (" + std::string(stbi_failure_reason()) + ")");
    }
    const std::vector<uint8_t> resized =
        resize_bilinear(pixels, w, h, c, static_cast<int>(nchw[3]), static_cast<int>(nchw[2]));
    stbi_image_free(pixels);
    cpu::HostTensor t(DType::kUInt8, {1, nchw[2], nchw[3], nchw[1]});
    std::memcpy(t.raw(), resized.data(), resized.size());
    return t;
}

DType dtype_of_npy(const std::string& code) {
    if (code == "u1") return DType::kUInt8;
    if (code == "i1") return DType::kInt8;
    if (code == "f4") return DType::kFloat32;
    if (code == "f8") return DType::kFloat64;
    if (code == "f2") return DType::kFloat16;
    if (code == "i2") return DType::kInt16;
    if (code == "u2") return DType::kUInt16;
    if (code == "i4") return DType::kInt32;
    if (code == "i8") return DType::kInt64;
    if (code == "b1") return DType::kBool;
    return DType::kUndefined;
}

StatusOr<cpu::HostTensor> read_npy(const std::string& file) {
    RKNN_ASSIGN_OR_RETURN(npy::Array a, npy::read_file(file));
    const DType dtype = dtype_of_npy(a.dtype);
    if (dtype == DType::kUndefined) return Status(StatusCode::kInvalidArgument, file + ": unsupported npy type " + a.dtype);
    cpu::HostTensor t(dtype, a.shape);
    std::memcpy(t.raw(), a.data.data(), a.data.size());
    return t;
}

}  // namespace

StatusOr<std::vector<std::vector<std::string>>> list_dataset(const std::string& path, size_t n_inputs) {
    std::vector<std::vector<std::string>> samples;
    std::error_code error;
    if (fs::is_directory(path, error)) {
        if (n_inputs != 1) {
            return Status(StatusCode::kInvalidArgument, "a dataset folder works for one-input models; give a list file");
        }
        std::vector<std::string> files;
        for (const auto& entry : fs::directory_iterator(path, error)) {
            const std::string f = entry.path().string();
            if (entry.is_regular_file() && (has_extension(f, kImageExtensions) || has_extension(f, {".npy"})))
                files.push_back(f);
        }
        std::sort(files.begin(), files.end());
        for (const std::string& f : files) samples.push_back({f});
    } else {
        std::ifstream in(path);
        if (!in) return Status(StatusCode::kInvalidArgument, "cannot open dataset " + path);
        const fs::path base = fs::path(path).parent_path();
        std::string line;
        while (std::getline(in, line)) {
            std::istringstream words(line);
            std::vector<std::string> files;
            for (std::string word; words >> word;) {
                files.push_back(fs::path(word).is_absolute() ? word : (base / word).string());
            }
            if (files.empty() || files[0][0] == '#') continue;
            if (files.size() != n_inputs) {
                return Status(StatusCode::kInvalidArgument, "dataset line \"" + line + "\" names " +
                                                                std::to_string(files.size()) + " files for " +
                                                                std::to_string(n_inputs) + " inputs");
            }
            samples.push_back(files);
        }
    }
    if (samples.empty()) return Status(StatusCode::kInvalidArgument, "the dataset " + path + " holds no samples");
    return samples;
}

StatusOr<cpu::HostTensor> load_input(const std::string& file, const graph::Graph& g, size_t input_index) {
    const graph::Tensor& input = g.tensors[g.inputs[input_index]];
    const graph::InputPreprocess* pre = g.preprocess.empty() ? nullptr : &g.preprocess[input_index];
    cpu::HostTensor raw;
    if (has_extension(file, kImageExtensions)) {
        RKNN_ASSIGN_OR_RETURN(raw, read_image(file, input.shape));
        if (pre == nullptr || pre->empty()) {
            // No pre-processing: the image's pixel values feed the NCHW input as they are.
            graph::InputPreprocess identity;
            identity.user_layout = graph::Layout::kNHWC;
            return layout::apply_preprocess(raw, identity, input.shape);
        }
    } else if (has_extension(file, {".npy"})) {
        RKNN_ASSIGN_OR_RETURN(raw, read_npy(file));
    } else {
        return Status(StatusCode::kInvalidArgument, file + ": not an image or .npy file");
    }
    if (pre != nullptr && !pre->empty()) return layout::apply_preprocess(raw, *pre, input.shape);
    if (raw.shape() != input.shape) {
        return Status(StatusCode::kInvalidArgument, file + ": shape " + graph::shape_to_string(raw.shape()) +
                                                        " does not match input " + input.name + " " +
                                                        graph::shape_to_string(input.shape));
    }
    return graph::is_float(input.dtype) ? cpu::to_float32(raw) : raw;
}

StatusOr<std::vector<cpu::HostTensor>> load_sample(const std::vector<std::string>& files, const graph::Graph& g) {
    std::vector<cpu::HostTensor> inputs;
    for (size_t i = 0; i < files.size(); ++i) {
        RKNN_ASSIGN_OR_RETURN(cpu::HostTensor t, load_input(files[i], g, i));
        inputs.push_back(std::move(t));
    }
    return inputs;
}

}  // namespace rknn::convert
