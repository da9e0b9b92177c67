// OCR on the NPU with PP-OCRv4 (what rknn_model_zoo's PPOCR-System demo
// does, written against include/ only): the detector finds text regions,
// DB post-processing turns its probability map into boxes, each box is cut
// out and resized to the recogniser's height, and CTC decoding with the
// PP-OCR character list gives the text.
//
// usage: rknn_ocr DET.rknn REC.rknn KEYS.txt IMAGE [ANNOTATED.png] [--expect FILE] [--dump DIR]
//   both models take NHWC uint8 pixels (converted with --mean/--std); the
//   recogniser may have several input widths (shape sets: each line runs at
//   the smallest that holds it) or a range of them (rknn_convert
//   --dynamic-range: each line runs at its own width, rounded up to the
//   range's step); the detector has one input size, or a range (the page
//   runs at its own size, rounded up to the step);
//   --expect FILE  exit 1 unless the lines read equal FILE's lines, in order
//   --dump DIR     write each recogniser input (crop_K.npy, float32 pixels
//                  [1,H,W,3]) and output (rec_K.npy) for comparison with a
//                  reference runtime
#include <algorithm>
#include <utility>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "../common/image_file.h"
#include "../common/npy_file.h"
#include "ctc_decode.h"
#include "db_postprocess.h"
#include "rknn_api.h"
#include "rknn_openrknn_ext.h"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// One model with one NHWC image input and one output. A dynamic-shape model
// (input-shape sets, maybe a range) runs at the shape fit_to() picks.
class Model {
public:
    ~Model() {
        if (ctx_ != 0) rknn_destroy(ctx_);
    }
    bool load(const char* path, std::string* error) {
        int ret = rknn_init(&ctx_, const_cast<char*>(path), 0, 0, nullptr);
        if (ret != RKNN_SUCC) {
            ctx_ = 0;
            *error = std::string("rknn_init ") + path + " failed: " + std::to_string(ret);
            return false;
        }
        input_.index = 0;
        output_.index = 0;
        if (rknn_query(ctx_, RKNN_QUERY_INPUT_ATTR, &input_, sizeof(input_)) != RKNN_SUCC ||
            rknn_query(ctx_, RKNN_QUERY_OUTPUT_ATTR, &output_, sizeof(output_)) != RKNN_SUCC ||
            input_.fmt != RKNN_TENSOR_NHWC || input_.n_dims != 4 || input_.dims[3] != 3 || input_.dims[1] == 0 ||
            input_.dims[2] == 0) {
            *error = std::string(path) + ": expected one NHWC 3-channel image input (convert with --mean/--std)";
            return false;
        }
        max_height_ = height();
        max_width_ = width();
        // OpenRKNN's query answers every model: shape_number tells a dynamic
        // one, and n_dims 4 a range it takes any shape in.
        range_.index = 0;
        if (rknn_query(ctx_, RKNN_QUERY_OPENRKNN_INPUT_SHAPE_RANGE, &range_, sizeof(range_)) != RKNN_SUCC)
            range_ = rknn_openrknn_shape_range{};
        if (range_.n_dims != 4) range_.n_dims = 0;
        // A dynamic model's shape sets (the vendor's query fails, and logs
        // it, on a static model: ask only a dynamic one).
        rknn_input_range range{};
        range.index = 0;
        if (range_.shape_number > 0 &&
            rknn_query(ctx_, RKNN_QUERY_INPUT_DYNAMIC_RANGE, &range, sizeof(range)) == RKNN_SUCC)
            for (uint32_t k = 0; k < range.shape_number && k < RKNN_MAX_DYNAMIC_SHAPE_NUM; ++k)
                sets_.push_back({static_cast<int>(range.dyn_range[k][1]), static_cast<int>(range.dyn_range[k][2])});
        return sets_.empty() || fit_to(max_width_, max_height_, error);
    }
    // The current input size (a dynamic model: the set fit_to chose).
    int height() const { return static_cast<int>(input_.dims[1]); }
    int width() const { return static_cast<int>(input_.dims[2]); }
    int max_width() const { return max_width_; }
    int max_height() const { return max_height_; }
    size_t shape_sets() const { return sets_.size(); }
    bool any_shape() const { return range_.n_dims == 4; }
    const rknn_tensor_attr& output_attr() const { return output_; }

    // A dynamic model: width x height rounded up to the range's steps where
    // that is inside the range; else the smallest shape set that holds it
    // (else the largest); made current. A static model keeps its one size.
    bool fit_to(int width, int height, std::string* error) {
        if (sets_.empty()) return true;
        const int ranged_h = round_up_in_range(height, 1), ranged_w = round_up_in_range(width, 2);
        if (ranged_h > 0 && ranged_w > 0) return choose(ranged_h, ranged_w, error);
        size_t best = sets_.size();
        for (size_t k = 0; k < sets_.size(); ++k) {
            const auto [h, w] = sets_[k];
            const bool holds = w >= width && h >= height;
            if (holds && (best == sets_.size() || static_cast<int64_t>(w) * h <
                                                      static_cast<int64_t>(sets_[best].second) * sets_[best].first))
                best = k;
        }
        if (best == sets_.size()) best = std::max_element(sets_.begin(), sets_.end()) - sets_.begin();
        return choose(sets_[best].first, sets_[best].second, error);
    }

    // Runs on height() x width() x 3 pixels; `out` receives the float output.
    bool run(const std::vector<uint8_t>& pixels, std::vector<float>* out, std::string* error) {
        rknn_input in{};
        in.index = 0;
        in.type = RKNN_TENSOR_UINT8;
        in.fmt = RKNN_TENSOR_NHWC;
        in.buf = const_cast<uint8_t*>(pixels.data());
        in.size = static_cast<uint32_t>(pixels.size());
        int ret = rknn_inputs_set(ctx_, 1, &in);
        if (ret == RKNN_SUCC) ret = rknn_run(ctx_, nullptr);
        rknn_output o{};
        o.want_float = 1;
        if (ret == RKNN_SUCC) ret = rknn_outputs_get(ctx_, 1, &o, nullptr);
        if (ret != RKNN_SUCC) {
            *error = "inference failed: " + std::to_string(ret);
            return false;
        }
        const float* values = static_cast<const float*>(o.buf);
        out->assign(values, values + o.size / sizeof(float));
        rknn_outputs_release(ctx_, 1, &o);
        return true;
    }

private:
    // `size` rounded up to the range's step in NHWC dim `dim`; 0 when that is
    // outside the range or there is none.
    int round_up_in_range(int size, int dim) const {
        if (!any_shape()) return 0;
        const int lo = static_cast<int>(range_.min[dim]), hi = static_cast<int>(range_.max[dim]);
        const int step = std::max(1, static_cast<int>(range_.step[dim]));
        const int rounded = size <= lo ? lo : lo + (size - lo + step - 1) / step * step;
        return rounded <= hi ? rounded : 0;
    }

    // Makes height x width the current input shape.
    bool choose(int height, int width, std::string* error) {
        rknn_tensor_attr attr = input_;
        attr.dims[1] = static_cast<uint32_t>(height);
        attr.dims[2] = static_cast<uint32_t>(width);
        int ret = rknn_set_input_shapes(ctx_, 1, &attr);
        if (ret == RKNN_SUCC) ret = rknn_query(ctx_, RKNN_QUERY_CURRENT_INPUT_ATTR, &input_, sizeof(input_));
        if (ret == RKNN_SUCC) ret = rknn_query(ctx_, RKNN_QUERY_CURRENT_OUTPUT_ATTR, &output_, sizeof(output_));
        if (ret != RKNN_SUCC) {
            *error = "choosing the input shape " + std::to_string(height) + "x" + std::to_string(width) +
                     " failed: " + std::to_string(ret);
            return false;
        }
        return true;
    }

    rknn_context ctx_ = 0;
    rknn_tensor_attr input_{};
    rknn_tensor_attr output_{};
    int max_height_ = 0, max_width_ = 0;
    std::vector<std::pair<int, int>> sets_;  // (height, width) per shape set
    rknn_openrknn_shape_range range_{};      // n_dims 4: any shape in it
};

// `image` scaled to fit width x height, top-left, the rest filled with `fill`.
bool letterbox(const examples::Image& image, int width, int height, uint8_t fill, examples::Image* out, float* scale) {
    *scale = std::min(static_cast<float>(width) / image.width, static_cast<float>(height) / image.height);
    const int w = std::max(1, static_cast<int>(std::lround(image.width * *scale)));
    const int h = std::max(1, static_cast<int>(std::lround(image.height * *scale)));
    examples::Image resized;
    if (!examples::resize_region(image, 0, 0, image.width, image.height, std::min(w, width), std::min(h, height), &resized))
        return false;
    out->width = width;
    out->height = height;
    out->channels = 3;
    out->pixels.assign(static_cast<size_t>(width) * height * 3, fill);
    for (int y = 0; y < resized.height; ++y)
        std::copy_n(&resized.pixels[static_cast<size_t>(y) * resized.width * 3], resized.width * 3,
                    &out->pixels[static_cast<size_t>(y) * width * 3]);
    return true;
}

bool write_pixels_npy(const std::string& path, const examples::Image& image) {
    std::vector<float> values(image.pixels.begin(), image.pixels.end());
    return examples::write_npy_float32(path, values.data(), {1, image.height, image.width, image.channels});
}

int usage(const char* argv0) {
    std::fprintf(stderr, "usage: %s DET.rknn REC.rknn KEYS.txt IMAGE [ANNOTATED.png] [--expect FILE] [--dump DIR]\n",
                 argv0);
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> positional;
    std::string expect_path, dump_dir;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if ((arg == "--expect" || arg == "--dump") && i + 1 < argc) {
            (arg == "--expect" ? expect_path : dump_dir) = argv[++i];
        } else if (!arg.empty() && arg[0] == '-') {
            return usage(argv[0]);
        } else {
            positional.push_back(arg);
        }
    }
    if (positional.size() < 4 || positional.size() > 5) return usage(argv[0]);
    std::string error;
    std::vector<std::string> charset;
    examples::Image image;
    Model det, rec;
    if (!ocr::load_charset(positional[2], &charset, &error) || !det.load(positional[0].c_str(), &error) ||
        !rec.load(positional[1].c_str(), &error) || !examples::load_image(positional[3], 3, 0, 0, &image, &error)) {
        std::fprintf(stderr, "rknn_ocr: %s\n", error.c_str());
        return 1;
    }
    std::printf("image %s: %dx%d; detector input %dx%d%s, recogniser input %dx%d%s, %zu characters\n",
                positional[3].c_str(), image.width, image.height, det.width(), det.height(),
                det.any_shape() ? " (any size in range: the page's own)" : "", rec.height(), rec.max_width(),
                rec.any_shape()        ? " (any width in range)"
                : rec.shape_sets() > 0 ? (" (" + std::to_string(rec.shape_sets()) + " widths)").c_str()
                                       : "",
                charset.size());

    // Detection: the page fitted into the detector's input, padded with the
    // mean colour. A detector that takes any size in a range runs at the
    // page's own (rounded up to the range's step; scaled down to fit the
    // largest).
    auto start = Clock::now();
    if (det.any_shape()) {
        const double fit = std::min({1.0, static_cast<double>(det.max_width()) / image.width,
                                     static_cast<double>(det.max_height()) / image.height});
        // (Clamped: w * (max / w) may land one ulp above max.)
        const int w = std::min(det.max_width(), static_cast<int>(std::ceil(image.width * fit)));
        const int h = std::min(det.max_height(), static_cast<int>(std::ceil(image.height * fit)));
        if (!det.fit_to(w, h, &error)) {
            std::fprintf(stderr, "rknn_ocr: detector: %s\n", error.c_str());
            return 1;
        }
    }
    examples::Image det_input;
    float scale = 1.0f;
    if (!letterbox(image, det.width(), det.height(), 118, &det_input, &scale)) {
        std::fprintf(stderr, "rknn_ocr: cannot resize the image\n");
        return 1;
    }
    const double det_pre_ms = ms_since(start);
    start = Clock::now();
    std::vector<float> prob;
    if (!det.run(det_input.pixels, &prob, &error)) {
        std::fprintf(stderr, "rknn_ocr: detector: %s\n", error.c_str());
        return 1;
    }
    const double det_ms = ms_since(start);
    if (prob.size() != static_cast<size_t>(det.width()) * det.height()) {
        std::fprintf(stderr, "rknn_ocr: the detector's output is not one %dx%d map\n", det.width(), det.height());
        return 1;
    }
    start = Clock::now();
    std::vector<ocr::TextBox> boxes = ocr::boxes_from_probability_map(prob.data(), det.width(), det.height(), {},
                                                                      1.0f / scale, image.width, image.height);
    ocr::sort_reading_order(&boxes);
    const double post_ms = ms_since(start);

    // Recognition: each box at the recogniser's height, its width by aspect
    // ratio (at most the input's), padded with grey (0 after normalisation)
    // to the input's width: a dynamic recogniser's own width for it (rounded
    // up to its range's step), or its smallest width that holds it.
    double crop_ms = 0.0, shape_ms = 0.0, rec_ms = 0.0, decode_ms = 0.0;
    std::vector<std::string> lines;
    examples::Image annotated = image;
    for (size_t k = 0; k < boxes.size(); ++k) {
        const ocr::TextBox& b = boxes[k];
        start = Clock::now();
        const int bw = b.x1 - b.x0 + 1, bh = b.y1 - b.y0 + 1;
        const int w =
            std::clamp(static_cast<int>(std::ceil(static_cast<double>(rec.height()) * bw / bh)), 1, rec.max_width());
        const auto fit_start = Clock::now();
        if (!rec.fit_to(w, rec.height(), &error)) {
            std::fprintf(stderr, "rknn_ocr: recogniser: %s\n", error.c_str());
            return 1;
        }
        shape_ms += ms_since(fit_start);
        const rknn_tensor_attr& rec_out = rec.output_attr();
        if (rec_out.n_dims != 3 || w > rec.width()) {
            std::fprintf(stderr, "rknn_ocr: the recogniser's output is not [1, steps, classes]\n");
            return 1;
        }
        const int steps = static_cast<int>(rec_out.dims[1]), classes = static_cast<int>(rec_out.dims[2]);
        examples::Image crop, canvas;
        if (!examples::resize_region(image, b.x0, b.y0, bw, bh, w, rec.height(), &crop)) continue;
        canvas.width = rec.width();
        canvas.height = rec.height();
        canvas.channels = 3;
        canvas.pixels.assign(static_cast<size_t>(canvas.width) * canvas.height * 3, 128);
        for (int y = 0; y < crop.height; ++y)
            std::copy_n(&crop.pixels[static_cast<size_t>(y) * w * 3], w * 3,
                        &canvas.pixels[static_cast<size_t>(y) * canvas.width * 3]);
        crop_ms += ms_since(start);
        start = Clock::now();
        std::vector<float> probs;
        if (!rec.run(canvas.pixels, &probs, &error)) {
            std::fprintf(stderr, "rknn_ocr: recogniser: %s\n", error.c_str());
            return 1;
        }
        rec_ms += ms_since(start);
        start = Clock::now();
        ocr::Recognition r;
        if (probs.size() != static_cast<size_t>(steps) * classes ||
            !ocr::ctc_greedy_decode(probs.data(), steps, classes, charset, &r, &error)) {
            std::fprintf(stderr, "rknn_ocr: %s\n", error.empty() ? "unexpected recogniser output" : error.c_str());
            return 1;
        }
        decode_ms += ms_since(start);
        if (!dump_dir.empty() &&
            (!write_pixels_npy(dump_dir + "/crop_" + std::to_string(k) + ".npy", canvas) ||
             !examples::write_npy_float32(dump_dir + "/rec_" + std::to_string(k) + ".npy", probs.data(),
                                          {1, steps, classes}))) {
            std::fprintf(stderr, "rknn_ocr: cannot write into %s\n", dump_dir.c_str());
            return 1;
        }
        std::printf("line %zu: \"%s\"  box [%d,%d,%d,%d]  det %.3f  rec %.3f\n", k + 1, r.text.c_str(), b.x0, b.y0,
                    b.x1, b.y1, b.score, r.confidence);
        lines.push_back(r.text);
        const uint8_t colour[3] = {230, 40, 40};
        examples::draw_box(&annotated, b.x0, b.y0, b.x1, b.y1, colour, 2);
    }
    const size_t n = std::max<size_t>(1, boxes.size());
    std::printf("timing: detector pre-processing %.1f ms, rknn_run %.1f ms, DB post-processing %.1f ms; "
                "recogniser (%zu lines) crops %.1f ms (of which rknn_set_input_shapes %.1f ms), rknn_run %.1f ms "
                "(%.1f ms a line), CTC decoding %.2f ms\n",
                det_pre_ms, det_ms, post_ms, boxes.size(), crop_ms, shape_ms, rec_ms, rec_ms / n, decode_ms);
    if (positional.size() == 5) {
        if (!examples::write_png(positional[4], annotated)) {
            std::fprintf(stderr, "rknn_ocr: cannot write %s\n", positional[4].c_str());
            return 1;
        }
        std::printf("wrote %s\n", positional[4].c_str());
    }
    if (!expect_path.empty()) {
        std::ifstream in(expect_path);
        std::vector<std::string> expected;
        for (std::string line; std::getline(in, line);) {
            if (!line.empty()) expected.push_back(line);
        }
        if (!in.eof() || expected != lines) {
            std::fprintf(stderr, "rknn_ocr: the lines read differ from %s (%zu expected, %zu read)\n",
                         expect_path.c_str(), expected.size(), lines.size());
            return 1;
        }
        std::printf("all %zu lines equal %s\n", lines.size(), expect_path.c_str());
    }
    return 0;
}
