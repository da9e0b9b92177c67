// Fork-join over a range for the host's heavy loops (the emulated NPU's
// convolution and DPU stages), on a small process-wide pool of helper
// threads: the range is cut into a few chunks per thread, and the caller and
// the helpers take chunks until none is left.
//
// Results must not depend on the split: every chunk writes its own part of
// the output. A call made while another caller holds the pool (two emulated
// NPU cores at once, say) runs on its own thread alone, so callers never
// wait on each other; so does a nested call (from inside a chunk) and one in
// a child forked after the pool started. An exception from a chunk reaches
// the caller once every thread has finished. RKNN_HOST_THREADS caps the
// threads (default: the host's cores, at most 4; 1 turns the pool off).
#pragma once

#include <cstdint>
#include <functional>

namespace rknn {

// Threads a parallel_for may use (>= 1).
int host_threads();

// Calls body(begin, end) on disjoint ranges that cover [0, n); ranges are
// whole multiples of `grain` (except the last). Returns when all are done.
void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t begin, int64_t end)>& body);

}  // namespace rknn
