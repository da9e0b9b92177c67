// ONNX node conformance: every case of the ONNX node test suite whose
// operators are all in OpenRKNN's supported list is converted (float32), saved
// to a model file, loaded back, run on the CPU reference, and compared with
// the suite's expected outputs.
//
// usage: onnx_conformance SUITE_DIR EXPECTED_FAILURES REPORT_FILE [MIN_PASS_RATE]
// Prints every failure with its reason and the pass count; writes the failures
// to REPORT_FILE. Fails when the pass rate drops below MIN_PASS_RATE (default
// 0.95) or a case fails that EXPECTED_FAILURES does not list.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "converter.h"
#include "cpu/graph_executor.h"
#include "model/model_file.h"
#include "node_cases.h"

namespace {

namespace fs = std::filesystem;
using rknn::Status;
using rknn::StatusCode;
using rknn::StatusOr;
using rknn::cpu::HostTensor;

constexpr double kRelTolerance = 1e-3;
constexpr double kAbsTolerance = 1e-5;

Status run_case(const fs::path& dir) {
    rknn::convert::ConvertOptions options;
    options.onnx_path = (dir / "model.onnx").string();
    options.dtype = rknn::convert::TargetDType::kFloat32;
    RKNN_ASSIGN_OR_RETURN(rknn::convert::ConvertResult converted, rknn::convert::convert_onnx(options));
    // Through the file format and back, as the runtime would load it.
    RKNN_ASSIGN_OR_RETURN(const std::vector<uint8_t> bytes, rknn::model::serialize_model(converted.graph));
    RKNN_ASSIGN_OR_RETURN(const rknn::graph::Graph graph,
                          rknn::model::load_model_from_memory(bytes.data(), bytes.size(), rknn::model::BufferOwnership::kCopy));
    RKNN_ASSIGN_OR_RETURN(auto exec, rknn::cpu::GraphExecutor::create(graph));
    for (const fs::path& data_set : rknn::testing::data_sets(dir)) {
        RKNN_ASSIGN_OR_RETURN(std::vector<HostTensor> inputs, rknn::testing::read_numbered(data_set, "input_"));
        for (size_t i = 0; i < inputs.size() && i < graph.inputs.size(); ++i)
            inputs[i] = rknn::testing::as_bfloat16_if_declared(inputs[i], graph.tensors[graph.inputs[i]].dtype);
        std::vector<HostTensor> outputs;
        RKNN_RETURN_IF_ERROR(exec->run(inputs, &outputs));
        RKNN_ASSIGN_OR_RETURN(std::vector<HostTensor> expected, rknn::testing::read_numbered(data_set, "output_"));
        if (expected.size() != outputs.size()) {
            return Status(StatusCode::kInternal, std::to_string(outputs.size()) + " outputs, expected " +
                                                     std::to_string(expected.size()));
        }
        for (size_t k = 0; k < outputs.size(); ++k) {
            const HostTensor e = rknn::testing::as_bfloat16_if_declared(expected[k], outputs[k].dtype());
            RKNN_RETURN_IF_ERROR(rknn::testing::compare_outputs(e, outputs[k], k, kRelTolerance, kAbsTolerance));
        }
    }
    return Status::ok();
}

std::string one_line(std::string text) {
    std::replace(text.begin(), text.end(), '\n', ' ');
    return text;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: %s SUITE_DIR EXPECTED_FAILURES REPORT_FILE [MIN_PASS_RATE]\n", argv[0]);
        return 2;
    }
    const fs::path suite = argv[1];
    if (!fs::is_directory(suite)) {
        std::printf("SKIP: %s not found (install libonnx-testdata)\n", suite.c_str());
        return 77;
    }
    const std::set<std::string> expected_failures = rknn::testing::read_expected_failures(argv[2]);
    const double min_rate = argc > 4 ? std::atof(argv[4]) : 0.95;
    const std::vector<fs::path> cases = rknn::testing::cases_in_scope(suite);
    int passed = 0;
    int unexpected = 0;
    std::ofstream report(argv[3]);
    report << "# ONNX node conformance failures (case: reason), written by onnx_conformance\n";
    for (const fs::path& dir : cases) {
        const std::string name = dir.filename().string();
        Status status = run_case(dir);
        if (status.is_ok()) {
            ++passed;
            if (expected_failures.count(name)) std::printf("NOTE %s now passes; drop it from the expected failures\n", name.c_str());
            continue;
        }
        const std::string reason = one_line(status.message());
        const bool known = expected_failures.count(name) > 0;
        unexpected += known ? 0 : 1;
        std::printf("%s %s: %s\n", known ? "FAIL (expected)" : "FAIL", name.c_str(), reason.c_str());
        report << name << ": " << reason << "\n";
    }
    const double rate = cases.empty() ? 0.0 : static_cast<double>(passed) / static_cast<double>(cases.size());
    std::printf("ONNX conformance: %d passed / %zu in scope (%.1f%%), %zu failed, %d unexpected\n", passed, cases.size(),
                100.0 * rate, cases.size() - passed, unexpected);
    return rate >= min_rate && unexpected == 0 ? 0 : 1;
}
