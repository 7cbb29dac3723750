// DrGPUM's intra-object memory patterns (issue 18), each implanted once next to an object that uses its
// memory well (the control). tests/memory/test_memory_gpu.py profiles it (a traced run: the engine counts
// every access per slice) and checks tests/memory/intra_waste_expect.py. Each allocation line carries a marker
// comment the tests look for: "site:NAME".
// Build: nvcc -g -O0 -lineinfo -arch=sm_90 (host DWARF for the allocation lines).
#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                                      \
  do {                                                                                   \
    cudaError_t err_ = (call);                                                           \
    if (err_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
      std::exit(1);                                                                      \
    }                                                                                    \
  } while (0)

constexpr int kN = 1 << 20;  // 4 MiB per float array: 64 slices of 64 KiB
constexpr size_t kBytes = kN * sizeof(float);
constexpr int kSliceFloats = kN / 64;
constexpr int kThreads = 256;

// Writes out[first, first + count).
__global__ void fill(float* out, int first, int count, float value) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) out[first + i] = value;
}
// Every element of `table` read once; sums into out[i].
__global__ void read_all(const float* table, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < kN) out[i] += table[i];
}
// Every thread reads `repeats` elements of the table's first `hot` elements.
__global__ void read_hot(const float* table, float* out, int hot, int repeats) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= kN) return;
  float s = 0.0f;
  for (int r = 0; r < repeats; ++r) s += table[(i + r * 977) % hot];
  out[i] += s;
}

static int blocks(int n) { return (n + kThreads - 1) / kThreads; }

int main() {
  float *sink, *oversized, *sized, *hot_table, *flat_table, *parts, *shared_parts;
  CHECK(cudaMalloc(&sink, kBytes));  // site:sink (control: every element written and read)
  fill<<<blocks(kN), kThreads>>>(sink, 0, kN, 0.0f);

  // Overallocation: sized for kN elements, used for 1/16 of them (256 KiB of 4 MiB).
  CHECK(cudaMalloc(&oversized, kBytes));  // site:oversized (overallocation)
  fill<<<blocks(kN / 16), kThreads>>>(oversized, 0, kN / 16, 1.0f);
  CHECK(cudaMalloc(&sized, kBytes));  // site:sized (control: every element used)
  fill<<<blocks(kN), kThreads>>>(sized, 0, kN, 1.0f);
  read_hot<<<blocks(kN), kThreads>>>(oversized, sink, kN / 16, 1);  // reads back the used part only
  read_all<<<blocks(kN), kThreads>>>(sized, sink);

  // Non-uniform access: every element read once, then the first 4 slices read 8 times per thread.
  CHECK(cudaMalloc(&hot_table, kBytes));  // site:hot_table (non-uniform access frequency)
  fill<<<blocks(kN), kThreads>>>(hot_table, 0, kN, 2.0f);
  read_all<<<blocks(kN), kThreads>>>(hot_table, sink);
  read_hot<<<blocks(kN), kThreads>>>(hot_table, sink, 4 * kSliceFloats, 8);
  CHECK(cudaMalloc(&flat_table, kBytes));  // site:flat_table (control: every slice read alike)
  fill<<<blocks(kN), kThreads>>>(flat_table, 0, kN, 2.0f);
  read_all<<<blocks(kN), kThreads>>>(flat_table, sink);
  read_hot<<<blocks(kN), kThreads>>>(flat_table, sink, kN, 8);

  // Structured access: four kernels, each writing its own quarter; nothing else touches the array.
  CHECK(cudaMalloc(&parts, kBytes));  // site:parts (structured access)
  for (int q = 0; q < 4; ++q) fill<<<blocks(kN / 4), kThreads>>>(parts, q * (kN / 4), kN / 4, float(q));
  CHECK(cudaMalloc(&shared_parts, kBytes));  // site:shared_parts (control: the kernels' parts overlap)
  for (int q = 0; q < 4; ++q) fill<<<blocks(kN / 2), kThreads>>>(shared_parts, q * (kN / 8), kN / 2, float(q));

  CHECK(cudaDeviceSynchronize());
  float first = 0.0f;
  CHECK(cudaMemcpy(&first, sink, sizeof first, cudaMemcpyDeviceToHost));
  std::printf("sink[0] = %f\n", first);
  CHECK(cudaFree(shared_parts));
  CHECK(cudaFree(parts));
  CHECK(cudaFree(flat_table));
  CHECK(cudaFree(hot_table));
  CHECK(cudaFree(sized));
  CHECK(cudaFree(oversized));
  CHECK(cudaFree(sink));
  return 0;
}
