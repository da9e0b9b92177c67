// rknn_benchmark: the vendor's benchmark tool, same command line, input
// filling, warm-up, timing and printed lines (spec/clients.md section 1),
// written against include/ only.
//
// usage: rknn_benchmark model_path [input_paths] [loop_count] [core_mask]
//   input_paths  '#'-separated, one per input: .npy files or images
//   loop_count   timed runs (default 10)
//   core_mask    0 auto, 1/2/4 one core, 3 cores 0+1, 7 all (default 1); a
//                multi-batch model runs one item per core of the mask at a time
#include <sys/time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../common/image_file.h"
#include "../common/npy_file.h"
#include "rknn_api.h"
#include "rknn_openrknn_ext.h"

namespace {

int64_t now_us() {
    timeval tv;
    gettimeofday(&tv, nullptr);
    return static_cast<int64_t>(tv.tv_sec) * 1000000 + tv.tv_usec;
}

void print_attr(const rknn_tensor_attr& a) {
    std::string dims;
    for (uint32_t i = 0; i < a.n_dims; ++i) dims += (i ? ", " : "") + std::to_string(a.dims[i]);
    std::printf("  index=%d, name=%s, n_dims=%d, dims=[%s], n_elems=%d, size=%d, w_stride = %d, size_with_stride=%d, "
                "fmt=%s, type=%s, qnt_type=%s, zp=%d, scale=%f\n",
                a.index, a.name, a.n_dims, dims.c_str(), a.n_elems, a.size, a.w_stride, a.size_with_stride,
                get_format_string(a.fmt), get_type_string(a.type), get_qnt_type_string(a.qnt_type), a.zp, a.scale);
}

std::vector<std::string> split(const std::string& text, char separator) {
    std::vector<std::string> parts;
    if (text.empty()) return parts;  // "" means no input files, as no argument does
    size_t start = 0;
    while (start <= text.size()) {
        const size_t end = text.find(separator, start);
        parts.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return parts;
}

rknn_tensor_type type_of_npy(const std::string& dtype) {
    if (dtype == "int8") return RKNN_TENSOR_INT8;
    if (dtype == "float16") return RKNN_TENSOR_FLOAT16;
    if (dtype == "float32") return RKNN_TENSOR_FLOAT32;
    if (dtype == "bool") return RKNN_TENSOR_BOOL;
    if (dtype == "int64") return RKNN_TENSOR_INT64;
    return RKNN_TENSOR_UINT8;
}

// The H, W, C of a 4-D attribute in its layout (false for other layouts).
bool hwc_of(const rknn_tensor_attr& a, int* h, int* w, int* c) {
    if (a.fmt == RKNN_TENSOR_NHWC) {
        *h = static_cast<int>(a.dims[1]), *w = static_cast<int>(a.dims[2]), *c = static_cast<int>(a.dims[3]);
        return true;
    }
    if (a.fmt == RKNN_TENSOR_NCHW) {
        *h = static_cast<int>(a.dims[2]), *w = static_cast<int>(a.dims[3]), *c = static_cast<int>(a.dims[1]);
        return true;
    }
    std::printf("meet unsupported layout\n");
    return false;
}

// Items one run takes: a multi-batch model's 4-D inputs lead with the batch.
uint32_t batch_of(const rknn_tensor_attr& attr) { return attr.n_dims == 4 && attr.dims[0] > 1 ? attr.dims[0] : 1; }

// One item's data repeated for every item of a multi-batch model.
std::vector<uint8_t> repeat_items(const std::vector<uint8_t>& item, uint32_t batch) {
    std::vector<uint8_t> all;
    all.reserve(item.size() * batch);
    for (uint32_t i = 0; i < batch; ++i) all.insert(all.end(), item.begin(), item.end());
    return all;
}

// Fills one input from `path` as the vendor tool does; the bytes go to `storage`.
bool load_input(const std::string& path, const rknn_tensor_attr& attr, std::vector<uint8_t>* storage,
                rknn_input* input) {
    std::string error;
    if (path.find(".npy") != std::string::npos) {
        examples::NpyArray npy;
        if (!examples::read_npy(path, &npy, &error)) {
            std::printf("%s\n", error.c_str());
            return false;
        }
        std::printf("Loading %s / npy data type:%s\n", path.c_str(), npy.dtype.c_str());
        if (npy.shape.size() == 3) npy.shape.insert(npy.shape.begin(), 1);
        if (npy.shape.size() == 4 && npy.shape[0] == 1) npy.data = repeat_items(npy.data, batch_of(attr));
        int h = 0, w = 0, c = 0;
        if (attr.fmt != RKNN_TENSOR_UNDEFINED) {
            if (!hwc_of(attr, &h, &w, &c)) return false;
            if (npy.shape.size() != 4 || npy.shape[1] != h || npy.shape[2] != w || npy.shape[3] != c) {
                std::printf("input shape of %s does not match the model's (%d, %d, %d)\n", path.c_str(), h, w, c);
                return false;
            }
        }
        *storage = std::move(npy.data);
        input->type = type_of_npy(npy.dtype);
    } else {
        int h = 0, w = 0, c = 0;
        if (!hwc_of(attr, &h, &w, &c)) return false;
        examples::Image image;
        if (!examples::load_image(path, c, w, h, &image, &error)) {
            std::printf("%s\n", error.c_str());
            return false;
        }
        *storage = repeat_items(image.pixels, batch_of(attr));
        input->type = RKNN_TENSOR_UINT8;
    }
    input->fmt = RKNN_TENSOR_NHWC;
    input->buf = storage->data();
    input->size = static_cast<uint32_t>(storage->size());
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::printf("Usage:%s model_path [input_path] [loop_count] [core_mask]\n", argv[0]);
        return -1;
    }
    const char* model_path = argv[1];
    const std::vector<std::string> input_paths = argc > 2 ? split(argv[2], '#') : std::vector<std::string>();
    const int loop_count = argc > 3 ? std::atoi(argv[3]) : 10;
    const uint32_t core_mask = argc > 4 ? static_cast<uint32_t>(std::strtoul(argv[4], nullptr, 10)) : 1;

    rknn_context ctx = 0;
    int ret = rknn_init(&ctx, const_cast<char*>(model_path), 0, 0, nullptr);
    if (ret < 0) {
        std::printf("rknn_init fail! ret=%d\n", ret);
        return -1;
    }
    rknn_sdk_version version;
    if (rknn_query(ctx, RKNN_QUERY_SDK_VERSION, &version, sizeof(version)) != RKNN_SUCC) return -1;
    std::printf("rknn_api/rknnrt version: %s, driver version: %s\n", version.api_version, version.drv_version);
    rknn_mem_size mem;
    if (rknn_query(ctx, RKNN_QUERY_MEM_SIZE, &mem, sizeof(mem)) != RKNN_SUCC) return -1;
    std::printf("total weight size: %d, total internal size: %d\n", mem.total_weight_size, mem.total_internal_size);
    std::printf("total dma used size: %zu\n", static_cast<size_t>(mem.total_dma_allocated_size));
    rknn_input_output_num io;
    if (rknn_query(ctx, RKNN_QUERY_IN_OUT_NUM, &io, sizeof(io)) != RKNN_SUCC) return -1;
    std::printf("model input num: %d, output num: %d\n", io.n_input, io.n_output);

    std::vector<rknn_tensor_attr> input_attrs(io.n_input), output_attrs(io.n_output);
    std::printf("input tensors:\n");
    for (uint32_t i = 0; i < io.n_input; ++i) {
        std::memset(&input_attrs[i], 0, sizeof(rknn_tensor_attr));
        input_attrs[i].index = i;
        if (rknn_query(ctx, RKNN_QUERY_INPUT_ATTR, &input_attrs[i], sizeof(rknn_tensor_attr)) != RKNN_SUCC) return -1;
        print_attr(input_attrs[i]);
    }
    std::printf("output tensors:\n");
    for (uint32_t i = 0; i < io.n_output; ++i) {
        std::memset(&output_attrs[i], 0, sizeof(rknn_tensor_attr));
        output_attrs[i].index = i;
        if (rknn_query(ctx, RKNN_QUERY_OUTPUT_ATTR, &output_attrs[i], sizeof(rknn_tensor_attr)) != RKNN_SUCC) return -1;
        print_attr(output_attrs[i]);
    }
    rknn_custom_string custom;
    if (rknn_query(ctx, RKNN_QUERY_CUSTOM_STRING, &custom, sizeof(custom)) != RKNN_SUCC) return -1;
    std::printf("custom string: %s\n", custom.string);
    // Beyond the vendor's tool (which fails on them): a dynamic-shape model
    // runs at its largest shapes, which INPUT_ATTR reports.
    rknn_openrknn_shape_range shapes{};
    if (rknn_query(ctx, RKNN_QUERY_OPENRKNN_INPUT_SHAPE_RANGE, &shapes, sizeof(shapes)) == RKNN_SUCC &&
        shapes.shape_number > 0) {
        std::printf("dynamic-shape model (%u shape sets%s): running its largest shapes\n", shapes.shape_number,
                    shapes.n_dims > 0 ? " and a range" : "");
        // (INPUT_ATTR gives 4-D shapes as NHWC, as rknn_set_input_shapes takes them.)
        if (rknn_set_input_shapes(ctx, io.n_input, input_attrs.data()) != RKNN_SUCC) {
            std::printf("rknn_set_input_shapes fail!\n");
            rknn_destroy(ctx);
            return -1;
        }
    }

    std::vector<rknn_input> inputs(io.n_input);
    std::vector<std::vector<uint8_t>> storage(io.n_input);
    int status = 0;
    if (!input_paths.empty() && input_paths.size() != io.n_input) {
        std::printf("input missing!, need input number: %d, only get %zu inputs\n", io.n_input, input_paths.size());
        rknn_destroy(ctx);
        return -1;
    }
    for (uint32_t i = 0; i < io.n_input; ++i) {
        std::memset(&inputs[i], 0, sizeof(rknn_input));
        inputs[i].index = i;
        inputs[i].pass_through = 0;
        if (input_paths.empty()) {
            storage[i].assign(input_attrs[i].n_elems, 0);
            inputs[i].type = RKNN_TENSOR_UINT8;
            inputs[i].fmt = RKNN_TENSOR_NHWC;
            inputs[i].buf = storage[i].data();
            inputs[i].size = input_attrs[i].n_elems;
        } else if (!load_input(input_paths[i], input_attrs[i], &storage[i], &inputs[i])) {
            rknn_destroy(ctx);
            return -1;
        }
    }
    ret = rknn_inputs_set(ctx, io.n_input, inputs.data());
    if (ret < 0) {
        std::printf("rknn_input_set fail! ret=%d\n", ret);
        rknn_destroy(ctx);
        return -1;
    }
    rknn_core_mask mask;
    std::memcpy(&mask, &core_mask, sizeof(mask));
    rknn_set_core_mask(ctx, mask);

    // One rknn_run, timed and printed as the vendor tool does; false on failure.
    double total_ms = 0;
    const auto timed_run = [&](int i) {
        const int64_t start = now_us();
        ret = rknn_run(ctx, nullptr);
        const int64_t elapse = now_us() - start;
        if (ret < 0) {
            std::printf("rknn run error %d\n", ret);
            return false;
        }
        total_ms += elapse / 1000.f;
        std::printf("%4d: Elapse Time = %.2fms, FPS = %.2f\n", i, elapse / 1000.f, 1000.f * 1000.f / elapse);
        return true;
    };
    std::printf("Warmup ...\n");
    for (int i = 0; i < 5; ++i) {
        if (!timed_run(i)) {
            rknn_destroy(ctx);
            return -1;
        }
    }
    total_ms = 0;
    std::printf("Begin perf ...\n");
    for (int i = 0; i < loop_count; ++i) {
        if (!timed_run(i)) {
            rknn_destroy(ctx);
            return -1;
        }
    }
    std::printf("\nAvg Time %.2fms, Avg FPS = %.3f\n\n", total_ms / loop_count, loop_count * 1000.f / total_ms);
    if (io.n_input > 0 && batch_of(input_attrs[0]) > 1)
        std::printf("multi-batch model: %u items per run, %.3f items/s\n\n", batch_of(input_attrs[0]),
                    batch_of(input_attrs[0]) * loop_count * 1000.f / total_ms);

    std::vector<rknn_output> outputs(io.n_output);
    for (uint32_t i = 0; i < io.n_output; ++i) {
        std::memset(&outputs[i], 0, sizeof(rknn_output));
        outputs[i].want_float = 1;
        outputs[i].index = i;
    }
    ret = rknn_outputs_get(ctx, io.n_output, outputs.data(), nullptr);
    if (ret < 0) {
        std::printf("rknn_outputs_get fail! ret=%d\n", ret);
        rknn_destroy(ctx);
        return status;
    }
    for (uint32_t i = 0; i < io.n_output; ++i) {
        const std::string name = "rt_output" + std::to_string(i) + ".npy";
        std::printf("Save output to %s\n", name.c_str());
        std::vector<int64_t> shape(output_attrs[i].dims, output_attrs[i].dims + output_attrs[i].n_dims);
        examples::write_npy_float32(name, static_cast<const float*>(outputs[i].buf), shape);
    }
    for (uint32_t i = 0; i < io.n_output; ++i) {
        const float* values = static_cast<const float*>(outputs[i].buf);
        const uint32_t count = outputs[i].size / 4;
        const uint32_t top = std::min<uint32_t>(5, count);
        std::vector<uint32_t> order(count);
        for (uint32_t k = 0; k < count; ++k) order[k] = k;
        std::partial_sort(order.begin(), order.begin() + top, order.end(),
                          [values](uint32_t a, uint32_t b) { return values[a] > values[b]; });
        std::printf("---- Top%d ----\n", top);
        for (uint32_t k = 0; k < top; ++k) std::printf("%8.6f - %d\n", values[order[k]], order[k]);
    }
    rknn_outputs_release(ctx, io.n_output, outputs.data());
    rknn_destroy(ctx);
    return status;
}
