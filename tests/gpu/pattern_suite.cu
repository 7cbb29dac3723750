// Pattern suite for issue #8: for every ReuseLens pattern id P a kernel implant_<P> that exhibits P and a
// kernel control_<P> that does the same useful work the way a performance engineer would write it, so that P
// does not trigger. Lines where the analyzer must report an implant end with "// implant: <pattern-id>";
// tests/patterns/test_pattern_suite.py checks the findings' source lines against these markers.
//
// Built with: nvcc -O3 -lineinfo -gencode arch=compute_90,code=sm_90 (tests/gpu/Makefile). Every kernel is
// launched once on a small grid (<= 4 blocks of <= 128 threads, or one 32x32 block) so the recorded trace
// stays small. The host checks every result and prints "pattern_suite: ok" (exit 0), or exits non-zero.
//
// First-touch global traffic is a streaming access by definition (paper 3.3 IV: cold share > 0.95), and every
// kernel that reads an input or writes an output once has some. So every control except control_streaming_access
// is expected to carry streaming-access findings and nothing else (the test lists that allowance explicitly);
// control_streaming_access reaches zero findings of any pattern.
//
// Why the implanted accesses survive -O3 is said per kernel; the SASS was checked with cuobjdump -sass.
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>

#define CHECK(call)                                                                            \
  do {                                                                                         \
    cudaError_t err_ = (call);                                                                 \
    if (err_ != cudaSuccess) {                                                                 \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(err_)); \
      std::exit(2);                                                                            \
    }                                                                                          \
  } while (0)

constexpr int THREADS = 128;  // threads per block for the 1-D kernels
constexpr int BLOCKS = 2;     // blocks for the 1-D kernels
constexpr int N = THREADS * BLOCKS;
constexpr unsigned FULL = 0xffffffffu;

// ---- redundant-rar ------------------------------------------------------------------------------------------
// The store through b may alias a (no __restrict__), so the compiler must reload a[i] after it: the same thread
// reads the same bytes at a second PC (SASS: two LDG of [a + 4i] around the STG to b).
__global__ void implant_redundant_rar(const float* a, float* b, float* c) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float x = a[i];
  b[i] = 2.0f * x;
  c[i] = x + a[i];  // implant: redundant-rar
}

// __restrict__ tells the compiler the store cannot change a[i]: one load, the value stays in a register.
__global__ void control_redundant_rar(const float* __restrict__ a, float* __restrict__ b, float* __restrict__ c) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float x = a[i];
  b[i] = 2.0f * x;
  c[i] = x + x;
}

// ---- redundant-raw ------------------------------------------------------------------------------------------
// The store to aux may alias out, so out[i] is reloaded after the thread stored it itself (SASS: STG out, STG
// aux, LDG out).
__global__ void implant_redundant_raw(const float* in, float* out, float* aux, float* res) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float x = in[i];
  out[i] = 2.0f * x;
  aux[i] = x + 1.0f;
  res[i] = out[i] + 1.0f;  // implant: redundant-raw
}

__global__ void control_redundant_raw(const float* __restrict__ in, float* __restrict__ out,
                                      float* __restrict__ aux, float* __restrict__ res) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float x = in[i];
  float y = 2.0f * x;
  out[i] = y;
  aux[i] = x + 1.0f;
  res[i] = y + 1.0f;
}

// ---- redundant-waw ------------------------------------------------------------------------------------------
// "Zero the output, then write it": the load of in[i] may alias out[i], so the compiler cannot drop the first
// store as dead (SASS: STG out (zero), LDG in, STG out). At run time nothing reads it: a dead store.
__global__ void implant_redundant_waw(const float* in, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = 0.0f;  // implant: redundant-waw
  float v = in[i];
  out[i] = 2.0f * v + 1.0f;
}

__global__ void control_redundant_waw(const float* __restrict__ in, float* __restrict__ out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = 2.0f * in[i] + 1.0f;
}

// ---- abuse-smem ---------------------------------------------------------------------------------------------
// A per-thread 4-bin histogram kept in shared memory, column t belonging to thread t only. The bin index is
// data-dependent, so the compiler cannot promote the array to registers (SASS: STS zero-fill, LDS/STS
// read-modify-write at a computed address, LDS for the output); no other thread ever touches column t.
__global__ void implant_abuse_smem(const float* in, int* out) {
  __shared__ int cnt[4][THREADS];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
#pragma unroll
  for (int b = 0; b < 4; ++b) cnt[b][t] = 0;  // implant: abuse-smem
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    int bin = static_cast<int>(in[k * N + i]) & 3;
    cnt[bin][t] += 1;  // implant: abuse-smem
  }
#pragma unroll
  for (int b = 0; b < 4; ++b) out[b * N + i] = cnt[b][t];  // implant: abuse-smem
}

// The fix: the bins live in registers (compile-time indices, selects instead of a dynamic index).
__global__ void control_abuse_smem(const float* __restrict__ in, int* __restrict__ out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int c0 = 0, c1 = 0, c2 = 0, c3 = 0;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    int bin = static_cast<int>(in[k * N + i]) & 3;
    c0 += bin == 0;
    c1 += bin == 1;
    c2 += bin == 2;
    c3 += bin == 3;
  }
  out[0 * N + i] = c0;
  out[1 * N + i] = c1;
  out[2 * N + i] = c2;
  out[3 * N + i] = c3;
}

// ---- bank-conflict ------------------------------------------------------------------------------------------
// 32x32 transpose in one 32x32 block: the column read tile[tx][ty] puts all 32 lanes of a warp in one bank
// (32 wavefronts per warp access). The barrier keeps both shared accesses (SASS: STS, BAR.SYNC, LDS).
__global__ void implant_bank_conflict(const float* in, float* out) {
  __shared__ float tile[32][32];
  int tx = threadIdx.x, ty = threadIdx.y;
  tile[ty][tx] = in[ty * 32 + tx];
  __syncthreads();
  out[ty * 32 + tx] = tile[tx][ty];  // implant: bank-conflict
}

// Padding each row by one word spreads a column over all 32 banks.
__global__ void control_bank_conflict(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float tile[32][33];
  int tx = threadIdx.x, ty = threadIdx.y;
  tile[ty][tx] = in[ty * 32 + tx];
  __syncthreads();
  out[ty * 32 + tx] = tile[tx][ty];
}

// ---- poor-coalescing ----------------------------------------------------------------------------------------
// Gather column 0 of a row-major N x 32 matrix: lanes are 128 bytes apart, one sector per lane (R_coal 8).
__global__ void implant_poor_coalescing(const float* rows, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = rows[i * 32];  // implant: poor-coalescing
}

// The same column read from the column-major (structure-of-arrays) copy: consecutive lanes, 4 sectors per warp.
__global__ void control_poor_coalescing(const float* __restrict__ cols, float* __restrict__ out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = cols[0 * N + i];
}

// ---- broadcasting -------------------------------------------------------------------------------------------
// Subtract a per-block base value that thread 0 publishes in global memory: after the barrier every lane of
// every warp reads the same global address. The barrier is a memory clobber, so the load stays (SASS: STG
// base, BAR.SYNC, LDG base). Because the kernel also writes base, the region is no __constant__ candidate, so
// the finding is broadcasting and not constant-region.
__global__ void implant_broadcasting(const float* in, float* base, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = in[i];
  if (threadIdx.x == 0) base[blockIdx.x] = v;
  __syncthreads();
  out[i] = v - base[blockIdx.x];  // implant: broadcasting
}

// The block-uniform value is handed over in shared memory (shared broadcasts cost one wavefront and are not
// reported); global memory only receives it once. Warp 0 already holds the value in lane 0 and takes it with a
// shuffle; only the other warps read the shared copy. (That also keeps the barrier visibly needed: the first
// shared read after it is always another warp's, so a reuse edge spans it whatever the warp order.)
__global__ void control_broadcasting(const float* __restrict__ in, float* __restrict__ base,
                                     float* __restrict__ out) {
  __shared__ float sbase;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = in[i];
  if (threadIdx.x == 0) {
    sbase = v;
    base[blockIdx.x] = v;
  }
  __syncthreads();
  float b = threadIdx.x < 32 ? __shfl_sync(FULL, v, 0) : sbase;
  out[i] = v - b;
}

// ---- multicasting -------------------------------------------------------------------------------------------
// 4x upsampling: groups of four lanes read the same element, 8 distinct addresses per 32-lane warp access.
__global__ void implant_multicasting(const float* in, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = in[i / 4];  // implant: multicasting
}

// One lane per group loads (8 lanes, 8 addresses: one sector) and passes the value on with a shuffle.
__global__ void control_multicasting(const float* __restrict__ in, float* __restrict__ out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int lane = threadIdx.x & 31;
  float v = 0.0f;
  if ((lane & 3) == 0) v = in[i / 4];
  v = __shfl_sync(FULL, v, lane & ~3);
  out[i] = v;
}

// ---- atomic-contention --------------------------------------------------------------------------------------
// 4-bin histogram straight into global memory: 32 lanes of a warp update 4 addresses (SASS: RED.E.ADD).
__global__ void implant_atomic_contention(const float* in, int* hist) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int bin = static_cast<int>(in[i]) & 3;
  atomicAdd(&hist[bin], 1);  // implant: atomic-contention
}

// Warp-aggregated (ballot + popc, one lane updates each bin) into a per-block shared histogram, merged into
// global memory by one atomic per bin at the end (each address updated by one lane).
__global__ void control_atomic_contention(const float* __restrict__ in, int* __restrict__ hist) {
  __shared__ int sh[4];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  int lane = t & 31;
  if (t < 4) sh[t] = 0;
  __syncthreads();
  int bin = static_cast<int>(in[i]) & 3;
#pragma unroll
  for (int b = 0; b < 4; ++b) {
    unsigned members = __ballot_sync(FULL, bin == b);
    if (lane == 0 && members) atomicAdd(&sh[b], __popc(members));
  }
  __syncthreads();
  if (t < 4) atomicAdd(&hist[t], sh[t]);
}

// ---- constant-region ----------------------------------------------------------------------------------------
// Horner evaluation of an 8-coefficient polynomial whose coefficients sit in global memory: every coefficient
// load is warp-uniform (one address per warp), nothing writes them, and the 32 bytes fit the constant bank.
__global__ void implant_constant_region(const float* coef, const float* x, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float xv = x[i], acc = 0.0f;
#pragma unroll
  for (int k = 0; k < 8; ++k) acc = acc * xv + coef[k];  // implant: constant-region
  out[i] = acc;
}

__constant__ float c_coef[8];

// The coefficients in __constant__ memory, served by the constant cache (no global load at all).
__global__ void control_constant_region(const float* __restrict__ x, float* __restrict__ out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float xv = x[i], acc = 0.0f;
#pragma unroll
  for (int k = 0; k < 8; ++k) acc = acc * xv + c_coef[k];
  out[i] = acc;
}

// ---- hierarchical-reuse-block -------------------------------------------------------------------------------
// One block of 4 warps: out[t] = sum_j x[lane + 32 j] * w[j][t]. Every warp reads the whole 128-float vector
// x from global memory, so 3/4 of x's traffic is reuse by another warp of the same block (served by L1/L2).
__global__ void implant_hierarchical_reuse_block(const float* x, const float* w, float* out) {
  int t = threadIdx.x, lane = t & 31;
  float acc = 0.0f;
#pragma unroll
  for (int j = 0; j < 4; ++j) acc += x[lane + 32 * j] * w[j * THREADS + t];  // implant: hierarchical-reuse-block
  out[t] = acc;
}

// The block stages x in shared memory once (one coalesced load per element) and reads it from there. Each
// warp takes its own chunk (j == warp: the element its thread staged) from the register it loaded it into, and
// only the other three chunks from shared memory (SASS: three LDS per warp under a warp-uniform branch).
__global__ void control_hierarchical_reuse_block(const float* __restrict__ x, const float* __restrict__ w,
                                                 float* __restrict__ out) {
  __shared__ float sx[THREADS];
  int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  float own = x[t];
  sx[t] = own;
  __syncthreads();
  float acc = 0.0f;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    float v;
    if (j == warp) v = own;
    else v = sx[lane + 32 * j];
    acc += v * w[j * THREADS + t];
  }
  out[t] = acc;
}

// ---- hierarchical-reuse-grid --------------------------------------------------------------------------------
// Scale 4 rows by one vector, a block per row: every block reads all of x, 3/4 of its traffic crosses blocks.
__global__ void implant_hierarchical_reuse_grid(const float* x, const float* in, float* out) {
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  out[i] = in[i] * x[t];  // implant: hierarchical-reuse-grid
}

// One block owns the vector: it loads x[t] once into a register and walks the rows.
__global__ void control_hierarchical_reuse_grid(const float* __restrict__ x, const float* __restrict__ in,
                                                float* __restrict__ out, int rows) {
  int t = threadIdx.x;
  float xv = x[t];
  for (int r = 0; r < rows; ++r) out[r * THREADS + t] = in[r * THREADS + t] * xv;
}

// ---- streaming-access ---------------------------------------------------------------------------------------
// Pairwise sum y[t] = x[t] + x[t ^ 1] from two input streams (x and a host-permuted copy xp[t] = x[t ^ 1])
// into a third array: every byte is touched once.
__global__ void implant_streaming_access(const float* x, const float* xp, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float a = x[i];  // implant: streaming-access
  float b = xp[i];  // implant: streaming-access
  y[i] = a + b;  // implant: streaming-access
}

// The same sum computed in place on one copy: lane t reads its partner's element and then its own at one PC
// (the loop is kept rolled: SASS has one LDG in a 2-trip loop), so half that PC's bytes are reuse within the
// warp, and the in-place store rewrites bytes its own thread just read. __syncwarp orders the partner's read
// before the overwrite (nvcc compiles it to a NOP in this converged warp, so no barrier is recorded). No PC is
// a first-touch stream, and no reuse scope dominates (r(warp) = r(thread) = 1/2 < delta = 0.8).
__global__ void control_streaming_access(float* x) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float acc = 0.0f;
#pragma unroll 1
  for (int k = 0; k < 2; ++k) {
    acc += x[i ^ (k == 0 ? 1 : 0)];
    __syncwarp();
  }
  x[i] = acc;
}

// ---- race-candidate -----------------------------------------------------------------------------------------
// A shared buffer reused for two phases; the barrier between the last read of phase 1 and the overwrite of
// phase 2 is missing (write-after-read across warps). The partner is 32 threads away: another warp.
__global__ void implant_race_candidate(const float* in, float* out) {
  __shared__ float s[THREADS];
  int t = threadIdx.x;
  float v = in[t];
  s[t] = v;
  __syncthreads();
  float r1 = s[(t + 32) & (THREADS - 1)];  // implant: race-candidate
  s[t] = 2.0f * v;  // implant: race-candidate
  __syncthreads();
  float r2 = s[(t + 32) & (THREADS - 1)];
  out[t] = r1 + r2;
}

__global__ void control_race_candidate(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float s[THREADS];
  int t = threadIdx.x;
  float v = in[t];
  s[t] = v;
  __syncthreads();
  float r1 = s[(t + 32) & (THREADS - 1)];
  __syncthreads();
  s[t] = 2.0f * v;
  __syncthreads();
  float r2 = s[(t + 32) & (THREADS - 1)];
  out[t] = r1 + r2;
}

// ---- removable-barrier --------------------------------------------------------------------------------------
// A leftover __syncthreads between per-thread work: no thread reads anything another thread wrote.
__global__ void implant_removable_barrier(const float* in, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = in[i];
  __syncthreads();  // implant: removable-barrier
  out[i] = 2.0f * v;
}

__global__ void control_removable_barrier(const float* __restrict__ in, float* __restrict__ out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = 2.0f * in[i];
}

// ---- host ---------------------------------------------------------------------------------------------------

static int failures = 0;

template <typename T>
static T* device(const std::vector<T>& host) {
  T* ptr = nullptr;
  CHECK(cudaMalloc(&ptr, host.size() * sizeof(T)));
  CHECK(cudaMemcpy(ptr, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return ptr;
}

template <typename T>
static T* zeros(size_t n) {
  return device(std::vector<T>(n, T(0)));
}

template <typename T>
static std::vector<T> fetch(const T* ptr, size_t n) {
  std::vector<T> host(n);
  CHECK(cudaMemcpy(host.data(), ptr, n * sizeof(T), cudaMemcpyDeviceToHost));
  return host;
}

static void after(const char* kernel) {
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  (void)kernel;
}

// Compares got against want; reports the first mismatch of `what`.
template <typename T>
static void expect(const char* what, const std::vector<T>& got, const std::vector<T>& want) {
  for (size_t i = 0; i < want.size(); ++i) {
    double g = double(got[i]), w = double(want[i]);
    if (!(std::fabs(g - w) <= 1e-4 * std::fmax(1.0, std::fabs(w)))) {
      std::fprintf(stderr, "%s: mismatch at %zu: got %g, want %g\n", what, i, g, w);
      ++failures;
      return;
    }
  }
}

static std::vector<float> random_floats(size_t n, unsigned seed, float lo, float hi) {
  std::vector<float> v(n);
  unsigned state = seed * 2654435761u + 1u;
  for (auto& x : v) {
    state = state * 1664525u + 1013904223u;
    x = lo + (hi - lo) * float(state >> 8) / float(1u << 24);
  }
  return v;
}

int main() {
  const dim3 grid(BLOCKS), block(THREADS);
  std::vector<float> in = random_floats(N, 1, -1.0f, 1.0f);
  float* d_in = device(in);

  {  // redundant-rar / -raw / -waw
    std::vector<float> b(N), c(N), out(N), aux(N), res(N), waw(N);
    for (int i = 0; i < N; ++i) {
      b[i] = 2.0f * in[i];
      c[i] = 2.0f * in[i];
      aux[i] = in[i] + 1.0f;
      res[i] = 2.0f * in[i] + 1.0f;
      waw[i] = 2.0f * in[i] + 1.0f;
    }
    for (int fixed = 0; fixed < 2; ++fixed) {
      float *p = zeros<float>(N), *q = zeros<float>(N), *r = zeros<float>(N);
      if (fixed) control_redundant_rar<<<grid, block>>>(d_in, p, q);
      else implant_redundant_rar<<<grid, block>>>(d_in, p, q);
      after("redundant_rar");
      expect("redundant_rar b", fetch(p, N), b);
      expect("redundant_rar c", fetch(q, N), c);
      CHECK(cudaMemset(p, 0, N * sizeof(float)));
      CHECK(cudaMemset(q, 0, N * sizeof(float)));
      if (fixed) control_redundant_raw<<<grid, block>>>(d_in, p, q, r);
      else implant_redundant_raw<<<grid, block>>>(d_in, p, q, r);
      after("redundant_raw");
      expect("redundant_raw out", fetch(p, N), b);
      expect("redundant_raw aux", fetch(q, N), aux);
      expect("redundant_raw res", fetch(r, N), res);
      CHECK(cudaMemset(p, 0, N * sizeof(float)));
      if (fixed) control_redundant_waw<<<grid, block>>>(d_in, p);
      else implant_redundant_waw<<<grid, block>>>(d_in, p);
      after("redundant_waw");
      expect("redundant_waw", fetch(p, N), waw);
      CHECK(cudaFree(p));
      CHECK(cudaFree(q));
      CHECK(cudaFree(r));
    }
  }

  {  // abuse-smem: per-thread histogram of 4 values in [0, 8)
    std::vector<float> vals = random_floats(4 * N, 2, 0.0f, 8.0f);
    std::vector<int> want(4 * N, 0);
    for (int i = 0; i < N; ++i)
      for (int k = 0; k < 4; ++k) want[(static_cast<int>(vals[k * N + i]) & 3) * N + i] += 1;
    float* d_vals = device(vals);
    for (int fixed = 0; fixed < 2; ++fixed) {
      int* d_out = zeros<int>(4 * N);
      if (fixed) control_abuse_smem<<<grid, block>>>(d_vals, d_out);
      else implant_abuse_smem<<<grid, block>>>(d_vals, d_out);
      after("abuse_smem");
      expect(fixed ? "control_abuse_smem" : "implant_abuse_smem", fetch(d_out, 4 * N), want);
      CHECK(cudaFree(d_out));
    }
    CHECK(cudaFree(d_vals));
  }

  {  // bank-conflict: 32x32 transpose
    std::vector<float> m = random_floats(1024, 3, -1.0f, 1.0f), want(1024);
    for (int r = 0; r < 32; ++r)
      for (int c = 0; c < 32; ++c) want[r * 32 + c] = m[c * 32 + r];
    float* d_m = device(m);
    for (int fixed = 0; fixed < 2; ++fixed) {
      float* d_out = zeros<float>(1024);
      if (fixed) control_bank_conflict<<<1, dim3(32, 32)>>>(d_m, d_out);
      else implant_bank_conflict<<<1, dim3(32, 32)>>>(d_m, d_out);
      after("bank_conflict");
      expect("bank_conflict", fetch(d_out, 1024), want);
      CHECK(cudaFree(d_out));
    }
    CHECK(cudaFree(d_m));
  }

  {  // poor-coalescing: column 0 of an N x 32 matrix, row-major vs column-major copy
    std::vector<float> rows = random_floats(N * 32, 4, -1.0f, 1.0f), cols(N * 32), want(N);
    for (int r = 0; r < N; ++r) {
      want[r] = rows[r * 32];
      for (int c = 0; c < 32; ++c) cols[c * N + r] = rows[r * 32 + c];
    }
    float *d_rows = device(rows), *d_cols = device(cols);
    for (int fixed = 0; fixed < 2; ++fixed) {
      float* d_out = zeros<float>(N);
      if (fixed) control_poor_coalescing<<<grid, block>>>(d_cols, d_out);
      else implant_poor_coalescing<<<grid, block>>>(d_rows, d_out);
      after("poor_coalescing");
      expect("poor_coalescing", fetch(d_out, N), want);
      CHECK(cudaFree(d_out));
    }
    CHECK(cudaFree(d_rows));
    CHECK(cudaFree(d_cols));
  }

  {  // broadcasting: subtract the block's first element
    std::vector<float> want(N), want_base(BLOCKS);
    for (int i = 0; i < N; ++i) want[i] = in[i] - in[(i / THREADS) * THREADS];
    for (int b = 0; b < BLOCKS; ++b) want_base[b] = in[b * THREADS];
    for (int fixed = 0; fixed < 2; ++fixed) {
      float *d_base = zeros<float>(BLOCKS), *d_out = zeros<float>(N);
      if (fixed) control_broadcasting<<<grid, block>>>(d_in, d_base, d_out);
      else implant_broadcasting<<<grid, block>>>(d_in, d_base, d_out);
      after("broadcasting");
      expect("broadcasting out", fetch(d_out, N), want);
      expect("broadcasting base", fetch(d_base, BLOCKS), want_base);
      CHECK(cudaFree(d_base));
      CHECK(cudaFree(d_out));
    }
  }

  {  // multicasting: 4x upsampling
    std::vector<float> want(N);
    for (int i = 0; i < N; ++i) want[i] = in[i / 4];
    for (int fixed = 0; fixed < 2; ++fixed) {
      float* d_out = zeros<float>(N);
      if (fixed) control_multicasting<<<grid, block>>>(d_in, d_out);
      else implant_multicasting<<<grid, block>>>(d_in, d_out);
      after("multicasting");
      expect("multicasting", fetch(d_out, N), want);
      CHECK(cudaFree(d_out));
    }
  }

  {  // atomic-contention: 4-bin histogram over one block
    std::vector<float> vals = random_floats(THREADS, 5, 0.0f, 8.0f);
    std::vector<int> want(4, 0);
    for (float v : vals) want[static_cast<int>(v) & 3] += 1;
    float* d_vals = device(vals);
    for (int fixed = 0; fixed < 2; ++fixed) {
      int* d_hist = zeros<int>(4);
      if (fixed) control_atomic_contention<<<1, THREADS>>>(d_vals, d_hist);
      else implant_atomic_contention<<<1, THREADS>>>(d_vals, d_hist);
      after("atomic_contention");
      expect("atomic_contention", fetch(d_hist, 4), want);
      CHECK(cudaFree(d_hist));
    }
    CHECK(cudaFree(d_vals));
  }

  {  // constant-region: polynomial with 8 coefficients
    std::vector<float> coef = {0.5f, -1.0f, 0.25f, 2.0f, -0.75f, 1.5f, -0.125f, 1.0f}, want(N);
    for (int i = 0; i < N; ++i) {
      float acc = 0.0f;
      for (int k = 0; k < 8; ++k) acc = acc * in[i] + coef[k];
      want[i] = acc;
    }
    float* d_coef = device(coef);
    CHECK(cudaMemcpyToSymbol(c_coef, coef.data(), 8 * sizeof(float)));
    for (int fixed = 0; fixed < 2; ++fixed) {
      float* d_out = zeros<float>(N);
      if (fixed) control_constant_region<<<grid, block>>>(d_in, d_out);
      else implant_constant_region<<<grid, block>>>(d_coef, d_in, d_out);
      after("constant_region");
      expect("constant_region", fetch(d_out, N), want);
      CHECK(cudaFree(d_out));
    }
    CHECK(cudaFree(d_coef));
  }

  {  // hierarchical-reuse-block: out[t] = sum_j x[lane + 32 j] * w[j][t], one block
    std::vector<float> x = random_floats(THREADS, 6, -1.0f, 1.0f), w = random_floats(4 * THREADS, 7, -1.0f, 1.0f);
    std::vector<float> want(THREADS);
    for (int t = 0; t < THREADS; ++t) {
      float acc = 0.0f;
      for (int j = 0; j < 4; ++j) acc += x[(t & 31) + 32 * j] * w[j * THREADS + t];
      want[t] = acc;
    }
    float *d_x = device(x), *d_w = device(w);
    for (int fixed = 0; fixed < 2; ++fixed) {
      float* d_out = zeros<float>(THREADS);
      if (fixed) control_hierarchical_reuse_block<<<1, THREADS>>>(d_x, d_w, d_out);
      else implant_hierarchical_reuse_block<<<1, THREADS>>>(d_x, d_w, d_out);
      after("hierarchical_reuse_block");
      expect("hierarchical_reuse_block", fetch(d_out, THREADS), want);
      CHECK(cudaFree(d_out));
    }
    CHECK(cudaFree(d_x));
    CHECK(cudaFree(d_w));
  }

  {  // hierarchical-reuse-grid: 4 rows scaled by one vector
    const int rows = 4;
    std::vector<float> x = random_floats(THREADS, 8, -1.0f, 1.0f), m = random_floats(rows * THREADS, 9, -1.0f, 1.0f);
    std::vector<float> want(rows * THREADS);
    for (int r = 0; r < rows; ++r)
      for (int t = 0; t < THREADS; ++t) want[r * THREADS + t] = m[r * THREADS + t] * x[t];
    float *d_x = device(x), *d_m = device(m);
    for (int fixed = 0; fixed < 2; ++fixed) {
      float* d_out = zeros<float>(rows * THREADS);
      if (fixed) control_hierarchical_reuse_grid<<<1, THREADS>>>(d_x, d_m, d_out, rows);
      else implant_hierarchical_reuse_grid<<<rows, THREADS>>>(d_x, d_m, d_out);
      after("hierarchical_reuse_grid");
      expect("hierarchical_reuse_grid", fetch(d_out, rows * THREADS), want);
      CHECK(cudaFree(d_out));
    }
    CHECK(cudaFree(d_x));
    CHECK(cudaFree(d_m));
  }

  {  // streaming-access: pairwise sums over 2 blocks of one warp
    const int n = 64;
    std::vector<float> x = random_floats(n, 10, -1.0f, 1.0f), xp(n), want(n);
    for (int i = 0; i < n; ++i) {
      xp[i] = x[i ^ 1];
      want[i] = x[i] + x[i ^ 1];
    }
    float *d_x = device(x), *d_xp = device(xp), *d_y = zeros<float>(n);
    implant_streaming_access<<<2, 32>>>(d_x, d_xp, d_y);
    after("implant_streaming_access");
    expect("implant_streaming_access", fetch(d_y, n), want);
    control_streaming_access<<<2, 32>>>(d_x);
    after("control_streaming_access");
    expect("control_streaming_access", fetch(d_x, n), want);
    CHECK(cudaFree(d_x));
    CHECK(cudaFree(d_xp));
    CHECK(cudaFree(d_y));
  }

  {  // race-candidate: two phases through one shared buffer, one block
    std::vector<float> want(THREADS), raced(THREADS);
    for (int t = 0; t < THREADS; ++t) {
      float p = in[(t + 32) & (THREADS - 1)];
      want[t] = p + 2.0f * p;
      raced[t] = 2.0f * p + 2.0f * p;  // the implant's phase-1 read may already see the phase-2 value
    }
    for (int fixed = 0; fixed < 2; ++fixed) {
      float* d_out = zeros<float>(THREADS);
      if (fixed) control_race_candidate<<<1, THREADS>>>(d_in, d_out);
      else implant_race_candidate<<<1, THREADS>>>(d_in, d_out);
      after("race_candidate");
      std::vector<float> got = fetch(d_out, THREADS);
      if (fixed) {
        expect("control_race_candidate", got, want);
      } else {
        for (int t = 0; t < THREADS; ++t) {
          if (std::fabs(got[t] - want[t]) > 1e-5f && std::fabs(got[t] - raced[t]) > 1e-5f) {
            std::fprintf(stderr, "implant_race_candidate: mismatch at %d: got %g\n", t, got[t]);
            ++failures;
            break;
          }
        }
      }
      CHECK(cudaFree(d_out));
    }
  }

  {  // removable-barrier
    std::vector<float> want(N);
    for (int i = 0; i < N; ++i) want[i] = 2.0f * in[i];
    for (int fixed = 0; fixed < 2; ++fixed) {
      float* d_out = zeros<float>(N);
      if (fixed) control_removable_barrier<<<grid, block>>>(d_in, d_out);
      else implant_removable_barrier<<<grid, block>>>(d_in, d_out);
      after("removable_barrier");
      expect("removable_barrier", fetch(d_out, N), want);
      CHECK(cudaFree(d_out));
    }
  }

  CHECK(cudaFree(d_in));
  if (failures) {
    std::fprintf(stderr, "pattern_suite: %d check(s) failed\n", failures);
    return 1;
  }
  std::printf("pattern_suite: ok\n");
  return 0;
}
