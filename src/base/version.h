// Version identity of the library.
//
// Tools find the runtime version with
//   strings librknnrt.so | grep "librknnrt version" | awk -F 'version: ' '{print $2}'
// so the library embeds exactly one string of the form
//   librknnrt version: X.Y.Z (<git hash>@<build time>)
// where X.Y.Z is the vendor API level we implement (clients gate features on it),
// not OpenRKNN's own release number.
#pragma once

namespace rknn::version {

// "librknnrt version: 2.3.2 (0123abcde@2026-11-21T10:00:00)"
const char* marker();
// "2.3.2 (0123abcde@2026-11-21T10:00:00)": what RKNN_QUERY_SDK_VERSION reports as api_version.
const char* api_version();
// OpenRKNN's own release number, e.g. "0.1.0".
const char* openrknn_version();

}  // namespace rknn::version
