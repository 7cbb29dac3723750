// What one record costs a warp on the GPU when few warps run (issue 14: PolyBench corr and gramschmidt, whose
// kernels run 16 warps through long serial loops, are 7-11 times native under `profile`, with the engine idle), and
// what emptying the SM's L1 on every record costs a kernel that L1 serves (benchmarks/results/s50/README.md).
// Each thread runs ITERS loads; MODE says which:
//   coalesced  lanes on consecutive floats (a record in the strided packed form, 2 slots), each warp on a 1 KiB
//              window no warp read before (until the 64 MiB array wraps around)
//   scatter    the same windows, one float per 32-byte sector in a per-iteration lane order (the full form, 9 slots)
//   reuse      coalesced, but every warp on its own 1 KiB window at every iteration: natively L1 serves all but the
//              first iteration's loads
// The kernel is launched twice (a warm-up, then the timed one) and the second launch's time printed, with the time
// per iteration of one warp: under a patch, (t_patched - t_native) / ITERS is what a record costs a warp.
// Build: nvcc -O3 -lineinfo -arch=sm_90 -o record_latency benchmarks/record_latency.cu
// Run:   ./record_latency BLOCKS THREADS ITERS [coalesced|scatter|reuse]
#include <cstdio>
#include <cstdlib>
#include <cstring>

enum Mode { kCoalesced, kScatter, kReuse };

__global__ void walk(const float* a, float* out, int iters, unsigned mask, int mode) {
  const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31;
  const unsigned warp = tid / 32, warps = (gridDim.x * blockDim.x + 31) / 32;
  float acc = 0.f;
  for (int k = 0; k < iters; ++k) {
    const unsigned window = (mode == kReuse ? warp : unsigned(k) * warps + warp) * 256u;  // 256 floats, 1 KiB
    const unsigned at = mode == kScatter ? window + ((lane * 13u + unsigned(k)) & 31u) * 8u : window + lane;
    acc += a[at & mask];
  }
  out[tid] = acc;
}

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s BLOCKS THREADS ITERS [coalesced|scatter|reuse]\n", argv[0]);
    return 2;
  }
  const int blocks = std::atoi(argv[1]), threads = std::atoi(argv[2]), iters = std::atoi(argv[3]);
  const char* name = argc > 4 ? argv[4] : "coalesced";
  const int mode = !std::strcmp(name, "scatter") ? kScatter : !std::strcmp(name, "reuse") ? kReuse : kCoalesced;
  if (blocks < 1 || threads < 1 || iters < 1 || (mode == kCoalesced && std::strcmp(name, "coalesced"))) {
    std::fprintf(stderr, "usage: %s BLOCKS THREADS ITERS [coalesced|scatter|reuse]\n", argv[0]);
    return 2;
  }
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
  walk<<<blocks, threads>>>(a, out, iters, words - 1, mode);
  cudaEventRecord(t0);
  walk<<<blocks, threads>>>(a, out, iters, words - 1, mode);
  cudaEventRecord(t1);
  const cudaError_t launched = cudaGetLastError();
  if (launched != cudaSuccess || cudaEventSynchronize(t1) != cudaSuccess) {
    std::fprintf(stderr, "kernel failed: %s\n",
                 cudaGetErrorString(launched != cudaSuccess ? launched : cudaGetLastError()));
    return 1;
  }
  float ms = 0.f;
  cudaEventElapsedTime(&ms, t0, t1);
  std::printf("blocks %d threads %d iters %d %s: kernel %.3f ms, %.3f us per iteration of a warp\n", blocks, threads,
              iters, name, ms, 1000.0 * ms / iters);
  return 0;
}
