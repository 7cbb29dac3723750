// The drain thread's side of the engine queue, without a GPU: what it does with each buffer the GPU fills
// (collector/native/src/drain.cpp): the PCs of its packed records resolved (pc_ranges.cpp), then the buffer handed
// to the engine queue (queued_sink.cpp), whose copy threads unpack the records into the ring, while a consumer
// stands in for the engine at a given speed. 256 MiB of packed records (broadcasts: two slots each, SHOC BFS's
// commonest form) in 8 MiB buffers, each written afresh before it is drained (as the GPU does), 0.5 ms apart,
// after as many untimed buffers as fill the 1 GiB ring once (RING warm), or from a fresh ring, as a run starts
// (RING cold: what a short app pays, its first lap's page faults).
//   queue_drain ENGINE_NS COPY_THREADS WALK [RING]   (WALK: two = resolve, then the queue finds the records again;
//                                                     one = the records found by the resolving walk, consume_walked)
// Prints the drain thread's seconds (resolving, handing over), per record, how long the queue needed to empty after
// the last buffer, and the queue's own note (waiting for space, copying). The buffers are written just before their
// walk, so they are in the CPU's cache, which a buffer the GPU wrote over PCIe may not be: walks cost more there.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "pc_ranges.h"
#include "sinks.h"

using reuselens::RlRecord;
using reuselens::RlSlot;

namespace {

struct Engine : rlc::RecordSink {
  double ns_per_record;
  explicit Engine(double n) : ns_per_record(n) {}
  const char* name() const override { return "engine stand-in"; }
  void begin_launch(const rlc::LaunchMeta&) override {}
  void consume(const RlSlot* slots, size_t n) override {
    volatile uint64_t s = 0;
    for (size_t i = 0; i < n; i += 16 * RL_FULL_SLOTS) s += slots[i].w[2];  // some of the records read
    std::this_thread::sleep_for(std::chrono::nanoseconds(uint64_t(ns_per_record * n / RL_FULL_SLOTS)));
  }
  void end_launch(bool) override {}
};

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// A buffer as the GPU leaves it: broadcast records of one kernel, their PCs not resolved yet.
void fill(std::vector<RlSlot>& buf, uint64_t first) {
  for (size_t i = 0; i + 1 < buf.size(); i += 2) {
    const uint64_t k = first + i / 2;
    RlSlot& head = buf[i];
    head.w[0] = reuselens::RL_REC_MEM | uint64_t(reuselens::RL_FORM_STRIDED) << RL_FORM_SHIFT |
                uint64_t(reuselens::RL_SPACE_GLOBAL) << 8 | uint64_t(4) << 32;
    head.w[1] = uint64_t(0xffffffffu) << 32 | RL_UNRESOLVED_FUNCTION;
    head.w[2] = 0x10000 + 16 * (k % 40);
    head.w[3] = k / 1024;
    buf[i + 1] = RlSlot{{0x7f0000000000ull + 4 * (k % (1 << 20)), 0, 0, 32}};
  }
}

}  // namespace

int main(int argc, char** argv) {
  const double engine_ns = argc > 1 ? atof(argv[1]) : 300;
  const unsigned copy_threads = argc > 2 ? unsigned(atoi(argv[2])) : 4;
  const std::string walk = argc > 3 ? argv[3] : "one";
  if (walk != "one" && walk != "two") {
    std::fprintf(stderr, "queue_drain: WALK is one or two, not %s\n", walk.c_str());
    return 2;
  }
  const bool one_walk = walk == "one";
  const std::string ring = argc > 4 ? argv[4] : "warm";
  if (ring != "warm" && ring != "cold") {
    std::fprintf(stderr, "queue_drain: RING is warm or cold, not %s\n", ring.c_str());
    return 2;
  }
  const size_t buffer_slots = (8u << 20) / sizeof(RlSlot), total = 256u << 20;
  auto sink = rlc::make_queued_sink(std::make_unique<Engine>(engine_ns), 1ull << 30, copy_threads, true);
  const std::vector<rlc::Range> ranges{{0x10000, 0x20000, 1, 0x100}};
  std::vector<RlSlot> buf(buffer_slots);
  std::vector<const RlSlot*> starts;
  // Untimed first: buffers enough to fill the whole ring once, so that its pages are faulted in (the collector's
  // ring stays mapped for the run; a run's first lap is a cost of its own, not of the walk).
  for (int warm = 0; ring == "warm" && warm < 32; ++warm) {
    fill(buf, 0);
    rlc::PackedCounts counts;
    rlc::resolve_records(ranges, buf.data(), buf.size(), &counts, &starts);
    sink->consume_walked(buf.data(), buf.size(), starts, counts.packed);
  }
  // The stand-in engine catches up before the clock starts (a slow one is still behind by the whole ring): the
  // hand-over is then timed from an empty queue, not from the warm-up's backlog.
  if (ring == "warm")
    std::this_thread::sleep_for(std::chrono::nanoseconds(uint64_t(engine_ns * 32 * buffer_slots / 2)) +
                                std::chrono::milliseconds(50));
  sink->begin_launch(rlc::LaunchMeta{});
  double resolving = 0, handing = 0;
  uint64_t records = 0;
  for (size_t done = 0; done < total; done += buffer_slots * sizeof(RlSlot)) {
    fill(buf, records);
    const auto t0 = std::chrono::steady_clock::now();
    rlc::PackedCounts counts;
    rlc::resolve_records(ranges, buf.data(), buf.size(), &counts, one_walk ? &starts : nullptr);
    const auto t1 = std::chrono::steady_clock::now();
    if (one_walk)
      sink->consume_walked(buf.data(), buf.size(), starts, counts.packed);
    else
      sink->consume(buf.data(), buf.size());
    handing += seconds_since(t1);
    resolving += std::chrono::duration<double>(t1 - t0).count();
    records += counts.records;
    std::this_thread::sleep_for(std::chrono::microseconds(500));  // the GPU filling the next buffer
  }
  sink->end_launch(true);
  std::string err;
  const auto t0 = std::chrono::steady_clock::now();
  sink->finish("/x", &err);
  std::printf(
      "drain thread %.1f ms (resolving %.1f, handing over %.1f), %.1f ns a record; queue empty %.0f ms later; %s\n",
      (resolving + handing) * 1e3, resolving * 1e3, handing * 1e3, (resolving + handing) * 1e9 / records,
      seconds_since(t0) * 1e3, sink->launch_note.c_str());
  return err.empty() ? 0 : 1;
}
