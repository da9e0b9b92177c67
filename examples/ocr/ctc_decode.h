// Greedy CTC decoding of a text recogniser's output, with PP-OCR's
// character list (ppocr_keys_v1.txt): class 0 is the CTC blank, class k the
// k-th line of the list, and the class after the list a space.
#pragma once

#include <string>
#include <vector>

namespace ocr {

struct Recognition {
    std::string text;
    float confidence = 0.0f;  // mean probability of the kept characters (0 for no text)
};

// The characters of a PP-OCR key file, one per line (UTF-8), then " ".
// false with `error` when the file is missing or empty.
bool load_charset(const std::string& path, std::vector<std::string>* charset, std::string* error);

// `probs` holds steps x classes scores (softmax outputs); classes must be
// charset.size() + 1. Repeats collapse, blanks drop.
bool ctc_greedy_decode(const float* probs, int steps, int classes, const std::vector<std::string>& charset,
                       Recognition* out, std::string* error);

}  // namespace ocr
