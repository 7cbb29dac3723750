// Zero-fill cp.async as cuBLAS and CUTLASS issue it for a tile's rows past a matrix's edge: a lane whose element
// lies outside the matrix passes a null source with src-size 0, so it reads nothing and writes zeros to shared
// memory. Each block (64 threads, two warps) copies one 64-element row of `in` into shared memory with 4-byte
// (cp.async.ca) and 16-byte (cp.async.cg) copies: lanes at and past `valid` in their warp get the null source, and
// the second warp of the last block has no valid lane at all. A third kernel issues the same 16-byte copy, src-size
// operand included, with a source in every lane: what ncu counts of that form without a zero fill. The app checks
// what reached `out` and exits 1 on a wrong element. sm_80+.
#include <cstdint>
#include <cstdio>
#include <vector>

constexpr int kBlocks = 4, kThreads = 64, kValid = 20;

__device__ __forceinline__ void copy_async(uint32_t dst, const void* src, int bytes, int src_bytes) {
  if (bytes == 4)
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
  else
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}

__host__ __device__ inline bool lane_valid(int block, int tid) {
  const bool empty_warp = block == kBlocks - 1 && tid >= 32;
  return !empty_warp && (tid % 32) < kValid;
}

__global__ void zero_fill_words(const float* in, float* out) {
  __shared__ float tile[kThreads];
  const int tid = threadIdx.x, b = blockIdx.x;
  const bool valid = lane_valid(b, tid);
  const float* src = valid ? in + b * kThreads + tid : nullptr;
  copy_async(static_cast<uint32_t>(__cvta_generic_to_shared(&tile[tid])), src, 4, valid ? 4 : 0);
  asm volatile("cp.async.wait_all;" ::: "memory");
  __syncthreads();
  out[b * kThreads + tid] = tile[tid];
}

__global__ void zero_fill_vectors(const float4* in, float4* out) {
  __shared__ float4 tile[kThreads];
  const int tid = threadIdx.x, b = blockIdx.x;
  const bool valid = lane_valid(b, tid);
  const float4* src = valid ? in + b * kThreads + tid : nullptr;
  copy_async(static_cast<uint32_t>(__cvta_generic_to_shared(&tile[tid])), src, 16, valid ? 16 : 0);
  asm volatile("cp.async.wait_all;" ::: "memory");
  __syncthreads();
  out[b * kThreads + tid] = tile[tid];
}

// src_bytes is 16 at run time; a compile-time 16 would let ptxas drop the src-size operand.
__global__ void sourced_vectors(const float4* in, float4* out, int src_bytes) {
  __shared__ float4 tile[kThreads];
  const int tid = threadIdx.x, b = blockIdx.x;
  copy_async(static_cast<uint32_t>(__cvta_generic_to_shared(&tile[tid])), in + b * kThreads + tid, 16, src_bytes);
  asm volatile("cp.async.wait_all;" ::: "memory");
  __syncthreads();
  out[b * kThreads + tid] = tile[tid];
}

int main() {
  const int n = kBlocks * kThreads;
  std::vector<float> host(4 * n);
  for (int i = 0; i < 4 * n; ++i) host[i] = 1.0f + i;
  float *in, *out;
  cudaMalloc(&in, 4 * n * sizeof(float));
  cudaMalloc(&out, 4 * n * sizeof(float));
  cudaMemcpy(in, host.data(), 4 * n * sizeof(float), cudaMemcpyHostToDevice);
  std::vector<float> got(4 * n);
  int wrong = 0;
  zero_fill_words<<<kBlocks, kThreads>>>(in, out);
  cudaMemcpy(got.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost);
  for (int i = 0; i < n; ++i) wrong += got[i] != (lane_valid(i / kThreads, i % kThreads) ? host[i] : 0.0f);
  zero_fill_vectors<<<kBlocks, kThreads>>>(reinterpret_cast<const float4*>(in), reinterpret_cast<float4*>(out));
  cudaMemcpy(got.data(), out, 4 * n * sizeof(float), cudaMemcpyDeviceToHost);
  for (int i = 0; i < 4 * n; ++i) wrong += got[i] != (lane_valid(i / 4 / kThreads, i / 4 % kThreads) ? host[i] : 0.0f);
  sourced_vectors<<<kBlocks, kThreads>>>(reinterpret_cast<const float4*>(in), reinterpret_cast<float4*>(out), 16);
  cudaMemcpy(got.data(), out, 4 * n * sizeof(float), cudaMemcpyDeviceToHost);
  for (int i = 0; i < 4 * n; ++i) wrong += got[i] != host[i];
  cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess) {
    std::printf("CUDA error: %s\n", cudaGetErrorString(err));
    return 2;
  }
  std::printf("%d wrong elements\n", wrong);
  return wrong ? 1 : 0;
}
