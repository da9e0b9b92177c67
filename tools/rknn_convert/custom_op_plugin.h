// rknn_convert --custom-op-plugin FILE: the user's custom op library, in the
// runtime's plugin convention (a librkcst_*.so exporting get_rknn_custom_op,
// runtime-spec 7.6), run on the host during conversion. Its op type is kept
// as a custom op, and calibration, bias correction and accuracy analysis
// run its compute as the runtime would (float32 NCHW tensors, the node's
// attributes through rknn_custom_op_get_op_attr), so that the layers after
// it are calibrated like any others. This is what the vendor's toolkit does
// with the Python class a user registers with reg_custom_op.
#pragma once

#include <string>

#include "base/status.h"

namespace rknn::convert {

// Opens the plugin and registers a host kernel for its op type (the library
// stays loaded for the process); returns the type.
StatusOr<std::string> load_custom_op_plugin(const std::string& path);

}  // namespace rknn::convert
