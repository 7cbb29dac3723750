// Applications for benchmarks/overhead.py (native vs profiled). `apps NAME [args]`; each prints
// "kernel_ms=<GPU time of its kernels, CUDA events>" so the benchmark can separate kernel time from the
// process's wall time.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(x)                                                                         \
  do {                                                                                   \
    cudaError_t e = (x);                                                                 \
    if (e != cudaSuccess) {                                                              \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); \
      exit(1);                                                                           \
    }                                                                                    \
  } while (0)

__global__ void tiny(float* p) { p[threadIdx.x] += 1.0f; }

// One anti-diagonal of a dynamic-programming table per launch: the grid follows the diagonal's length, so
// every launch has its own configuration (issue #14: one graph for the kernel, not one per grid size).
__global__ void diagonal(float* table, const int* weights, int n, int d) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int row = i, col = d - i;
  if (row >= n || col < 0 || col >= n) return;
  float up = row > 0 ? table[(row - 1) * n + col] : 0.0f;
  float left = col > 0 ? table[row * n + col - 1] : 0.0f;
  table[row * n + col] = fmaxf(up, left) + weights[(row + col) & 63];
}

__global__ void vecadd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

// Tiled matrix multiply with shared memory (reuse inside a block).
__global__ void matmul(const float* A, const float* B, float* C, int n) {
  __shared__ float As[16][16], Bs[16][16];
  int r = blockIdx.y * 16 + threadIdx.y, c = blockIdx.x * 16 + threadIdx.x;
  float acc = 0;
  for (int t = 0; t < n; t += 16) {
    As[threadIdx.y][threadIdx.x] = A[r * n + t + threadIdx.x];
    Bs[threadIdx.y][threadIdx.x] = B[(t + threadIdx.y) * n + c];
    __syncthreads();
    for (int k = 0; k < 16; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  C[r * n + c] = acc;
}

// 1-D stencil with a shared halo.
__global__ void stencil(const float* in, float* out, int n) {
  __shared__ float s[256 + 2];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x + 1] = in[i];
  if (threadIdx.x == 0) s[0] = in[i > 0 ? i - 1 : 0];
  if (threadIdx.x == blockDim.x - 1) s[blockDim.x + 1] = in[i + 1 < n ? i + 1 : i];
  __syncthreads();
  out[i] = 0.25f * s[threadIdx.x] + 0.5f * s[threadIdx.x + 1] + 0.25f * s[threadIdx.x + 2];
}

// Spins a little so that kernels on different streams overlap.
__global__ void stream_work(float* p, int iters) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = p[i];
  for (int k = 0; k < iters; ++k) v = v * 0.999f + 1.0f;
  p[i] = v;
}

int main(int argc, char** argv) {
  const char* app = argc > 1 ? argv[1] : "trivial";
  cudaEvent_t e0, e1;
  CHECK(cudaFree(0));
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  float ms = 0;
  if (!strcmp(app, "trivial")) {  // start-up cost: one launch of one warp
    float* p;
    CHECK(cudaMalloc(&p, 128));
    CHECK(cudaEventRecord(e0));
    tiny<<<1, 32>>>(p);
    CHECK(cudaEventRecord(e1));
  } else if (!strcmp(app, "many_launches")) {  // hundreds of small launches
    int n = argc > 2 ? atoi(argv[2]) : 500;
    float* p;
    CHECK(cudaMalloc(&p, 128));
    CHECK(cudaEventRecord(e0));
    for (int i = 0; i < n; ++i) tiny<<<1, 32>>>(p);
    CHECK(cudaEventRecord(e1));
  } else if (!strcmp(app, "vecadd")) {
    int n = argc > 2 ? atoi(argv[2]) : (1 << 20);
    float *a, *b, *c;
    CHECK(cudaMalloc(&a, n * 4));
    CHECK(cudaMalloc(&b, n * 4));
    CHECK(cudaMalloc(&c, n * 4));
    CHECK(cudaMemset(a, 0, n * 4));
    CHECK(cudaMemset(b, 0, n * 4));
    CHECK(cudaEventRecord(e0));
    vecadd<<<(n + 255) / 256, 256>>>(a, b, c, n);
    CHECK(cudaEventRecord(e1));
  } else if (!strcmp(app, "matmul")) {
    int n = argc > 2 ? atoi(argv[2]) : 256;
    float *A, *B, *C;
    CHECK(cudaMalloc(&A, n * n * 4));
    CHECK(cudaMalloc(&B, n * n * 4));
    CHECK(cudaMalloc(&C, n * n * 4));
    CHECK(cudaMemset(A, 0, n * n * 4));
    CHECK(cudaMemset(B, 0, n * n * 4));
    CHECK(cudaEventRecord(e0));
    matmul<<<dim3(n / 16, n / 16), dim3(16, 16)>>>(A, B, C, n);
    CHECK(cudaEventRecord(e1));
  } else if (!strcmp(app, "stencil")) {
    int n = 1 << 18, steps = argc > 2 ? atoi(argv[2]) : 20;
    float *a, *b;
    CHECK(cudaMalloc(&a, n * 4));
    CHECK(cudaMalloc(&b, n * 4));
    CHECK(cudaMemset(a, 0, n * 4));
    CHECK(cudaEventRecord(e0));
    for (int s = 0; s < steps; ++s) {
      stencil<<<n / 256, 256>>>(a, b, n);
      float* t = a;
      a = b;
      b = t;
    }
    CHECK(cudaEventRecord(e1));
  } else if (!strcmp(app, "grids")) {  // one kernel, a different grid per launch (a wavefront)
    int blocks = argc > 2 ? atoi(argv[2]) : 40, n = blocks * 32;
    float* table;
    int* weights;
    CHECK(cudaMalloc(&table, size_t(n) * n * 4));
    CHECK(cudaMalloc(&weights, 64 * 4));
    CHECK(cudaMemset(table, 0, size_t(n) * n * 4));
    CHECK(cudaMemset(weights, 0, 64 * 4));
    CHECK(cudaEventRecord(e0));
    for (int d = 0; d < 2 * n - 1; d += 32) {  // every 32nd diagonal: grids of 1..blocks blocks and back
      int len = d < n ? d + 1 : 2 * n - 1 - d;
      diagonal<<<(len + 31) / 32, 32>>>(table, weights, n, d);
    }
    CHECK(cudaEventRecord(e1));
  } else if (!strcmp(app, "multistream")) {  // several user streams with cross-stream dependencies
    const int ns = 4, rounds = argc > 2 ? atoi(argv[2]) : 8;
    std::vector<cudaStream_t> st(ns);
    std::vector<cudaEvent_t> ev(ns);
    std::vector<float*> buf(ns);
    for (int s = 0; s < ns; ++s) {
      CHECK(cudaStreamCreateWithFlags(&st[s], cudaStreamNonBlocking));
      CHECK(cudaEventCreateWithFlags(&ev[s], cudaEventDisableTiming));
      CHECK(cudaMalloc(&buf[s], 4096 * 4));
      CHECK(cudaMemsetAsync(buf[s], 0, 4096 * 4, st[s]));
    }
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaEventRecord(e0));
    for (int r = 0; r < rounds; ++r) {
      for (int s = 0; s < ns; ++s) {
        if (r > 0) CHECK(cudaStreamWaitEvent(st[s], ev[(s + 1) % ns]));
        stream_work<<<16, 256, 0, st[s]>>>(buf[s], 200);
        CHECK(cudaEventRecord(ev[s], st[s]));
      }
    }
    for (int s = 0; s < ns; ++s) CHECK(cudaStreamSynchronize(st[s]));
    CHECK(cudaEventRecord(e1));
  } else if (!strcmp(app, "reset")) {  // the context goes mid-run (cudaDeviceReset) and a new one comes
    int n = 1 << 18, steps = argc > 2 ? atoi(argv[2]) : 4;
    for (int round = 0; round < 2; ++round) {
      if (round == 1) {
        CHECK(cudaDeviceReset());  // also destroys the events
        CHECK(cudaFree(0));
        CHECK(cudaEventCreate(&e0));
        CHECK(cudaEventCreate(&e1));
      }
      float *a, *b;
      CHECK(cudaMalloc(&a, n * 4));
      CHECK(cudaMalloc(&b, n * 4));
      CHECK(cudaMemset(a, 0, n * 4));
      CHECK(cudaEventRecord(e0));
      for (int s = 0; s < steps; ++s) stencil<<<n / 256, 256>>>(s % 2 ? b : a, s % 2 ? a : b, n);
      CHECK(cudaEventRecord(e1));
      CHECK(cudaDeviceSynchronize());
      CHECK(cudaFree(a));
      CHECK(cudaFree(b));
    }
  } else {
    fprintf(stderr, "unknown app %s\n", app);
    return 2;
  }
  CHECK(cudaGetLastError());
  CHECK(cudaEventSynchronize(e1));
  CHECK(cudaEventElapsedTime(&ms, e0, e1));
  printf("kernel_ms=%.4f\n", ms);
  return 0;
}
