// What parallel speed-up this machine gives at all, for the two kinds of work the engine does: a compute loop
// that stays in registers, and a streaming read of memory. Each of N threads does the same amount of work as
// the single thread; speed-up = N * t(1) / t(N). benchmarks/parallel_ceiling.py builds and runs this.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Runs `work(t)` on n threads started together; returns the wall time until the last one finished.
template <class Work>
double run_threads(unsigned n, Work work) {
  std::atomic<unsigned> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < n; ++t) {
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (!go.load()) {
      }
      work(t);
    });
  }
  while (ready.load() != n) {
  }
  auto t0 = std::chrono::steady_clock::now();
  go.store(true);
  for (auto& th : threads) th.join();
  return seconds_since(t0);
}

volatile uint64_t sink;

void compute(uint64_t iterations) {
  uint64_t a = 1, b = 2, c = 3, d = 4;  // four independent chains keep the core's ALUs busy
  for (uint64_t i = 0; i < iterations; ++i) {
    a = a * 6364136223846793005ull + 1;
    b = b * 6364136223846793005ull + 3;
    c = c * 6364136223846793005ull + 5;
    d = d * 6364136223846793005ull + 7;
  }
  sink = a ^ b ^ c ^ d;
}

void stream(const std::vector<uint64_t>& buf, int passes) {
  uint64_t s = 0;
  for (int p = 0; p < passes; ++p) {
    for (size_t i = 0; i < buf.size(); i += 8) s += buf[i] + buf[i + 4];  // every cache line, twice per line
  }
  sink = s;
}

}  // namespace

int main(int argc, char** argv) {
  unsigned max_threads = argc > 1 ? unsigned(std::atoi(argv[1])) : std::thread::hardware_concurrency();
  const uint64_t iterations = 200000000;
  const size_t words = (256u << 20) / 8;  // 256 MiB per thread: far beyond any cache
  const int passes = 2;
  std::vector<std::vector<uint64_t>> buffers(max_threads);
  for (auto& b : buffers) b.assign(words, 1);  // touched up front: page faults are not part of the figure
  std::printf("threads  compute: s   speed-up   stream: GB/s  speed-up\n");
  double c1 = 0, s1 = 0;
  for (unsigned n = 1; n <= max_threads; n *= 2) {
    double tc = 1e30, ts = 1e30;
    for (int rep = 0; rep < 3; ++rep) {
      tc = std::min(tc, run_threads(n, [&](unsigned) { compute(iterations); }));
      ts = std::min(ts, run_threads(n, [&](unsigned t) { stream(buffers[t], passes); }));
    }
    if (n == 1) c1 = tc, s1 = ts;
    double gbs = double(n) * passes * words * 8 / ts / 1e9;
    std::printf("%7u  %9.3f  %9.2f   %12.1f  %8.2f\n", n, tc, n * c1 / tc, gbs, n * s1 / ts);
    if (n < max_threads && n * 2 > max_threads) n = max_threads / 2;  // end on max_threads
  }
  return 0;
}
