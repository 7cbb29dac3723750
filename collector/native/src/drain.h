// The drain thread: while an instrumented launch runs, it takes each full buffer generation from pinned host
// memory (device_state.h describes the protocol), resolves its PCs, hands it to the sinks and gives the buffer
// back to the GPU; at the kernel's end it drains the last, partial generation.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <sanitizer.h>

#include "pc_ranges.h"
#include "run_state.h"
#include "sinks.h"

namespace rlc {

// The launch whose records are being drained.
struct DrainJob {
  ContextState* cs = nullptr;
  Sanitizer_LaunchHandle launch = nullptr;
  CUfunction function = nullptr;
  CUstream stream = nullptr;
  Sanitizer_StreamHandle hstream = nullptr;
  bool finalizing = false;  // a thread is waiting for this launch's kernel and records
  size_t entry = 0;         // index in RunState::launches
  uint64_t next_gen = 0;
  uint64_t drained = 0;  // slots
  uint64_t records = 0;  // records among them (packed_records.h), value companions included
  uint64_t flushes = 0;
  bool ended = false;  // kernel finished (or faulted)
  bool faulted = false;
  uint64_t total = 0;  // slots handed out, valid when ended && !faulted
  bool done = false;   // drain thread finished with this job
  uint64_t unresolved = 0;
  uint64_t companions = 0;            // value mode: value companions among `records` (not records of their own)
  bool malformed = false;             // a generation held a record the host could not read (a device patch bug)
  double resolve_s = 0, sinks_s = 0;  // drain-thread time in PC resolution / in the sinks (the engine queue's copy)
};

class Drainer {
 public:
  explicit Drainer(std::vector<std::unique_ptr<RecordSink>>& sinks) : sinks_(sinks) {}
  void start();
  DrainJob* current();          // the job in flight, or nullptr
  void publish(DrainJob* job);  // the drain thread starts on it
  // The kernel has ended (faulted, or with `total` slots taken): waits until the drain thread is done with it.
  void finish(DrainJob* job, bool faulted, uint64_t total);
  void clear();  // no job in flight
  void set_ranges(std::vector<Range> ranges);
  void stop();  // ends and joins the thread

 private:
  void loop();
  void drain_generation(DrainJob& job, uint64_t gen, uint64_t count);

  std::vector<std::unique_ptr<RecordSink>>& sinks_;
  std::vector<Range> ranges_;                     // replaced only under mu_
  std::vector<const reuselens::RlSlot*> starts_;  // the generation being drained: its records' first slots
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  DrainJob* job_ = nullptr;
  bool stop_ = false;
};

}  // namespace rlc
