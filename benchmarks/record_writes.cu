// How fast can warps write 288-byte records into host memory the way the device patch does (issue 14)? On the
// H200 the real apps' record producers plateau near 5 M records/s (about 1.5 GB/s), with the drain thread and
// the engine mostly idle. This kernel isolates the writes: each warp writes `per_warp` records to a pinned
// host buffer (or a device buffer), in one of these layouts:
//   leader   the patch's: one lane writes the 32-byte header as four 8-byte stores, every lane its address
//   header4  lanes 0-3 write the header in one coalesced store, every lane its address
//   dev      "leader" into device memory (what a copy engine would then move)
// with and without the per-record fence and the two atomics of the patch's ticket protocol.
// Build: nvcc -O3 -arch=sm_90 -o record_writes benchmarks/record_writes.cu; run: ./record_writes [blocks] [per_warp]
// H200, 2026-12-01 (benchmarks/results/h200-2026-12-01-s7/call5): the patch's layout, protocol and fence write
// 142 M records/s (41 GB/s) into host memory, the 4-lane header 173 M/s: 28 times what the real apps' patched
// kernels produce, so the writes are not what holds them at 5 M records/s (docs/collector.md, "Known cost").
#include <cstdio>
#include <cstdlib>
#include <cstring>

struct Record {
  unsigned long long w[4];
  unsigned long long addr[32];
};

enum Layout { kLeader, kHeader4 };

__device__ unsigned long long g_head, g_committed;

template <Layout kLayout, bool kProtocol, bool kFence>
__global__ void write_records(Record* out, unsigned long long capacity, int per_warp) {
  const unsigned lane = threadIdx.x & 31;
  const unsigned long long warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  for (int i = 0; i < per_warp; ++i) {
    unsigned long long t = warp * per_warp + i;
    if (kProtocol) {
      unsigned long long ticket = 0;
      if (lane == 0) ticket = atomicAdd(&g_head, 1ull);
      t = __shfl_sync(~0u, ticket, 0);
    }
    Record* r = out + (t % capacity);
    if (kLayout == kLeader) {
      if (lane == 0) {
        r->w[0] = t;
        r->w[1] = 0xffffffffull << 32;
        r->w[2] = 0x1234;
        r->w[3] = blockIdx.x;
      }
    } else if (lane < 4) {
      r->w[lane] = t + lane;
    }
    r->addr[lane] = 0x7f0000000000ull + t * 128 + lane * 4;
    if (kFence) {
      __syncwarp();
      if (lane == 0) asm volatile("fence.acq_rel.sys;" ::: "memory");
    }
    if (kProtocol && lane == 0) atomicAdd(&g_committed, 1ull);
  }
}

template <Layout kLayout, bool kProtocol, bool kFence>
double run(Record* out, unsigned long long capacity, int blocks, int per_warp, const char* name) {
  const int threads = 256;
  write_records<kLayout, kProtocol, kFence><<<blocks, threads>>>(out, capacity, 1);  // warm-up
  cudaDeviceSynchronize();
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  cudaEventRecord(a);
  write_records<kLayout, kProtocol, kFence><<<blocks, threads>>>(out, capacity, per_warp);
  cudaEventRecord(b);
  cudaEventSynchronize(b);
  float ms = 0;
  cudaEventElapsedTime(&ms, a, b);
  const double records = double(blocks) * threads / 32 * per_warp;
  const double rate = records / (ms / 1e3);
  std::printf("%-34s %8.1f M records/s  %6.2f GB/s\n", name, rate / 1e6, rate * sizeof(Record) / 1e9);
  return rate;
}

int main(int argc, char** argv) {
  const int blocks = argc > 1 ? std::atoi(argv[1]) : 1056;  // 132 SMs x 8
  const int per_warp = argc > 2 ? std::atoi(argv[2]) : 200;
  const unsigned long long capacity = 58254;  // the collector's default buffer: 16 MiB of records
  Record *host = nullptr, *dev = nullptr;
  if (cudaHostAlloc(&host, capacity * sizeof(Record), cudaHostAllocMapped) != cudaSuccess ||
      cudaMalloc(&dev, capacity * sizeof(Record)) != cudaSuccess) {
    std::fprintf(stderr, "allocation failed\n");
    return 1;
  }
  Record* host_dev = nullptr;
  cudaHostGetDevicePointer(&host_dev, host, 0);
  std::printf("%d blocks of 256 threads, %d records per warp, %zu-byte records\n", blocks, per_warp, sizeof(Record));
  run<kLeader, true, true>(host_dev, capacity, blocks, per_warp, "host, leader header, protocol+fence");
  run<kLeader, true, false>(host_dev, capacity, blocks, per_warp, "host, leader header, protocol");
  run<kLeader, false, false>(host_dev, capacity, blocks, per_warp, "host, leader header, writes only");
  run<kHeader4, true, true>(host_dev, capacity, blocks, per_warp, "host, 4-lane header, protocol+fence");
  run<kHeader4, false, false>(host_dev, capacity, blocks, per_warp, "host, 4-lane header, writes only");
  run<kLeader, true, true>(dev, capacity, blocks, per_warp, "device, leader header, protocol+fence");
  run<kLeader, false, false>(dev, capacity, blocks, per_warp, "device, leader header, writes only");
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
