// RKNN_LOG_LEVEL=5: every layer's output written as a NumPy .npy file after
// each run, as the vendor runtime does, into /userdata/dumps (or
// RKNN_DUMP_DIR). Names: "<run>_<position>_<OpType>_<tensor>.npy", with
// InputOperator for the (normalised, quantised) inputs.
#pragma once

#include <string>

#include "cpu/host_tensor.h"

namespace rknn::runtime {

class LayerDumper {
public:
    // Reads RKNN_DUMP_DIR; creates the folder. inactive() when that fails.
    LayerDumper();
    bool active() const { return !dir_.empty(); }
    void dump(uint64_t run, int position, const std::string& op_type, const std::string& tensor,
              const cpu::HostTensor& value) const;

private:
    std::string dir_;
};

}  // namespace rknn::runtime
