// Session 36: load-to-use latency of one core over working sets from 256 KiB to 1 GiB (a pointer chase through a
// random cyclic permutation of 64-byte lines, 4 KiB and 2 MiB pages), to compare the development machine with the
// GPU host. One engine worker replays the recorded slices 2.2-2.7 times as slowly there in every step, while a
// Python loop runs at about the same speed on both (session 36, call 1: 1.69 s against 1.40-1.52 s); the engine's
// steps miss the L2 on shadow entries and on records owned by other workers, so the L3's and the memory's latency
// would explain it.
//   g++ -O2 -std=c++17 latency.cpp -o /tmp/latency && /tmp/latency
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>

int main() {
  const size_t kLine = 64;
  for (int huge = 0; huge < 2; ++huge) {
    for (size_t kib : {256, 1024, 2048, 8192, 32768, 131072, 524288, 1048576}) {
      const size_t bytes = kib << 10, lines = bytes / kLine;
      void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) return 1;
      madvise(p, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
      char* base = static_cast<char*>(p);
      std::vector<uint32_t> order(lines);
      std::iota(order.begin(), order.end(), 0u);
      std::shuffle(order.begin() + 1, order.end(), std::mt19937(7));
      for (size_t i = 0; i < lines; ++i)
        *reinterpret_cast<char**>(base + order[i] * kLine) = base + order[(i + 1) % lines] * kLine;
      char* at = base;
      const size_t steps = 4'000'000;
      for (size_t i = 0; i < lines && i < steps; ++i) at = *reinterpret_cast<char**>(at);  // warm
      const auto t0 = std::chrono::steady_clock::now();
      for (size_t i = 0; i < steps; ++i) at = *reinterpret_cast<char**>(at);
      const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / steps;
      printf("%s pages, %8zu KiB: %6.1f ns a load%s\n", huge ? "2 MiB" : "4 KiB", kib, ns, at == nullptr ? "!" : "");
      munmap(p, bytes);
    }
  }
  return 0;
}
