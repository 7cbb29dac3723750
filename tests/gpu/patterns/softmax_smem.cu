// Multi-pass row softmax in the style of the cuVein paper's Listing 3 (llama.cpp soft_max_f32, use_shared).
// One dynamic shared allocation holds two logical buffers (paper Figure 1):
//   buf_iw[0..31]  the block reduction's broadcast buffer (cross-thread reuse: Group 2, the control), and
//   vals = buf_iw + WARP_SIZE, a row copy that every thread writes and reads back only at its own columns
//   (thread-private: Group 1, the abuse-smem finding).
// Fixed version: softmax_smem_fixed.cu keeps vals in registers.
#include <cuda_runtime.h>
#include <vector>
#include "common.cuh"

constexpr int WARP_SIZE = 32;
constexpr int BLOCK = 256;

__device__ float warp_max(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

__device__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// Block-wide reduction through buf[0..31]: lane 0 of each warp publishes, then every warp reads all slots.
template <bool IS_MAX>
__device__ float block_reduce(float v, float* buf) {
  const int lane = threadIdx.x % WARP_SIZE, warp = threadIdx.x / WARP_SIZE;
  v = IS_MAX ? warp_max(v) : warp_sum(v);
  __syncthreads();  // the previous reduction's readers are done with buf
  if (lane == 0) buf[warp] = v;
  __syncthreads();
  v = lane < BLOCK / WARP_SIZE ? buf[lane] : (IS_MAX ? -INFINITY : 0.0f);
  return IS_MAX ? warp_max(v) : warp_sum(v);
}

__global__ void softmax_smem(const float* x, float* dst, int ncols, float scale) {
  extern __shared__ float buf_iw[];
  float* vals = buf_iw + WARP_SIZE;  // thread-private use of block-scope storage
  const int tid = threadIdx.x;
  const float* row_x = x + size_t(blockIdx.x) * ncols;
  float* row_dst = dst + size_t(blockIdx.x) * ncols;

  float max_val = -INFINITY;
  for (int col0 = 0; col0 < ncols; col0 += BLOCK) {
    const int col = col0 + tid;
    const float val = row_x[col] * scale;
    vals[col] = val;
    max_val = fmaxf(max_val, val);
  }
  max_val = block_reduce<true>(max_val, buf_iw);

  float tmp = 0.0f;
  for (int col0 = 0; col0 < ncols; col0 += BLOCK) {
    const int col = col0 + tid;
    const float val = expf(vals[col] - max_val);
    tmp += val;
    vals[col] = val;
  }
  tmp = block_reduce<false>(tmp, buf_iw);
  const float inv_sum = 1.0f / tmp;

  for (int col0 = 0; col0 < ncols; col0 += BLOCK) {
    const int col = col0 + tid;
    row_dst[col] = vals[col] * inv_sum;
  }
}

int main() {
  const int rows = 512, ncols = 1024;
  const float scale = 0.5f;
  const size_t n = size_t(rows) * ncols;
  std::vector<float> host_x(n), host_dst(n), want(n);
  fill(host_x.data(), n, 7);
  for (int r = 0; r < rows; ++r) {
    const float* xr = &host_x[size_t(r) * ncols];
    float m = -INFINITY, s = 0.0f;
    for (int c = 0; c < ncols; ++c) m = std::fmax(m, xr[c] * scale);
    for (int c = 0; c < ncols; ++c) s += std::exp(xr[c] * scale - m);
    for (int c = 0; c < ncols; ++c) want[size_t(r) * ncols + c] = std::exp(xr[c] * scale - m) / s;
  }
  float *x = nullptr, *dst = nullptr;
  CHECK(cudaMalloc(&x, n * sizeof(float)));
  CHECK(cudaMalloc(&dst, n * sizeof(float)));
  CHECK(cudaMemcpy(x, host_x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  const size_t shared = (WARP_SIZE + ncols) * sizeof(float);
  softmax_smem<<<rows, BLOCK, shared>>>(x, dst, ncols, scale);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(host_dst.data(), dst, n * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(cudaFree(x));
  CHECK(cudaFree(dst));
  const int bad = count_mismatches(host_dst.data(), want.data(), n, 1e-4f);
  std::printf("softmax_smem: %s (%d mismatches)\n", bad ? "FAILED" : "ok", bad);
  return bad ? 1 : 0;
}
