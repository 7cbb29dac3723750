// What one core of the GPU host keeps of its speed as more cores work beside it: a compute-bound chain (no
// memory), a read stream over each thread's own 64 MiB (memory bandwidth), and reads of lines another core has
// just written (records crossing cores, as the engine's routing and block steps see them), at 1-16 threads.
//   g++ -O2 -pthread host_scaling.cpp -o host_scaling && ./host_scaling
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

using Clock = std::chrono::steady_clock;
static double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Runs body(t) on n threads started together; returns the slowest thread's seconds.
template <class F>
static double on_threads(unsigned n, F body) {
  std::atomic<unsigned> ready{0};
  std::atomic<bool> go{false};
  std::vector<double> took(n);
  std::vector<std::thread> ts;
  for (unsigned t = 0; t < n; ++t) {
    ts.emplace_back([&, t] {
      ready.fetch_add(1);
      while (!go.load()) {
      }
      const auto t0 = Clock::now();
      body(t);
      took[t] = seconds_since(t0);
    });
  }
  while (ready.load() < n) {
  }
  go.store(true);
  for (auto& th : ts) th.join();
  double worst = 0;
  for (double s : took) worst = s > worst ? s : worst;
  return worst;
}

static volatile uint64_t sink;

int main() {
  const unsigned counts[] = {1, 2, 4, 8, 12, 14, 16};
  const uint64_t chain = 200000000;
  const size_t stream_bytes = 64ull << 20;
  std::vector<uint64_t*> bufs(16);
  for (auto& b : bufs) {
    b = static_cast<uint64_t*>(aligned_alloc(64, stream_bytes));
    memset(b, 1, stream_bytes);
  }
  printf("threads  chain ns/iter  stream GB/s per thread  total GB/s  handed-over ns/line\n");
  for (unsigned n : counts) {
    const double c = on_threads(n, [&](unsigned t) {
      uint64_t x = 88172645463325252ull + t;
      for (uint64_t i = 0; i < chain; ++i) x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      sink = x;
    });
    const double s = on_threads(n, [&](unsigned t) {
      uint64_t acc = 0;
      for (int rep = 0; rep < 4; ++rep) {
        const uint64_t* p = bufs[t];
        for (size_t i = 0; i < stream_bytes / 8; i += 8) acc += p[i] + p[i + 1] + p[i + 4];
      }
      sink = acc;
    });
    // Pairs of threads: thread 2k writes 1 MiB, thread 2k+1 then reads it (one 8-byte word a line), in turns.
    const size_t hand = 1 << 20, lines = hand / 64, turns = 64;
    std::vector<std::atomic<unsigned>> turn(16);
    for (auto& a : turn) a.store(0);
    double h = 0;
    if (n >= 2) {
      h = on_threads(n - n % 2, [&](unsigned t) {
        const unsigned pair = t / 2;
        char* b = reinterpret_cast<char*>(bufs[pair]);
        uint64_t acc = 0;
        for (unsigned k = 0; k < turns; ++k) {
          if (t % 2 == 0) {
            while (turn[pair].load(std::memory_order_acquire) != 2 * k) {
            }
            for (size_t l = 0; l < lines; ++l) *reinterpret_cast<uint64_t*>(b + 64 * l) = k + l;
            turn[pair].store(2 * k + 1, std::memory_order_release);
          } else {
            while (turn[pair].load(std::memory_order_acquire) != 2 * k + 1) {
            }
            for (size_t l = 0; l < lines; ++l) acc += *reinterpret_cast<uint64_t*>(b + 64 * l);
            turn[pair].store(2 * k + 2, std::memory_order_release);
          }
        }
        sink = acc;
      });
    }
    printf("%7u  %13.3f  %22.2f  %10.1f  %19.1f\n", n, c * 1e9 / chain, 4.0 * stream_bytes / 1e9 / s,
           n * 4.0 * stream_bytes / 1e9 / s, n >= 2 ? h * 1e9 / (turns * lines * 2) : 0.0);
  }
}
