// Comparing a run's outputs with a reference, for the demos.
#pragma once

#include <cmath>
#include <cstddef>

namespace examples {

// Cosine similarity of two float vectors, in double; 0 when either is all zero.
inline double cosine(const float* a, const float* b, size_t n) {
    double dot = 0, na = 0, nb = 0;
    for (size_t i = 0; i < n; ++i) {
        dot += double{a[i]} * b[i];
        na += double{a[i]} * a[i];
        nb += double{b[i]} * b[i];
    }
    return na > 0 && nb > 0 ? dot / std::sqrt(na * nb) : 0.0;
}

}  // namespace examples
