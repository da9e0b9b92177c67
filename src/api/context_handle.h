// The runtime object behind an rknn_context handle, for in-process tools
// (benchmarks, tests) that want more than the C API reports.
#pragma once

#include <memory>

#include "base/status.h"
#include "rknn_api.h"

namespace rknn::runtime {
class Context;
}

namespace rknn::api {

// kContextInvalid for an unknown, destroyed or non-context handle. Waits
// first for the handle's frame in flight (a non-blocking or pipelined run,
// frame_runner.h), so that what the caller changes is not what it runs.
StatusOr<std::shared_ptr<runtime::Context>> runtime_context(rknn_context handle);

}  // namespace rknn::api
