// Session 36: how fast one host thread walks a packed record stream that the GPU just wrote into mapped pinned
// memory (as the drain thread's PC resolution does: resolve_records in collector/native/src/pc_ranges.cpp), with
// and without software prefetch ahead of the walk, and after the generation was first read by two or four
// threads side by side. The stream: 16 MiB, 47% full records (9 slots) and 53% strided (2 slots), as
// cuda-samples mergeSortSharedKernel's launch 0 (79.0 M slots for 14.9 M records, session 35's collector.log).
//   nvcc -O3 -std=c++17 -I analyzer/engine/include pinned_walk.cu -o /tmp/pinned_walk -lpthread && /tmp/pinned_walk
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "reuselens/packed_records.h"
using namespace reuselens;

static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
__global__ void fill(RlSlot* dst, const RlSlot* src, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    dst[i] = src[i];
}
template <size_t kAhead>
__attribute__((noinline)) uint64_t walk(RlSlot* slots, size_t n) {
  const char* ahead = reinterpret_cast<const char*>(slots);
  const char* stop = reinterpret_cast<const char*>(slots + n);
  PackedCursor cur(slots, n);
  uint64_t sum = 0;
  while (const RlSlot* h = cur.next()) {
    if (kAhead) {
      const char* want = std::min(stop, reinterpret_cast<const char*>(h) + kAhead);
      for (; ahead < want; ahead += 64) __builtin_prefetch(ahead, 1);
    }
    uint64_t* w = const_cast<RlSlot*>(h)->w;
    w[1] = (w[1] & 0xFFFFFFFF00000000ull) | 7;
    w[2] = w[2] - 100;
    sum += w[2];
  }
  return sum;
}
static uint64_t touch_part(const RlSlot* s, size_t n) {
  uint64_t x = 0;
  const char* p = reinterpret_cast<const char*>(s);
  for (size_t b = 0; b < n * 32; b += 64) x += *reinterpret_cast<const volatile uint64_t*>(p + b);
  return x;
}
int main() {
  const size_t n = (16u << 20) / 32;
  std::vector<RlSlot> host(n);
  std::mt19937 rng(1);
  size_t i = 0;
  while (i < n) {
    const bool full = rng() % 100 < 47;
    const size_t k = full ? 9 : 2;
    if (i + k > n) {
      for (; i < n; ++i) {
        memset(&host[i], 0, 32);
        host[i].w[0] = 1 | (RL_FORM_PADDING << RL_FORM_SHIFT);
      }
      break;
    }
    memset(&host[i], 0, 32 * k);
    host[i].w[0] = 1 | ((full ? RL_FORM_FULL : RL_FORM_STRIDED) << RL_FORM_SHIFT);
    host[i].w[2] = 0x10000 + rng() % 4096;
    if (!full) host[i + 1].w[3] = 32;
    i += k;
  }
  RlSlot *src, *pinned, *dev_view;
  cudaMalloc(&src, n * 32);
  cudaMemcpy(src, host.data(), n * 32, cudaMemcpyHostToDevice);
  cudaHostAlloc(&pinned, n * 32, cudaHostAllocMapped);
  cudaHostGetDevicePointer(&dev_view, pinned, 0);
  const auto gpu_write = [&] {
    fill<<<264, 256>>>(dev_view, src, n);
    cudaDeviceSynchronize();
  };
  const auto run = [&](const char* name, auto fn) {
    double best = 1e9, sum = 0;
    for (int rep = 0; rep < 7; ++rep) {
      gpu_write();
      const double t = now();
      fn();
      const double s = now() - t;
      best = std::min(best, s);
      sum += s;
    }
    printf("%-34s best %6.2f ms (%5.2f GB/s), mean %6.2f ms\n", name, best * 1e3, n * 32 / best / 1e9, sum / 7 * 1e3);
  };
  volatile uint64_t sink = 0;
  for (int round = 0; round < 2; ++round) {
    run("walk, no prefetch", [&] { sink = walk<0>(pinned, n); });
    run("walk, prefetch 1 KiB ahead", [&] { sink = walk<1024>(pinned, n); });
    run("walk, prefetch 2 KiB ahead", [&] { sink = walk<2048>(pinned, n); });
    run("walk, prefetch 4 KiB ahead", [&] { sink = walk<4096>(pinned, n); });
    run("walk, prefetch 8 KiB ahead", [&] { sink = walk<8192>(pinned, n); });
    for (unsigned threads : {2u, 4u}) {
      const auto touch_in_parallel = [&] {
        std::vector<std::thread> t;
        const size_t part = (n + threads - 1) / threads;
        for (unsigned k = 0; k < threads; ++k) {
          const size_t from = std::min(n, k * part);
          t.emplace_back([&, from] { sink = touch_part(pinned + from, std::min(part, n - from)); });
        }
        for (auto& x : t) x.join();
      };
      char name[64];
      snprintf(name, sizeof name, "%u threads touch, then walk", threads);
      run(name, [&] {
        touch_in_parallel();
        sink = walk<0>(pinned, n);
      });
      snprintf(name, sizeof name, "%u threads touch only", threads);
      run(name, touch_in_parallel);
    }
    run("memcpy (one thread)", [&] { memcpy(host.data(), pinned, n * 32); });
  }
  return 0;
}
