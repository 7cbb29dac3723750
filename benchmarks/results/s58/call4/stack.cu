// Session 58, call 4: raises the CUDA per-thread stack limit before main when STACK is set, to test whether
// cuda-samples tf32TensorCoreGemm's fault under the collector is the patch's stack frames overflowing the kernel's
// 1,304-byte stack.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

__attribute__((constructor)) static void raise_stack_limit() {
  const char* bytes = getenv("STACK");
  if (!bytes || !*bytes) return;
  cudaError_t err = cudaDeviceSetLimit(cudaLimitStackSize, size_t(atoi(bytes)));
  size_t now = 0;
  cudaDeviceGetLimit(&now, cudaLimitStackSize);
  fprintf(stderr, "stack limit %s -> %zu (%s)\n", bytes, now, cudaGetErrorString(err));
}
