// Checks make_queued_sink (collector/native/src/queued_sink.cpp) without a GPU: events reach the wrapped sink
// in order and on another thread, records are copied (the caller may reuse its buffer at once), the queue
// bound makes the producer wait, and the wrapped sink's errors surface at end_launch / finish.
// Built and run by tests/collector/test_queued_sink.py. Prints "ok" and exits 0, or names the failed check.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "sinks.h"

using rlc::LaunchMeta;
using rlc::RecordSink;
using reuselens::RlRecord;

#define EXPECT(cond)                                              \
  do {                                                            \
    if (!(cond)) {                                                \
      std::printf("failed: %s (line %d)\n", #cond, __LINE__);     \
      return 1;                                                   \
    }                                                             \
  } while (0)

struct Recorder : RecordSink {
  std::mutex mu;
  std::vector<std::string> events;
  std::thread::id consume_thread;
  std::atomic<bool> hold{false};
  std::atomic<int> consumed{0};
  const char* name() const override { return "recorder"; }
  void note(const std::string& e) {
    std::lock_guard<std::mutex> g(mu);
    events.push_back(e);
  }
  void add_allocation(uint64_t a, uint64_t s) override { note("alloc " + std::to_string(a) + " " + std::to_string(s)); }
  void free_allocation(uint64_t a) override { note("free " + std::to_string(a)); }
  void begin_launch(const LaunchMeta& m) override { note("begin " + std::to_string(m.id) + " " + m.kernel); }
  void consume(const RlRecord* r, size_t n) override {
    while (hold) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::string e = "records";
    for (size_t i = 0; i < n; ++i) e += " " + std::to_string(r[i].pc);
    note(e);
    consume_thread = std::this_thread::get_id();
    consumed += 1;
  }
  void end_launch(bool complete) override {
    note(std::string("end ") + (complete ? "complete" : "partial"));
    if (!complete) error = "launch was partial";
  }
  bool finish(const std::string& dir, std::string* err) override {
    note("finish " + dir);
    *err = "";
    return true;
  }
};

int main() {
  auto owned = std::make_unique<Recorder>();
  Recorder* inner = owned.get();
  auto sink = rlc::make_queued_sink(std::move(owned), 2 * sizeof(RlRecord));  // room for two records
  EXPECT(std::string(sink->name()) == "recorder");

  RlRecord buf[2];
  std::memset(buf, 0, sizeof buf);
  LaunchMeta meta;
  meta.id = 7;
  meta.kernel = "_Z1kv";
  sink->add_allocation(4096, 256);
  sink->begin_launch(meta);
  buf[0].pc = 16;
  buf[1].pc = 32;
  sink->consume(buf, 2);
  buf[0].pc = 999;  // the caller reuses its buffer at once: the sink must have copied it
  buf[1].pc = 999;

  // The bound: the next two records do not fit while the wrapped sink holds the first batch.
  inner->hold = true;
  buf[0].pc = 48;
  std::atomic<bool> returned{false};
  std::thread producer([&] {
    sink->consume(buf, 1);
    sink->consume(buf, 1);
    sink->consume(buf, 1);  // waits: the first batch (2 records) plus these exceed 2 records
    returned = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT(!returned);
  inner->hold = false;
  producer.join();
  EXPECT(returned);

  sink->end_launch(false);
  sink->free_allocation(4096);
  std::string err;
  bool ok = sink->finish("/run", &err);
  EXPECT(inner->consumed == 4);
  EXPECT(inner->consume_thread != std::this_thread::get_id());
  const std::vector<std::string> want = {"alloc 4096 256", "begin 7 _Z1kv", "records 16 32", "records 48",
                                         "records 48", "records 48", "end partial", "free 4096", "finish /run"};
  EXPECT(inner->events == want);
  // the wrapped sink's error, raised while its thread applied end_launch, reaches the caller: at the next
  // end_launch, or (here, nothing came after) from finish
  EXPECT(!ok && err.find("launch was partial") != std::string::npos);
  std::printf("ok\n");
  return 0;
}
