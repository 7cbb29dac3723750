// A kernel whose stack frame is larger than the CUDA default per-thread stack limit (1 KiB), as cuda-samples'
// tf32TensorCoreGemm's 255-register kernels are (1,280-1,304 bytes: docs/collector.md, "The patch's stack"): the
// driver sizes such a launch's stack to the kernel's frame, and the device patch's functions, which run on that
// stack, need more. Each thread fills a local array it indexes by data (so it stays in local memory), sums a
// data-chosen walk over it, and stores the sum; the host checks every sum. Exit status 0 when all match.
#include <cstdio>
#include <cstdlib>
#include <vector>

constexpr int kWords = 336;  // 1,344 bytes of local array: a frame above 1 KiB
constexpr int kThreads = 128, kBlocks = 64, kSteps = 64;

__global__ void deep_stack(const int* seeds, int* sums) {
  volatile int frame[kWords];  // volatile: kept in local memory, every store and load issued
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  const int seed = seeds[t];
  for (int i = 0; i < kWords; ++i) frame[i] = seed * 31 + i;
  int at = seed % kWords, sum = 0;
  for (int s = 0; s < kSteps; ++s) {
    sum += frame[at];
    at = (at * 7 + 13) % kWords;
  }
  sums[t] = sum;
}

int main() {
  const int n = kThreads * kBlocks;
  std::vector<int> seeds(n), sums(n);
  for (int i = 0; i < n; ++i) seeds[i] = (i * 2654435761u) >> 20;
  int *d_seeds = nullptr, *d_sums = nullptr;
  cudaMalloc(&d_seeds, n * sizeof(int));
  cudaMalloc(&d_sums, n * sizeof(int));
  cudaMemcpy(d_seeds, seeds.data(), n * sizeof(int), cudaMemcpyHostToDevice);
  deep_stack<<<kBlocks, kThreads>>>(d_seeds, d_sums);
  cudaError_t err = cudaMemcpy(sums.data(), d_sums, n * sizeof(int), cudaMemcpyDeviceToHost);
  if (err != cudaSuccess) {
    printf("CUDA error: %s\n", cudaGetErrorString(err));
    return 2;
  }
  int wrong = 0;
  for (int i = 0; i < n; ++i) {
    int at = seeds[i] % kWords, sum = 0;
    for (int s = 0; s < kSteps; ++s) {
      sum += seeds[i] * 31 + at;
      at = (at * 7 + 13) % kWords;
    }
    wrong += sum != sums[i];
  }
  printf("%s: %d of %d sums wrong\n", wrong ? "FAILED" : "ok", wrong, n);
  return wrong ? 1 : 0;
}
