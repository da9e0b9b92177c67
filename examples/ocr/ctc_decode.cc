#include "ctc_decode.h"

#include <fstream>

namespace ocr {

bool load_charset(const std::string& path, std::vector<std::string>* charset, std::string* error) {
    std::ifstream in(path);
    if (!in) {
        *error = "cannot read the character list " + path;
        return false;
    }
    charset->clear();
    std::string line;
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        charset->push_back(line);
    }
    if (charset->empty()) {
        *error = "the character list " + path + " is empty";
        return false;
    }
    charset->push_back(" ");
    return true;
}

bool ctc_greedy_decode(const float* probs, int steps, int classes, const std::vector<std::string>& charset,
                       Recognition* out, std::string* error) {
    if (probs == nullptr || steps <= 0 || classes != static_cast<int>(charset.size()) + 1) {
        *error = "the recogniser gives " + std::to_string(classes) + " classes; the character list needs " +
                 std::to_string(charset.size() + 1);
        return false;
    }
    out->text.clear();
    double confidence = 0.0;
    int kept = 0, previous = -1;
    for (int t = 0; t < steps; ++t) {
        const float* row = probs + static_cast<size_t>(t) * classes;
        int best = 0;
        for (int k = 1; k < classes; ++k) {
            if (row[k] > row[best]) best = k;
        }
        if (best != 0 && best != previous) {
            out->text += charset[static_cast<size_t>(best - 1)];
            confidence += row[best];
            ++kept;
        }
        previous = best;
    }
    out->confidence = kept > 0 ? static_cast<float>(confidence / kept) : 0.0f;
    return true;
}

}  // namespace ocr
