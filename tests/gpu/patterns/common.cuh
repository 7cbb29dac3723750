// Shared host helpers for the pattern test programs: error checks and a tolerance compare.
#pragma once
#include <cmath>
#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                                          \
  do {                                                                                       \
    cudaError_t err_ = (call);                                                               \
    if (err_ != cudaSuccess) {                                                               \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                     \
                   cudaGetErrorString(err_));                                                \
      std::exit(2);                                                                          \
    }                                                                                        \
  } while (0)

// Returns the number of elements whose relative error exceeds tol, printing the first one.
inline int count_mismatches(const float* got, const float* want, size_t n, float tol) {
  int bad = 0;
  for (size_t i = 0; i < n; ++i) {
    float scale = std::fmax(1.0f, std::fabs(want[i]));
    if (!(std::fabs(got[i] - want[i]) <= tol * scale)) {
      if (bad == 0) std::fprintf(stderr, "mismatch at %zu: got %g, want %g\n", i, got[i], want[i]);
      ++bad;
    }
  }
  return bad;
}

// Deterministic pseudo-random fill in [-1, 1).
inline void fill(float* data, size_t n, unsigned seed) {
  unsigned state = seed * 2654435761u + 1u;
  for (size_t i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    data[i] = float(state >> 8) / float(1u << 23) - 1.0f;
  }
}
