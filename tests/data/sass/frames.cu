// Register saves of non-inlined device functions (analyzer/frame_saves.py, tests/analyzer/test_frame_saves.py): a
// recursive function, which saves the callee-saved registers it uses on entry and restores them before it returns,
// next to a kernel whose local array is indexed at run time (stores and loads of data, no saves). Built with
//   nvcc -cubin -lineinfo -O3 -arch=sm_90 -o frames.sm_90.cubin frames.cu   (nvcc 13.0)
// and listed with nvdisasm -c frames.sm_90.cubin > frames.sm_90.sass (CUDA 13.0).

// Sums a binary tree laid out in an array, depth first: the recursion keeps its partial sums live across calls.
__device__ __noinline__ float tree_sum(const float* tree, int node, int count, float scale) {
  if (node >= count) return 0.0f;
  float left = tree_sum(tree, 2 * node + 1, count, scale * 0.5f);
  float right = tree_sum(tree, 2 * node + 2, count, scale * 0.5f);
  return tree[node] * scale + left + right;
}

__global__ void recursive_sums(const float* tree, int count, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = tree_sum(tree, i % 4, count, 1.0f + i);
}

// A per-thread histogram indexed by data: local memory the thread writes and reads back, which is no frame save.
__global__ void local_histogram(const int* values, int n, int* out) {
  int counts[16];
  for (int b = 0; b < 16; ++b) counts[b] = 0;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int k = i; k < n; k += gridDim.x * blockDim.x) counts[values[k] & 15] += 1;
  for (int b = 0; b < 16; ++b) out[i * 16 + b] = counts[b];
}
