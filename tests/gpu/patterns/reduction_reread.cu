// Row normalization (layer-norm without affine): a mean reduction, a variance reduction that re-reads the
// row, and an output pass that re-reads it again. Each thread reads the same columns in all three passes,
// so the second and third loads re-read values the same thread already loaded.
// Expected finding: redundant-rar on the re-reading loads (paper 3.3 III -> register promotion).
// Fixed version: reduction_reread_fixed.cu.
#include <cuda_runtime.h>
#include <vector>
#include "common.cuh"

constexpr int WARP_SIZE = 32;
constexpr int BLOCK = 256;

__device__ float block_sum(float v, float* buf) {
  const int lane = threadIdx.x % WARP_SIZE, warp = threadIdx.x / WARP_SIZE;
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  __syncthreads();
  if (lane == 0) buf[warp] = v;
  __syncthreads();
  v = lane < BLOCK / WARP_SIZE ? buf[lane] : 0.0f;
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

__global__ void normalize_rows(const float* x, float* y, int ncols) {
  __shared__ float buf[WARP_SIZE];
  const float* row = x + size_t(blockIdx.x) * ncols;
  float sum = 0.0f;
  for (int c = threadIdx.x; c < ncols; c += BLOCK) sum += row[c];
  const float mean = block_sum(sum, buf) / float(ncols);
  float sq = 0.0f;
  for (int c = threadIdx.x; c < ncols; c += BLOCK) {
    const float d = row[c] - mean;  // re-read (RAR, same thread)
    sq += d * d;
  }
  const float inv_std = rsqrtf(block_sum(sq, buf) / float(ncols) + 1e-5f);
  for (int c = threadIdx.x; c < ncols; c += BLOCK)
    y[size_t(blockIdx.x) * ncols + c] = (row[c] - mean) * inv_std;  // re-read again
}

void reference(const std::vector<float>& x, std::vector<float>& y, int rows, int ncols) {
  for (int r = 0; r < rows; ++r) {
    const float* row = &x[size_t(r) * ncols];
    double mean = 0.0, var = 0.0;
    for (int c = 0; c < ncols; ++c) mean += row[c];
    mean /= ncols;
    for (int c = 0; c < ncols; ++c) var += (row[c] - mean) * (row[c] - mean);
    const double inv_std = 1.0 / std::sqrt(var / ncols + 1e-5);
    for (int c = 0; c < ncols; ++c) y[size_t(r) * ncols + c] = float((row[c] - mean) * inv_std);
  }
}

int main() {
  const int rows = 1024, ncols = 2048;
  const size_t n = size_t(rows) * ncols;
  std::vector<float> host_x(n), host_y(n), want(n);
  fill(host_x.data(), n, 5);
  reference(host_x, want, rows, ncols);
  float *x = nullptr, *y = nullptr;
  CHECK(cudaMalloc(&x, n * sizeof(float)));
  CHECK(cudaMalloc(&y, n * sizeof(float)));
  CHECK(cudaMemcpy(x, host_x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  normalize_rows<<<rows, BLOCK>>>(x, y, ncols);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(host_y.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
  const int bad = count_mismatches(host_y.data(), want.data(), n, 1e-3f);
  std::printf("reduction_reread: %s (%d mismatches)\n", bad ? "FAILED" : "ok", bad);
  return bad ? 1 : 0;
}
