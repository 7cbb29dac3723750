// Host allocations through cuda_runtime.h's cudaMalloc<T> wrapper, inlined at -O3 (tests/memory/test_symbols.py).
#include <cuda_runtime.h>

struct Buffers {
  float* values;
  int* counts;
};

static void make_buffers(Buffers& b, size_t n) {
  cudaMalloc(&b.values, n * sizeof(float));  // site:values
  cudaMalloc(&b.counts, n * sizeof(int));    // site:counts
}

int main(int argc, char**) {
  Buffers b;
  make_buffers(b, size_t(1) << (20 + argc));
  void* plain = nullptr;
  cudaMalloc(&plain, 4096);  // site:plain
  cudaFree(plain);
  cudaFree(b.counts);
  cudaFree(b.values);
  return 0;
}
