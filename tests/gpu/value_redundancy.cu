// Value redundancy implants and controls (issue 19; docs/engine.md "Value redundancy"): each case is a kernel
// whose loads and stores have a known value history, and its control differs only in the values. Build:
//   nvcc -O3 -lineinfo -arch=sm_90 -o value_redundancy value_redundancy.cu
// Run `./value_redundancy CASE...` (default: all cases), one or two launches per case.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(x)                                                                 \
  do {                                                                           \
    cudaError_t e = (x);                                                         \
    if (e != cudaSuccess) {                                                      \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); \
      exit(1);                                                                   \
    }                                                                            \
  } while (0)

constexpr int N = 4096, THREADS = 256;

// Each thread loads its element twice; `poke` stores between the loads (the control: the second load differs).
__global__ void reload_in_thread(volatile float* a, float* out, float poke) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  float x = a[i];
  if (poke != 0.0f) a[i] = x + poke;
  out[i] = x + a[i];
}

// One load per element; launched twice over the same array (unchanged between, or rewritten by the host).
__global__ void read_table(const float* __restrict__ table, float* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = table[i] * 2.0f;
}

// Stores a flag every element already holds (silent) or not (the control).
__global__ void store_flags(int* flags, int value) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  flags[i] = value;
}

// Loads of a vector that is mostly zero, and of one element per warp that every lane reads (uniform).
__global__ void sparse_and_uniform(const float* __restrict__ sparse, const float* __restrict__ per_warp, float* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = sparse[i] + per_warp[i / 32];
}

// 16-byte loads of the same float4 twice in a thread, with a store of the same 16 bytes between (silent).
__global__ void reload_vector(float4* v, float4* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float4 x = __ldcv(&v[i]);
  __stcg(&v[i], x);
  const float4 y = __ldcv(&v[i]);
  out[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
}

// Loads of an array whose 32 elements per warp hold one value (replicated data), each lane from its own address.
__global__ void read_replicated(const float* __restrict__ rep, float* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = rep[i] * 3.0f;
}

// A shared tile loaded twice around a barrier: the second load finds the same values (block-scope reuse).
__global__ void shared_twice(const float* __restrict__ in, float* out) {
  __shared__ float tile[THREADS];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = in[i];
  __syncthreads();
  float a = reinterpret_cast<volatile float*>(tile)[(threadIdx.x + 1) % THREADS];
  __syncthreads();
  float b = reinterpret_cast<volatile float*>(tile)[(threadIdx.x + 1) % THREADS];
  out[i] = a + b;
}

// A relaxation step: each launch reads the element (drifted by `factor` since the last launch's read) and scales
// it again. factor 1.001: within 1% of the last load, approximately redundant; 1.1: not; the integer and double
// variants the same with an integer step (no approximation, however small) and at double width.
__global__ void relax(float* x, float* out, float factor) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float v = x[i];
  out[i] = v * 0.5f + 1.0f;
  x[i] = v * factor;
}
__global__ void relax_double(double* x, double* out, double factor) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const double v = x[i];
  out[i] = v * 0.5 + 1.0;
  x[i] = v * factor;
}
__global__ void relax_int(int* x, int* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int v = x[i];
  out[i] = v - i;
  x[i] = v + 1;
}
constexpr int RELAX_LAUNCHES = 4;

static float* device_floats(const std::vector<float>& h) {
  float* d;
  CHECK(cudaMalloc(&d, h.size() * sizeof(float)));
  CHECK(cudaMemcpy(d, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
  return d;
}

int main(int argc, char** argv) {
  std::vector<const char*> cases;
  for (int i = 1; i < argc; ++i) cases.push_back(argv[i]);
  if (cases.empty())
    cases = {"reload", "reload_poked", "table",      "table_rewritten", "flags_silent", "flags_changed", "sparse",
             "vector", "shared",       "replicated", "approx",          "approx_far",   "approx_double", "approx_int"};
  std::vector<float> ramp(N), zeros(N, 0.0f);
  for (int i = 0; i < N; ++i) ramp[i] = float(i % 97) + 0.5f;
  float* out;
  CHECK(cudaMalloc(&out, N * sizeof(float4)));
  const dim3 grid(N / THREADS), block(THREADS);
  for (const char* c : cases) {
    if (!strcmp(c, "reload") || !strcmp(c, "reload_poked")) {
      float* a = device_floats(ramp);
      reload_in_thread<<<grid, block>>>(a, out, strcmp(c, "reload") ? 1.0f : 0.0f);
      CHECK(cudaFree(a));
    } else if (!strcmp(c, "table") || !strcmp(c, "table_rewritten")) {
      float* t = device_floats(ramp);
      read_table<<<grid, block>>>(t, out);
      if (!strcmp(c, "table_rewritten")) {
        std::vector<float> other(ramp);
        for (float& x : other) x += 1.0f;
        CHECK(cudaMemcpy(t, other.data(), N * sizeof(float), cudaMemcpyHostToDevice));
      }
      read_table<<<grid, block>>>(t, out);
      CHECK(cudaFree(t));
    } else if (!strcmp(c, "flags_silent") || !strcmp(c, "flags_changed")) {
      int* f;
      CHECK(cudaMalloc(&f, N * sizeof(int)));
      std::vector<int> ones(N, 1);
      CHECK(cudaMemcpy(f, ones.data(), N * sizeof(int), cudaMemcpyHostToDevice));
      store_flags<<<grid, block>>>(f, strcmp(c, "flags_silent") ? 2 : 1);
      CHECK(cudaFree(f));
    } else if (!strcmp(c, "sparse")) {
      std::vector<float> sparse(zeros);
      for (int i = 0; i < N; i += 10) sparse[i] = 1.0f;  // one element in ten is not zero
      float* s = device_floats(sparse);
      float* w = device_floats(ramp);
      sparse_and_uniform<<<grid, block>>>(s, w, out);
      CHECK(cudaFree(s));
      CHECK(cudaFree(w));
    } else if (!strcmp(c, "vector")) {
      std::vector<float> v(4 * N);
      for (int i = 0; i < 4 * N; ++i) v[i] = float(i % 13) + 0.25f;
      float* d = device_floats(v);
      reload_vector<<<grid, block>>>(reinterpret_cast<float4*>(d), reinterpret_cast<float4*>(out));
      CHECK(cudaFree(d));
    } else if (!strcmp(c, "replicated")) {
      std::vector<float> rep(N);
      for (int i = 0; i < N; ++i) rep[i] = float(i / 32) + 1.0f;
      float* r = device_floats(rep);
      read_replicated<<<grid, block>>>(r, out);
      CHECK(cudaFree(r));
    } else if (!strcmp(c, "shared")) {
      float* in = device_floats(ramp);
      shared_twice<<<grid, block>>>(in, out);
      CHECK(cudaFree(in));
    } else if (!strcmp(c, "approx") || !strcmp(c, "approx_far")) {
      float* x = device_floats(ramp);
      for (int k = 0; k < RELAX_LAUNCHES; ++k) relax<<<grid, block>>>(x, out, strcmp(c, "approx") ? 1.1f : 1.001f);
      CHECK(cudaFree(x));
    } else if (!strcmp(c, "approx_double")) {
      std::vector<double> h(N);
      for (int i = 0; i < N; ++i) h[i] = double(ramp[i]);
      double *x, *o;
      CHECK(cudaMalloc(&x, N * sizeof(double)));
      CHECK(cudaMalloc(&o, N * sizeof(double)));
      CHECK(cudaMemcpy(x, h.data(), N * sizeof(double), cudaMemcpyHostToDevice));
      for (int k = 0; k < RELAX_LAUNCHES; ++k) relax_double<<<grid, block>>>(x, o, 1.001);
      CHECK(cudaFree(x));
      CHECK(cudaFree(o));
    } else if (!strcmp(c, "approx_int")) {
      std::vector<int> h(N);
      for (int i = 0; i < N; ++i) h[i] = 1000000 + i;  // as float bits: denormals a millionth apart per step
      int* x;
      CHECK(cudaMalloc(&x, N * sizeof(int)));
      CHECK(cudaMemcpy(x, h.data(), N * sizeof(int), cudaMemcpyHostToDevice));
      for (int k = 0; k < RELAX_LAUNCHES; ++k) relax_int<<<grid, block>>>(x, reinterpret_cast<int*>(out));
      CHECK(cudaFree(x));
    } else {
      fprintf(stderr, "unknown case %s\n", c);
      return 2;
    }
    CHECK(cudaDeviceSynchronize());
  }
  CHECK(cudaFree(out));
  printf("ok\n");
  return 0;
}
