// The drain thread: while an instrumented launch runs, it takes each full buffer generation from pinned host
// memory (device_state.h describes the protocol), resolves its PCs, hands it to the sinks and gives the buffer
// back to the GPU; at the kernel's end it drains the last, partial generation. It also tells the sinks where each
// launch begins and ends, so that they see every launch's records between the two.
//
// The last generation is drained while the app goes on (session 29): LAUNCH_END waits for the kernel, not for the
// drain, and the next launch's records start in a fresh generation, so that its kernel can run while the drain
// thread finishes the last one's. Generations are numbered on through a context's launches; the buffer
// protocol's flow control (host_allowed) keeps a launch from writing over records not yet drained. Launches are
// drained in the order they were published.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <sanitizer.h>

#include "pc_ranges.h"
#include "run_state.h"
#include "sinks.h"

namespace rlc {

// What LAUNCH_END learnt of a kernel's end, read back from the device state (which the next launch overwrites).
struct KernelEnd {
  SanitizerResult sync = SANITIZER_SUCCESS;  // sanitizerStreamSynchronize
  SanitizerResult copy = SANITIZER_SUCCESS;  // the device state's copy back
  bool faulted = false;
  uint64_t end_ticket = 0;              // tickets handed out by the end (the launch's start included), when not faulted
  uint64_t total = 0, committed = 0;    // the launch's own slots reserved / committed, when not faulted
  uint64_t waits = 0, polls = 0;        // tickets that waited for the host; its flag's reads meanwhile
  uint32_t smem = 0;                    // largest SET_SHARED_MEMORY_SIZE seen
  double sync_s = 0, drain_wait_s = 0;  // the app's waits: for the kernel, then for the last records' drain
};

// A sink's words at a launch's end (RecordSink::launch_note and error), taken on the drain thread.
struct SinkReport {
  std::string sink, note, error;
};

// The launch whose records are being drained.
struct DrainJob {
  ContextState* cs = nullptr;
  Sanitizer_LaunchHandle launch = nullptr;
  CUfunction function = nullptr;
  CUstream stream = nullptr;
  Sanitizer_StreamHandle hstream = nullptr;
  bool finalizing = false;  // a thread is waiting for this launch's kernel and records
  size_t entry = 0;         // index in RunState::launches
  LaunchMeta meta;          // told to the sinks when the drain thread takes the job up
  uint64_t base_gen = 0;    // the launch's first generation: its tickets start at base_gen * capacity
  uint64_t next_gen = 0;
  uint64_t drained = 0;  // slots
  uint64_t records = 0;  // records among them (packed_records.h), value companions included
  uint64_t flushes = 0;
  bool ended = false;               // kernel finished (or faulted)
  KernelEnd end;                    // set before `ended`
  bool done = false;                // drain thread finished with this job (the sinks told of its end)
  bool complete = false;            // when done: every record drained and delivered
  std::vector<SinkReport> reports;  // when done: what the sinks said at its end
  uint64_t unresolved = 0;
  uint64_t companions = 0;            // value mode: value companions among `records` (not records of their own)
  bool malformed = false;             // a generation held a record the host could not read (a device patch bug)
  double resolve_s = 0, sinks_s = 0;  // drain-thread time in PC resolution / in the sinks (the engine queue's copy)
  // The launch's end as the drain thread saw it: when finish() told it (ended_at), when the drain thread took it up
  // (taken_at), and how long the last generation then took (last_s), so that the wait at the end splits into the
  // thread's wake-up and its work (docs/collector.md, "Where a short app's time goes").
  double ended_at = 0, taken_at = 0, last_s = 0;
  double done_at = 0;  // when the drain thread was done with it (the launch's `seconds` end there, not at settling)
};

class Drainer {
 public:
  explicit Drainer(std::vector<std::unique_ptr<RecordSink>>& sinks) : sinks_(sinks) {}
  void start();
  DrainJob* current();          // the job whose kernel runs (published, not yet ended), or nullptr
  void publish(DrainJob* job);  // queued after the jobs before it; it becomes current()
  // The kernel has ended (`end` says how): the drain thread drains its last generation when it gets there. Does
  // not wait for that (wait_done does).
  void end(DrainJob* job, const KernelEnd& end);
  // Waits until the drain thread is done with `job` (ended), and forgets it; returns the seconds waited.
  double wait_done(DrainJob* job);
  bool done(DrainJob* job);  // the drain thread is done with it
  void set_ranges(std::vector<Range> ranges);
  void stop();  // ends and joins the thread, once every job published is done

 private:
  void loop();
  void drain_job(DrainJob& job, std::unique_lock<std::mutex>& g);
  void drain_generation(DrainJob& job, const std::vector<Range>& ranges, uint64_t gen, uint64_t count);
  void close_job(DrainJob& job);

  std::vector<std::unique_ptr<RecordSink>>& sinks_;
  std::shared_ptr<const std::vector<Range>> ranges_ = std::make_shared<const std::vector<Range>>();  // mu_
  std::vector<const reuselens::RlSlot*> starts_;  // the generation being drained: its records' first slots
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<DrainJob*> jobs_;   // published, not yet done, in order; the drain thread works on the first
  DrainJob* current_ = nullptr;  // the job whose kernel runs
  bool stop_ = false;
};

}  // namespace rlc
