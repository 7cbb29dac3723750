// Where drained records go. The drain thread calls consume() in buffer order for the launch in flight;
// allocation events arrive between launches on the application's thread (launches are serialised, see
// launch_events.cpp), so a sink sees every event in program order.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include <vector>

#include "reuselens/packed_records.h"

namespace rlc {

struct LaunchMeta {
  uint64_t id = 0;
  uint32_t function_id = 0;
  std::string kernel;  // mangled
  std::string module;  // sha256
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint32_t cluster[3] = {0, 0, 0};
  int64_t dynamic_shared_bytes = -1;  // -1: unknown
};

class RecordSink {
 public:
  virtual ~RecordSink() = default;
  virtual const char* name() const = 0;
  virtual void add_allocation(uint64_t /*address*/, uint64_t /*size*/) {}
  virtual void free_allocation(uint64_t /*address*/) {}
  virtual void begin_launch(const LaunchMeta& meta) = 0;
  // `n` slots of packed records (reuselens/packed_records.h), whole records, PCs resolved. An array of full
  // records is such a stream too (RL_FULL_SLOTS slots each).
  virtual void consume(const reuselens::RlSlot* slots, size_t n) = 0;
  // The same stream with each record's first slot already found (`starts`, in order, PADDING left out; `packed`:
  // some record is in a form other than FULL): the drain walks the stream once, to resolve its PCs, and keeps them
  // (pc_ranges.h), so a sink that needs them (the engine queue, to unpack) does not walk it a second time.
  virtual void consume_walked(const reuselens::RlSlot* slots, size_t n,
                              const std::vector<const reuselens::RlSlot*>& /*starts*/, bool /*packed*/) {
    consume(slots, n);
  }
  // `n` full records, known to be full (the engine queue unpacked them): a sink that would otherwise look at each
  // record's form to find where the next one starts may skip that walk.
  virtual void consume_full(const reuselens::RlRecord* records, size_t n) {
    consume(reinterpret_cast<const reuselens::RlSlot*>(records), n * RL_FULL_SLOTS);
  }
  // complete: every record of the launch was delivered.
  virtual void end_launch(bool complete) = 0;
  // At exit: write results into the run directory. Returns false with *error on failure.
  virtual bool finish(const std::string& /*run_dir*/, std::string* /*error*/) { return true; }
  // Non-empty after an I/O or analysis failure.
  std::string error;
  // Where finish() spent its time, for collector.log (empty: nothing to say). Both notes may hold several lines
  // ('\n' between them), each logged as a collector.log line of its own.
  std::string finish_note;
  // What the sink has to say about the launch end_launch() just closed, for its collector.log line (empty:
  // nothing). Taken (cleared) by the caller after each end_launch().
  std::string launch_note;
};

// traces/<launch_id>.rltrace (docs/trace-format.md): the records unpacked, as full records.
class TraceFileSink : public RecordSink {
 public:
  explicit TraceFileSink(std::string run_dir) : dir_(std::move(run_dir)) {}
  ~TraceFileSink() override;
  const char* name() const override { return "traces"; }
  void begin_launch(const LaunchMeta& meta) override;
  void consume(const reuselens::RlSlot* slots, size_t n) override;
  void end_launch(bool complete) override;

 private:
  std::string dir_;
  std::vector<reuselens::RlRecord> unpacked_;  // one write's worth
  FILE* f_ = nullptr;
  uint64_t count_ = 0;
  uint64_t launch_ = 0;
  uint32_t kernel_ = 0;
};

// The online analysis engine (analyzer/engine), when the build has it; nullptr otherwise.
std::unique_ptr<RecordSink> make_engine_sink();

// `inner` on a thread of its own behind a queue of at most `limit_bytes` of records (copied), so that the drain
// thread returns buffers to the GPU without waiting for it; errors surface at the next end_launch or finish.
// `copy_threads` cores share each large copy into the queue (parallel_copy.h); with `unpack`, packed records
// (reuselens/packed_records.h) go into the queue unpacked, so `inner` gets full records.
std::unique_ptr<RecordSink> make_queued_sink(std::unique_ptr<RecordSink> inner, uint64_t limit_bytes,
                                             unsigned copy_threads = 1, bool unpack = false);

}  // namespace rlc
