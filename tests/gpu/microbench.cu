// ReuseLens microbenchmarks: small kernels with known memory behaviour, used to check the collector's
// records against Nsight Compute counters (benchmarks/fidelity.py) and as recorded fixtures
// (tests/data/runs). Built with -lineinfo for sm_90 (tests/gpu/Makefile). Each kernel is launched once,
// in the order of kKernels; `microbench NAME...` runs only those.
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#define CHECK(x)                                                                        \
  do {                                                                                  \
    cudaError_t e = (x);                                                                \
    if (e != cudaSuccess) {                                                             \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); \
      exit(1);                                                                          \
    }                                                                                   \
  } while (0)

constexpr int kBlocks = 4;
constexpr int kThreads = 128;
constexpr int kN = kBlocks * kThreads;

// Every Topological Distance level on a global array (the paper's Listing 2, section 3.1). Loads go
// through a volatile pointer so the compiler keeps each one.
__global__ void td_levels(const float* a_, float* out) {
  const volatile float* a = a_;
  const int tid = threadIdx.x;
  const int base = blockIdx.x * blockDim.x;
  float x = a[base + tid];                                          // cold miss
  x += a[base + tid];                                               // intra-thread
  x += a[base];                                                     // intra-warp-same-inst (one address)
  x += a[base + (tid ^ 1)];                                         // intra-warp-diff-inst (neighbour lane)
  x += a[base + (tid + 32) % blockDim.x];                           // intra-block (another warp)
  x += a[((blockIdx.x + 1) % gridDim.x) * blockDim.x + tid];        // intra-grid (another block)
  out[base + tid] = x;
}

// Shared memory used thread-privately: each thread writes and reads back only its own word.
__global__ void smem_private(const float* in, float* out) {
  __shared__ float s[kThreads];
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = in[g];
  float v = s[threadIdx.x] * 2.0f;
  s[threadIdx.x] = v;
  out[g] = s[threadIdx.x] + 1.0f;
}

// W-way bank conflicts: lane i touches word i * W (stride W words), so W lanes share each bank.
template <int W>
__global__ void bank_conflict(float* out) {
  __shared__ float s[32 * 32];
  const int lane = threadIdx.x % 32;
  const int idx = (lane * W) % (32 * 32);
  s[idx] = (float)threadIdx.x;
  __syncwarp();
  float v = s[idx];
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

// Broadcast: all lanes read the same shared word and the same global word.
__global__ void broadcast(const float* in, float* out) {
  __shared__ float s[32];
  if (threadIdx.x < 32) s[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  const volatile float* vin = in;
  out[blockIdx.x * blockDim.x + threadIdx.x] = s[0] + vin[0];
}

// Multicast: groups of 4 lanes read the same word (8 distinct words per warp).
__global__ void multicast(const float* in, float* out) {
  __shared__ float s[kThreads];
  s[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
  __syncthreads();
  const volatile float* vin = in;
  const int g = threadIdx.x / 4;
  out[blockIdx.x * blockDim.x + threadIdx.x] = s[g] + vin[g];
}

// Atomics with contention: 4 global counters, 8 shared counters, one result used (ATOM) and one not (RED).
__global__ void atomics(int* counters, int* out) {
  __shared__ int s[8];
  if (threadIdx.x < 8) s[threadIdx.x] = 0;
  __syncthreads();
  atomicAdd(&counters[threadIdx.x % 4], 1);                 // result unused
  int old = atomicMax(&counters[4 + threadIdx.x % 4], threadIdx.x);  // result used
  atomicAdd(&s[threadIdx.x % 8], 1);
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = old + s[threadIdx.x % 8];
}

// Atomics whose lanes spread over 1, 2, 4 and 32 sectors and 1, 16, 32 addresses (result unused: RED).
__global__ void atomics_spread(int* c) {
  const int lane = threadIdx.x % 32;
  atomicAdd(&c[0], 1);              // one address
  atomicAdd(&c[lane / 2], 1);       // 16 addresses, 2 sectors
  atomicAdd(&c[lane], 1);           // 32 addresses, 4 sectors
  atomicAdd(&c[lane * 8], 1);       // 32 addresses, 32 sectors
  if (lane < 8) atomicAdd(&c[lane], 1);  // 8 lanes, 1 sector
}

// A system-scope atomic: the Sanitizer flags it READ|WRITE|ATOMSYS (0x7); ordinary atomics are READ|WRITE.
__global__ void atomic_system(int* c) { atomicAdd_system(&c[threadIdx.x % 4], 1); }

// cp.async (LDGSTS) of 4, 8 and 16 bytes per thread, then a read of the staged data.
__global__ void cp_async(const float4* in, float4* out) {
  __shared__ float4 s16[kThreads];
  __shared__ float2 s8[kThreads];
  __shared__ float s4[kThreads];
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  __pipeline_memcpy_async(&s16[threadIdx.x], &in[g], 16);
  __pipeline_memcpy_async(&s8[threadIdx.x], reinterpret_cast<const float2*>(in) + g, 8);
  __pipeline_memcpy_async(&s4[threadIdx.x], reinterpret_cast<const float*>(in) + g, 4);
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();
  float4 v = s16[(threadIdx.x + 1) % blockDim.x];
  v.x += s8[threadIdx.x].y + s4[threadIdx.x];
  out[g] = v;
}

// 8- and 16-byte accesses to global and shared memory, contiguous and strided.
__global__ void wide_access(const float2* in2, const float4* in4, float2* out2, float4* out4) {
  __shared__ float2 s2[kThreads];
  __shared__ float4 s4[kThreads];
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  s2[threadIdx.x] = in2[g];
  s4[threadIdx.x] = in4[g];
  __syncthreads();
  float2 a = s2[(threadIdx.x * 2) % blockDim.x];   // 8 B, stride 2
  float4 b = s4[(threadIdx.x * 3) % blockDim.x];   // 16 B, stride 3
  out2[g] = a;
  out4[(g * 2) % kN] = b;                          // 16 B, strided store
}

// Local memory: a dynamically indexed per-thread array the compiler cannot keep in registers.
__global__ void local_spill(const int* idx, float* out) {
  float loc[64];
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  for (int i = 0; i < 64; ++i) loc[i] = (float)(i * g);
  float acc = 0;
  for (int i = 0; i < 8; ++i) acc += loc[(idx[g] + 7 * i) & 63];
  out[g] = acc;
}

// Divergent partial warps: a block of 48 threads (the second warp has 16 lanes) and a 3-way branch.
__global__ void divergent(const float* in, float* out) {
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  float v;
  if (threadIdx.x % 3 == 0) v = in[g] * 2.0f;
  else if (threadIdx.x % 3 == 1) v = in[(g + 5) % kN] + 1.0f;
  else v = 0.0f;
  if (threadIdx.x & 1) out[g] = v;
}

// A __noinline__ device function: its accesses belong to the callee, not the kernel.
__device__ __noinline__ float callee_sum(const float* p, int i) { return p[i] + p[i + 1]; }

__global__ void noinline_caller(const float* in, float* out) {
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  out[g] = callee_sum(in, g) + in[g];
}

template <int STRIDE, typename T>
__global__ void templated(const T* in, T* out) {
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  out[g] = in[(g * STRIDE) % kN];
}

// Two kernels reusing one buffer: the consumer reads what the producer wrote.
__global__ void producer(float* buf) {
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  buf[g] = (float)g;
}
__global__ void consumer(const float* buf, float* out) {
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  out[g] = buf[g] + buf[(g + 1) % kN];
}

// 1- and 2-byte accesses.
__global__ void narrow_access(const unsigned char* c, const unsigned short* h, unsigned short* out) {
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  out[g] = (unsigned short)(c[g] + h[(g * 3) % kN]);
}

struct Buffers {
  float *f0, *f1, *f2;
  int *i0, *i1;
  void* raw;
};

static void run(const char* name, const Buffers& b) {
  dim3 grid(kBlocks), block(kThreads);
  if (!strcmp(name, "td_levels")) td_levels<<<grid, block>>>(b.f0, b.f1);
  else if (!strcmp(name, "smem_private")) smem_private<<<grid, block>>>(b.f0, b.f1);
  else if (!strcmp(name, "bank_conflict_1")) bank_conflict<1><<<2, 64>>>(b.f1);
  else if (!strcmp(name, "bank_conflict_2")) bank_conflict<2><<<2, 64>>>(b.f1);
  else if (!strcmp(name, "bank_conflict_4")) bank_conflict<4><<<2, 64>>>(b.f1);
  else if (!strcmp(name, "bank_conflict_8")) bank_conflict<8><<<2, 64>>>(b.f1);
  else if (!strcmp(name, "bank_conflict_16")) bank_conflict<16><<<2, 64>>>(b.f1);
  else if (!strcmp(name, "bank_conflict_32")) bank_conflict<32><<<2, 64>>>(b.f1);
  else if (!strcmp(name, "broadcast")) broadcast<<<grid, block>>>(b.f0, b.f1);
  else if (!strcmp(name, "multicast")) multicast<<<grid, block>>>(b.f0, b.f1);
  else if (!strcmp(name, "atomics")) atomics<<<grid, block>>>(b.i0, b.i1);
  else if (!strcmp(name, "atomics_spread")) atomics_spread<<<2, 64>>>(b.i0);
  else if (!strcmp(name, "atomic_system")) atomic_system<<<1, 64>>>(b.i0);
  else if (!strcmp(name, "cp_async")) cp_async<<<grid, block>>>((const float4*)b.f0, (float4*)b.f2);
  else if (!strcmp(name, "wide_access"))
    wide_access<<<grid, block>>>((const float2*)b.f0, (const float4*)b.f0, (float2*)b.f1, (float4*)b.f2);
  else if (!strcmp(name, "local_spill")) local_spill<<<grid, block>>>(b.i0, b.f1);
  else if (!strcmp(name, "divergent")) divergent<<<kBlocks, 48>>>(b.f0, b.f1);
  else if (!strcmp(name, "noinline_caller")) noinline_caller<<<grid, block>>>(b.f0, b.f1);
  else if (!strcmp(name, "templated_f4")) templated<4, float><<<grid, block>>>(b.f0, b.f1);
  else if (!strcmp(name, "templated_d2")) templated<2, double><<<grid, block>>>((const double*)b.f0, (double*)b.f2);
  else if (!strcmp(name, "producer_consumer")) {
    producer<<<grid, block>>>(b.f2);
    consumer<<<grid, block>>>(b.f2, b.f1);
  } else if (!strcmp(name, "narrow_access"))
    narrow_access<<<grid, block>>>((const unsigned char*)b.raw, (const unsigned short*)b.raw,
                                   (unsigned short*)b.f1);
  else {
    fprintf(stderr, "unknown microbenchmark %s\n", name);
    exit(2);
  }
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
}

static const char* kKernels[] = {"td_levels", "smem_private", "bank_conflict_1", "bank_conflict_2",
                                 "bank_conflict_4", "bank_conflict_8", "bank_conflict_16", "bank_conflict_32",
                                 "broadcast", "multicast", "atomics", "atomics_spread", "atomic_system", "cp_async", "wide_access", "local_spill",
                                 "divergent", "noinline_caller", "templated_f4", "templated_d2",
                                 "producer_consumer", "narrow_access"};

int main(int argc, char** argv) {
  Buffers b;
  const size_t bytes = 4 * kN * sizeof(float4);
  CHECK(cudaMalloc(&b.f0, bytes));
  CHECK(cudaMalloc(&b.f1, bytes));
  CHECK(cudaMalloc(&b.f2, bytes));
  CHECK(cudaMalloc(&b.i0, kN * sizeof(int) * 2));
  CHECK(cudaMalloc(&b.i1, kN * sizeof(int)));
  CHECK(cudaMalloc(&b.raw, 4 * kN));
  CHECK(cudaMemset(b.f0, 0, bytes));
  CHECK(cudaMemset(b.i0, 0, kN * sizeof(int) * 2));
  CHECK(cudaMemset(b.raw, 1, 4 * kN));
  if (argc > 1) {
    for (int i = 1; i < argc; ++i) run(argv[i], b);
  } else {
    for (const char* k : kKernels) run(k, b);
  }
  CHECK(cudaFree(b.f0));
  CHECK(cudaFree(b.f1));
  CHECK(cudaFree(b.f2));
  CHECK(cudaFree(b.i0));
  CHECK(cudaFree(b.i1));
  CHECK(cudaFree(b.raw));
  printf("microbench: done\n");
  return 0;
}
