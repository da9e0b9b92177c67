// The ONNX node test suite as the conformance tools read it: which cases
// are in scope (every operator in OpenRKNN's supported list), their input
// and expected output tensors, and the element-wise comparison.
#pragma once

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "cpu/host_tensor.h"

namespace rknn::testing {

// Cases of `suite` whose model uses only supported operators, sorted.
std::vector<std::filesystem::path> cases_in_scope(const std::filesystem::path& suite);

// Case names listed in an expected-failures file ("name: reason" lines, # comments).
std::set<std::string> read_expected_failures(const std::string& path);

// The test_data_set_* folders of a case.
std::vector<std::filesystem::path> data_sets(const std::filesystem::path& case_dir);
// input_0.pb, input_1.pb, ... (or output_*) of a data set, as host tensors.
StatusOr<std::vector<cpu::HostTensor>> read_numbered(const std::filesystem::path& data_set, const std::string& prefix);

// NumPy has no bfloat16, so the suite stores bfloat16 data as uint16 bits.
cpu::HostTensor as_bfloat16_if_declared(const cpu::HostTensor& t, graph::DType declared);

// Equal shapes and dtypes, and every element within abs + rel * |expected|
// (integers exactly; NaN matches NaN).
Status compare_outputs(const cpu::HostTensor& expected, const cpu::HostTensor& actual, size_t index, double rel,
                       double abs);

}  // namespace rknn::testing
