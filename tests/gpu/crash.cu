// Robustness fixtures: `crash fault` launches a kernel that writes through a null pointer (a kernel fault);
// `crash abort` aborts the process after one launch; `crash hang` launches a kernel that never finishes
// (for the timeout path).
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

__global__ void ok_kernel(float* p) { p[threadIdx.x] = 1.0f; }
__global__ void bad_kernel(float* p) { p[threadIdx.x + (1 << 30)] = 2.0f; }
__global__ void hang_kernel(volatile int* flag) {
  while (*flag == 0) {
  }
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "fault";
  float* p;
  cudaMalloc(&p, 4096);
  ok_kernel<<<1, 32>>>(p);
  cudaDeviceSynchronize();
  if (!strcmp(mode, "fault")) {
    bad_kernel<<<1, 32>>>(nullptr);
    cudaError_t e = cudaDeviceSynchronize();
    printf("after fault: %s\n", cudaGetErrorString(e));
    return 1;
  }
  if (!strcmp(mode, "abort")) abort();
  if (!strcmp(mode, "hang")) {
    int* flag;
    cudaMalloc(&flag, 4);
    cudaMemset(flag, 0, 4);
    hang_kernel<<<1, 1>>>(flag);
    cudaDeviceSynchronize();
  }
  return 0;
}
