// The drain thread's side of the engine queue (collector/native/src/queued_sink.cpp), without a GPU: 256 MiB of
// records pushed in 8 MiB batches, 0.5 ms apart (the GPU refilling its buffer), into a queue whose consumer
// stands in for the engine at a given speed (ns per record; the first argument). Prints how long the pushes
// took (what the GPU waits for) and how long the queue needed to drain after the last one.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>
#include "sinks.h"
using reuselens::RlRecord;
struct Slow : rlc::RecordSink {
  double ns_per_record;
  explicit Slow(double n) : ns_per_record(n) {}
  const char* name() const override { return "slow"; }
  void add_allocation(uint64_t, uint64_t) override {}
  void free_allocation(uint64_t) override {}
  void begin_launch(const rlc::LaunchMeta&) override {}
  void consume(const RlRecord* r, size_t n) override {
    volatile uint64_t s = 0;
    for (size_t i = 0; i < n; i += 16) s += r[i].pc;
    std::this_thread::sleep_for(std::chrono::nanoseconds(uint64_t(ns_per_record * n)));
  }
  void end_launch(bool) override {}
  bool finish(const std::string&, std::string* e) override {
    *e = "";
    return true;
  }
};
int main(int argc, char** argv) {
  size_t batch = 8u << 20, total = 256u << 20;
  double engine_ns = argc > 1 ? atof(argv[1]) : 300;  // engine speed: ns per record (8 workers ~ 100-300)
  unsigned copy_threads = argc > 2 ? (unsigned)atoi(argv[2]) : 1;
  auto sink = rlc::make_queued_sink(std::make_unique<Slow>(engine_ns), 1ull << 30, copy_threads);
  std::vector<RlRecord> buf(batch / sizeof(RlRecord));
  for (auto& r : buf) {
    std::memset(&r, 1, sizeof r);
  }
  double producer = 0;
  for (size_t done = 0; done < total; done += batch) {
    auto t0 = std::chrono::steady_clock::now();
    sink->consume(buf.data(), buf.size());
    producer += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::this_thread::sleep_for(std::chrono::microseconds(500));  // the GPU refilling the buffer
  }
  std::string err;
  auto t0 = std::chrono::steady_clock::now();
  sink->finish("/x", &err);
  double tail = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("drain-side copy: %.1f ms for %zu MiB (%.2f GB/s); queue drained %.0f ms later\n", producer * 1e3,
              total >> 20, total / producer / 1e9, tail * 1e3);
}
