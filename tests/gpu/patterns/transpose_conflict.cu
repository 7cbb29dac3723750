// Tiled matrix transpose through a 32x32 shared tile. The tile is written row-wise and read column-wise:
// in the read, the 32 lanes of a warp hit tile[0..31][c], 32 words 128 bytes apart, all in one bank, so each
// warp read is split into 32 wavefronts. Expected finding: bank-conflict (paper 3.3 II, R_conf = 32).
// Fixed version: transpose_conflict_fixed.cu pads the row to 33 words.
#include <cuda_runtime.h>
#include <vector>
#include "common.cuh"

constexpr int TILE = 32;
constexpr int ROWS = 8;  // threads per block in y; each thread moves TILE / ROWS elements

#ifndef TILE_PITCH
#define TILE_PITCH TILE
#endif

__global__ void transpose(const float* in, float* out, int width, int height) {
  __shared__ float tile[TILE][TILE_PITCH];
  int x = blockIdx.x * TILE + threadIdx.x;
  int y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS) tile[threadIdx.y + j][threadIdx.x] = in[size_t(y + j) * width + x];
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;
  y = blockIdx.x * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS) out[size_t(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}

int main() {
  const int width = 2048, height = 2048;
  const size_t n = size_t(width) * height;
  std::vector<float> host_in(n), host_out(n), want(n);
  fill(host_in.data(), n, 11);
  for (int r = 0; r < height; ++r)
    for (int c = 0; c < width; ++c) want[size_t(c) * height + r] = host_in[size_t(r) * width + c];
  float *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, n * sizeof(float)));
  CHECK(cudaMalloc(&out, n * sizeof(float)));
  CHECK(cudaMemcpy(in, host_in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  transpose<<<dim3(width / TILE, height / TILE), dim3(TILE, ROWS)>>>(in, out, width, height);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(host_out.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(cudaFree(in));
  CHECK(cudaFree(out));
  const int bad = count_mismatches(host_out.data(), want.data(), n, 0.0f);
  std::printf("%s: %s (%d mismatches)\n", TILE_PITCH == TILE ? "transpose_conflict" : "transpose_conflict_fixed",
              bad ? "FAILED" : "ok", bad);
  return bad ? 1 : 0;
}
