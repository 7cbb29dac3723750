// DrGPUM's object-level memory patterns (issue 18), each implanted once next to an object that uses its memory
// well (the control). tests/collector/test_gpu_memory.py profiles it, and tests/memory/test_memory_fixture.py
// replays the recorded run in CI. Each allocation line carries a marker comment the tests look for: "site:NAME".
// Build: nvcc -g -O0 -lineinfo -arch=sm_90 (host DWARF for the allocation lines).
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                    \
  do {                                                                                 \
    cudaError_t err_ = (call);                                                         \
    if (err_ != cudaSuccess) {                                                         \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
      std::exit(1);                                                                    \
    }                                                                                  \
  } while (0)

constexpr int kN = 1 << 20;  // 4 MiB per float array
constexpr size_t kBytes = kN * sizeof(float);

__global__ void scale(const float* in, float* out, float factor) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < kN) out[i] = in[i] * factor;
}
__global__ void accumulate(float* acc, const float* x) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < kN) acc[i] += x[i];
}
__global__ void fill(float* out, float value) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < kN) out[i] = value;
}

static void launch_scale(const float* in, float* out, float f) { scale<<<kN / 256, 256>>>(in, out, f); }

int main() {
  std::vector<float> host(kN, 1.0f);
  float *input, *output, *early, *unused, *leaked, *dead, *idle;
  CHECK(cudaMalloc(&input, kBytes));   // site:input (control: used from its allocation to its free)
  CHECK(cudaMalloc(&output, kBytes));  // site:output (control)
  CHECK(cudaMalloc(&early, kBytes));   // site:early (early allocation: first used after three operations)
  CHECK(cudaMalloc(&unused, kBytes));  // site:unused (unused allocation)
  CHECK(cudaMemcpy(input, host.data(), kBytes, cudaMemcpyHostToDevice));
  launch_scale(input, output, 2.0f);
  launch_scale(output, input, 0.5f);
  fill<<<kN / 256, 256>>>(early, 1.0f);
  accumulate<<<kN / 256, 256>>>(output, early);
  CHECK(cudaMalloc(&dead, kBytes));  // site:dead (dead write: set, then overwritten whole without a read)
  CHECK(cudaMemset(dead, 0, kBytes));
  CHECK(cudaMemcpy(dead, host.data(), kBytes, cudaMemcpyHostToDevice));
  accumulate<<<kN / 256, 256>>>(output, dead);
  CHECK(cudaMalloc(&idle, kBytes));  // site:idle (temporary idle between its two uses)
  fill<<<kN / 256, 256>>>(idle, 3.0f);
  // idle's gap: four kernels, and an allocation of its size that could have used its space
  CHECK(cudaMalloc(&leaked, kBytes));  // site:leaked (memory leak: never freed)
  fill<<<kN / 256, 256>>>(leaked, 4.0f);
  for (int i = 0; i < 4; ++i) launch_scale(input, output, 1.0f);
  accumulate<<<kN / 256, 256>>>(output, idle);
  accumulate<<<kN / 256, 256>>>(output, leaked);
  CHECK(cudaMemcpy(host.data(), output, kBytes, cudaMemcpyDeviceToHost));
  CHECK(cudaDeviceSynchronize());
  std::printf("output[0] = %f\n", host[0]);
  CHECK(cudaFree(idle));
  CHECK(cudaFree(dead));
  CHECK(cudaFree(unused));
  CHECK(cudaFree(early));
  CHECK(cudaFree(output));
  CHECK(cudaFree(input));
  return 0;
}
