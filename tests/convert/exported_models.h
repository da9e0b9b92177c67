// The models tests/models/export_models.py writes (mobilenet_v2, resnet18, the
// YOLOv5s-like detector, their inputs and PyTorch's outputs), as the tools
// that consume them find and convert them.
#pragma once

#include <filesystem>
#include <string>

#include "converter.h"

namespace rknn::testing {

// Parses "PROGRAM MODELS_DIR". Returns 0 with `dir` set, or the exit code the
// program should return: 2 for bad usage, 77 (skip) when nothing was exported.
int exported_models_dir(int argc, char** argv, std::filesystem::path* dir);

// Converter options for one exported model: the calibration images and the
// ImageNet mean/std the exporter's pre-processing uses.
convert::ConvertOptions exported_model_options(const std::filesystem::path& dir, const std::string& name,
                                               convert::TargetDType dtype);

}  // namespace rknn::testing
