// What one record costs a warp on the GPU when few warps run (issue 14: PolyBench corr and gramschmidt, whose
// kernels run 16 warps through long serial loops, are 7-11 times native under `profile`, with the engine idle).
// Each thread runs `iters` loads of its own element; lanes read consecutive floats (a coalesced load: the strided
// packed form, 2 slots) or, with `scatter`, one float per 32-byte sector in a per-iteration lane order (the full
// form, 9 slots). The kernel is launched twice (a warm-up, then the timed one) and its time printed.
// Build: nvcc -O3 -lineinfo -arch=sm_90 -o record_latency benchmarks/record_latency.cu
// Run:   ./record_latency BLOCKS THREADS ITERS [scatter]
// Per record and warp, a patch costs (t_patched - t_native) / ITERS; benchmarks/results/s50/ has the figures.
#include <cstdio>
#include <cstdlib>

__global__ void walk(const float* a, float* out, int iters, unsigned mask, int scatter) {
  const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31;
  float acc = 0.f;
  unsigned j = (tid & ~31u) * 8u;  // the warp's own 1 KiB window
  for (int k = 0; k < iters; ++k) {
    const unsigned at = scatter ? j + ((lane * 13u + unsigned(k)) & 31u) * 8u : j + lane;
    acc += a[at & mask];
    j += 256u;
  }
  out[tid] = acc;
}

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s BLOCKS THREADS ITERS [scatter]\n", argv[0]);
    return 2;
  }
  const int blocks = std::atoi(argv[1]), threads = std::atoi(argv[2]), iters = std::atoi(argv[3]);
  const int scatter = argc > 4 && argv[4][0] == 's';
  const unsigned words = 1u << 24;  // 64 MiB
  float *a = nullptr, *out = nullptr;
  if (cudaMalloc(&a, words * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&out, size_t(blocks) * threads * sizeof(float)) != cudaSuccess) {
    std::fprintf(stderr, "cudaMalloc failed\n");
    return 1;
  }
  cudaMemset(a, 0, words * sizeof(float));
  cudaEvent_t t0, t1;
  cudaEventCreate(&t0);
  cudaEventCreate(&t1);
  walk<<<blocks, threads>>>(a, out, iters, words - 1, scatter);
  cudaEventRecord(t0);
  walk<<<blocks, threads>>>(a, out, iters, words - 1, scatter);
  cudaEventRecord(t1);
  if (cudaEventSynchronize(t1) != cudaSuccess) {
    std::fprintf(stderr, "kernel failed: %s\n", cudaGetErrorString(cudaGetLastError()));
    return 1;
  }
  float ms = 0.f;
  cudaEventElapsedTime(&ms, t0, t1);
  const double warps = double(blocks) * ((threads + 31) / 32);
  std::printf("blocks %d threads %d iters %d %s: kernel %.3f ms, %.3f us per load per warp\n", blocks, threads, iters,
              scatter ? "scatter" : "coalesced", ms, 1000.0 * ms / iters);
  (void)warps;
  return 0;
}
