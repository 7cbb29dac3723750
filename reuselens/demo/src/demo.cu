// ReuseLens demo program (recorded into reuselens/demo/run by tests/gpu/run_on_device.sh).
//
// 1. A multi-pass row softmax in the style of the cuVein paper's Listing 3 (section 6.1): pass 1 stages the
//    row into `vals` and reduces the maximum, pass 2 exponentiates, pass 3 normalises. With USE_SHARED the
//    row lives in shared memory right after the broadcast buffer `buf_iw` (one allocation), but every element
//    is written and read back by the same thread: thread-private data in block-scope storage. `buf_iw`
//    carries the block-wide reductions (real cross-warp reuse).
// 2. A naive 32x32 tile transpose whose column reads hit one shared-memory bank 32 times.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                        \
  do {                                                                                  \
    cudaError_t e = (x);                                                                \
    if (e != cudaSuccess) {                                                             \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); \
      exit(1);                                                                          \
    }                                                                                   \
  } while (0)

constexpr int kWarp = 32;

__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

template <bool USE_SHARED>
__global__ void softmax_rows(const float* x, float* y, int ncols) {
  extern __shared__ float smem[];
  float* buf_iw = smem;                                    // one slot per warp: block reductions
  const int row = blockIdx.x;
  const int tid = threadIdx.x;
  const int lane = tid % kWarp, warp = tid / kWarp;
  float* vals = USE_SHARED ? buf_iw + kWarp : y + (size_t)row * ncols;

  float m = -INFINITY;
  for (int c = tid; c < ncols; c += blockDim.x) {          // pass 1: stage and find the maximum
    const float v = x[(size_t)row * ncols + c];
    vals[c] = v;
    m = fmaxf(m, v);
  }
  m = warp_max(m);
  if (warp == 0) buf_iw[lane] = -INFINITY;
  __syncthreads();
  if (lane == 0) buf_iw[warp] = m;
  __syncthreads();
  m = warp_max(buf_iw[lane]);

  float s = 0.0f;
  for (int c = tid; c < ncols; c += blockDim.x) {          // pass 2: exponentiate
    const float e = expf(vals[c] - m);
    vals[c] = e;
    s += e;
  }
  s = warp_sum(s);
  __syncthreads();
  if (warp == 0) buf_iw[lane] = 0.0f;
  __syncthreads();
  if (lane == 0) buf_iw[warp] = s;
  __syncthreads();
  s = warp_sum(buf_iw[lane]);

  const float inv = 1.0f / s;
  for (int c = tid; c < ncols; c += blockDim.x)            // pass 3: normalise
    y[(size_t)row * ncols + c] = vals[c] * inv;
}

__global__ void transpose_naive(const float* in, float* out, int n) {
  __shared__ float tile[32][32];                           // no padding: column reads conflict 32-way
  const int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
  tile[threadIdx.y][threadIdx.x] = in[(size_t)y * n + x];
  __syncthreads();
  const int tx = blockIdx.y * 32 + threadIdx.x, ty = blockIdx.x * 32 + threadIdx.y;
  out[(size_t)ty * n + tx] = tile[threadIdx.x][threadIdx.y];
}

int main() {
  const int rows = 16, ncols = 512, threads = 128;
  std::vector<float> hx((size_t)rows * ncols);
  for (size_t i = 0; i < hx.size(); ++i) hx[i] = (float)((i * 2654435761u) % 1000) / 100.0f;
  float *x, *y;
  CHECK(cudaMalloc(&x, hx.size() * 4));
  CHECK(cudaMalloc(&y, hx.size() * 4));
  CHECK(cudaMemcpy(x, hx.data(), hx.size() * 4, cudaMemcpyHostToDevice));
  const size_t smem = (kWarp + ncols) * sizeof(float);
  softmax_rows<true><<<rows, threads, smem>>>(x, y, ncols);
  CHECK(cudaGetLastError());
  softmax_rows<false><<<rows, threads, kWarp * sizeof(float)>>>(x, y, ncols);
  CHECK(cudaGetLastError());

  const int n = 64;
  float *a, *b;
  CHECK(cudaMalloc(&a, n * n * 4));
  CHECK(cudaMalloc(&b, n * n * 4));
  CHECK(cudaMemset(a, 0, n * n * 4));
  transpose_naive<<<dim3(n / 32, n / 32), dim3(32, 32)>>>(a, b, n);
  CHECK(cudaGetLastError());
  std::vector<float> hy(ncols);
  CHECK(cudaMemcpy(hy.data(), y, ncols * 4, cudaMemcpyDeviceToHost));
  double sum = 0;
  for (float v : hy) sum += v;
  printf("demo: row 0 sums to %.4f\n", sum);
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  return 0;
}
