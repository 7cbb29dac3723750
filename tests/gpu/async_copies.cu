// Matrix loads and bulk copies, the two record kinds the collector derives from callbacks other than plain
// memory accesses (docs/collector.md): ldmatrix (MATRIX_MEMORY_ACCESS: lane i supplies a row address, lanes
// >= 8 * count none) and cp.async.bulk global<->shared (BULK_COPY_*: one thread, N 16-byte blocks). sm_90.
// benchmarks/fidelity.py --bench build/gpu/async_copies compares the trace with Nsight Compute; the recorded
// run (tests/data/runs/async_copies) is checked record by record in tests/collector/test_async_copies.py.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                         \
  do {                                                                                      \
    cudaError_t err_ = (call);                                                              \
    if (err_ != cudaSuccess) {                                                              \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_));    \
      std::exit(2);                                                                         \
    }                                                                                       \
  } while (0)

constexpr int kBlocks = 4;
constexpr int kRows = 32;        // 16-byte rows of the shared tile: four 8x8 b16 matrices
constexpr int kCopyBlocks = 48;  // 16-byte blocks per bulk copy: one record of 32 and one of 16

// One warp per block. x1: lanes 0-7 supply the rows of one matrix; x4: all 32 lanes, four matrices.
template <int kMatrices>
__global__ void ldmatrix_rows(const uint4* in, uint32_t* out) {
  __shared__ __align__(16) uint4 tile[kRows];
  const int lane = threadIdx.x;
  tile[lane] = in[blockIdx.x * kRows + lane];
  __syncwarp();
  const uint32_t row = static_cast<uint32_t>(__cvta_generic_to_shared(&tile[lane]));
  uint32_t r[4] = {0, 0, 0, 0};
  if (kMatrices == 1) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r[0]) : "r"(row));
  } else {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(row));
  }
  for (int m = 0; m < 4; ++m) out[(blockIdx.x * kRows + lane) * 4 + m] = r[m];
}

// Thread 0 copies kCopyBlocks x 16 bytes into shared memory (completion on an mbarrier), every thread doubles
// its part, thread 0 copies the result back out (bulk group).
__global__ void bulk_roundtrip(const float4* in, float4* out) {
  __shared__ __align__(128) float4 buf[kCopyBlocks];
  __shared__ __align__(8) uint64_t bar;
  const uint32_t sbuf = static_cast<uint32_t>(__cvta_generic_to_shared(buf));
  const uint32_t sbar = static_cast<uint32_t>(__cvta_generic_to_shared(&bar));
  const uint32_t bytes = kCopyBlocks * 16;
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sbar));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sbar), "r"(bytes) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(sbuf), "l"(in + blockIdx.x * kCopyBlocks), "r"(bytes), "r"(sbar)
                 : "memory");
  }
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "wait_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n"
      "@!done bra wait_%=;\n"
      "}\n" ::"r"(sbar)
      : "memory");
  for (int i = threadIdx.x; i < kCopyBlocks; i += blockDim.x) {
    float4 v = buf[i];
    buf[i] = make_float4(2 * v.x, 2 * v.y, 2 * v.z, 2 * v.w);
  }
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
                 ::"l"(out + blockIdx.x * kCopyBlocks), "r"(sbuf), "r"(bytes)
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  }
}

// The b16 fragment thread `lane` holds for matrix m: row lane / 4 of that matrix, halves 2 * (lane % 4), +1.
static uint32_t expected_fragment(const std::vector<uint16_t>& halves, int block, int m, int lane) {
  const int row = block * kRows + m * 8 + lane / 4, col = 2 * (lane % 4);
  return uint32_t(halves[row * 8 + col]) | uint32_t(halves[row * 8 + col + 1]) << 16;
}

int main() {
  int failures = 0;
  {
    std::vector<uint16_t> halves(kBlocks * kRows * 8);
    for (size_t i = 0; i < halves.size(); ++i) halves[i] = uint16_t(i * 7 + 3);
    uint4* d_in;
    uint32_t* d_out;
    CHECK(cudaMalloc(&d_in, halves.size() * 2));
    CHECK(cudaMalloc(&d_out, kBlocks * kRows * 4 * sizeof(uint32_t)));
    CHECK(cudaMemcpy(d_in, halves.data(), halves.size() * 2, cudaMemcpyHostToDevice));
    for (int matrices : {1, 4}) {
      CHECK(cudaMemset(d_out, 0, kBlocks * kRows * 4 * sizeof(uint32_t)));
      if (matrices == 1) ldmatrix_rows<1><<<kBlocks, 32>>>(d_in, d_out);
      else ldmatrix_rows<4><<<kBlocks, 32>>>(d_in, d_out);
      CHECK(cudaGetLastError());
      std::vector<uint32_t> got(kBlocks * kRows * 4);
      CHECK(cudaMemcpy(got.data(), d_out, got.size() * 4, cudaMemcpyDeviceToHost));
      for (int b = 0; b < kBlocks; ++b)
        for (int lane = 0; lane < 32; ++lane)
          for (int m = 0; m < matrices; ++m)
            failures += got[(b * kRows + lane) * 4 + m] != expected_fragment(halves, b, m, lane);
    }
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
  }
  {
    const int n = kBlocks * kCopyBlocks * 4;
    std::vector<float> in(n), got(n);
    for (int i = 0; i < n; ++i) in[i] = float(i % 97);
    float *d_in, *d_out;
    CHECK(cudaMalloc(&d_in, n * sizeof(float)));
    CHECK(cudaMalloc(&d_out, n * sizeof(float)));
    CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    bulk_roundtrip<<<kBlocks, 64>>>(reinterpret_cast<const float4*>(d_in), reinterpret_cast<float4*>(d_out));
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(got.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i) failures += got[i] != 2 * in[i];
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
  }
  CHECK(cudaDeviceSynchronize());
  std::printf("async_copies: %s (%d mismatches)\n", failures ? "FAILED" : "ok", failures);
  return failures ? 1 : 0;
}
