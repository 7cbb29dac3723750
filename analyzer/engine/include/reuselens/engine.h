// ReuseLens analysis engine: Topological Distance + PCDepGraph (cuVein paper, sections 3.1-3.2) from warp records.
//
// One engine, two callers: the collector's host drain thread (online analysis, no trace on disk) and the
// pybind11 replay module reuselens.analyzer._engine (recorded traces). Both feed RlRecord (trace_format.h) and get the
// same JSON back (docs/report-format.md, "engine part"; docs/engine.md explains every rule).
//
// Call protocol (one caller thread; the engine may use worker threads internally):
//
//   reuselens::Engine engine({/*workers=*/8, /*shadow_budget_bytes=*/8ull << 30});
//   engine.add_allocation(ptr, bytes);           // any time between launches (cudaMalloc seen)
//   engine.begin_launch({launch_id, kernel_function_id, {gx,gy,gz}, {bx,by,bz}, dyn_smem});
//   engine.consume(records, n);                  // as many batches as drained, in drain order
//   engine.end_launch(/*complete=*/true);        // false: the launch faulted / was cut short
//   engine.free_allocation(ptr);                 // cudaFree seen (between launches)
//   std::string json = engine.to_json();         // any time no launch is open
//
// Results depend only on the order of the records, never on the number of workers.
// Every value given is checked before it is used: allocation ranges, launch block sizes, each record's type,
// space, size, warp and block index (a lane's thread index, warp * 32 + lane, then always fits the shadow).
// Errors (budget exceeded, protocol misuse, a malformed record or launch) throw EngineError with a one-line
// message; an error thrown by consume() leaves the engine unusable: every later call throws EngineError too,
// so it must be discarded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "reuselens/packed_records.h"
#include "reuselens/trace_format.h"

namespace reuselens {

#define RL_ENGINE_JSON_VERSION 2

class EngineError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct EngineConfig {
  unsigned workers = 1;                       // analysis threads incl. the caller's; 0 = 1, at most 64
  uint64_t shadow_budget_bytes = 8ull << 30;  // committed shadow memory allowed before EngineError
  // false: one result entry per kernel, whatever the grids of its launches; true: one per kernel and launch
  // configuration (grid, block, dynamic shared memory), as results of version 1 had.
  bool split_configurations = false;
  // A batch of fewer records runs all workers' shares on the consuming thread instead of handing them to the
  // workers: the same results, without the hand-over a short launch cannot repay (real applications have
  // hundreds of launches of a few hundred to a few thousand records). 0: never.
  uint64_t inline_batch_records = 2048;
  // Value mode: MEM records flagged RL_FLAG_VALUES are followed by their value companion, and padding records may
  // appear anywhere (docs/trace-format.md, "Value companions"); the results gain value redundancy (docs/engine.md,
  // "Value redundancy"). Without it, a companion is a malformed record.
  bool values = false;
  // Value mode's approximate redundancy (LoadSpy, seeds/001 section 3; docs/engine.md "Value redundancy"): a load
  // whose value differs from its location's last loaded one by at most this share of the larger magnitude, read as
  // an IEEE float of the access's width (4 or 8 bytes), counts in its edge's approx_value. 0: not counted.
  double value_approx = 0.0;
  // Online (inside the app, beside its threads and the collector's): the worker threads lower their scheduling
  // priority by this much (nice), so that a thread of the app or the drain that wakes up gets a core at once
  // instead of waiting for a worker's time slice. 0: unchanged (replays, where nothing else runs).
  int worker_nice = 0;
};

struct LaunchInfo {
  uint64_t launch_id = 0;           // run.json launches[].id
  uint32_t kernel_function_id = 0;  // run.json functions[].id of the kernel
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint32_t dynamic_shared_bytes = 0;
};

struct EngineStats {
  uint64_t records = 0;        // records consumed (all types)
  uint64_t lane_accesses = 0;  // active lanes of MEM records
  uint64_t shadow_bytes = 0;   // committed shadow memory now
  uint64_t peak_shadow_bytes = 0;
  uint64_t segment_records = 0;  // global records replayed as one shadow segment (docs/engine.md, "Shadow memory")
  // batches whose granules inside allocations were owned by units wider than a chunk (docs/engine.md,
  // "Determinism and parallelism")
  uint64_t wide_unit_batches = 0;
  // Where consume() spends its time, per step of a batch (docs/engine.md, "Determinism and parallelism"): phase 1
  // (ids), the serial insertion of new PCs, phase 2 (distributions, routing), 3 (blocks), 4 (global shadow).
  // phase_seconds: per batch the slowest worker's seconds in the step, summed (the step's critical path);
  // phase_cpu_seconds: all workers' seconds in the step; consume_seconds: wall time in consume(). What
  // consume_seconds has beyond the sum of phase_seconds is hand-over between steps and workers idling while a
  // slower one finishes another step of the same parallel run.
  double phase_seconds[5] = {0, 0, 0, 0, 0};
  double phase_cpu_seconds[5] = {0, 0, 0, 0, 0};
  double consume_seconds = 0;
};

class Engine {
 public:
  explicit Engine(const EngineConfig& config = EngineConfig());
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Device allocations: global accesses inside one get a direct-mapped shadow; any other global address is
  // still tracked, through a sparse page table (so are allocations too large to map directly, over 1 TiB).
  // Overlapping allocations, ones that run past the end of the address space and unknown frees throw
  // EngineError.
  void add_allocation(uint64_t address, uint64_t size);
  void free_allocation(uint64_t address);

  void begin_launch(const LaunchInfo& launch);
  // Records of the open launch, in drain order. BLOCK_EXIT: warp, block and active_mask = the exiting lanes
  // (0 = the whole warp); a block's shared/local state is dropped once all its threads exited (else at
  // end_launch). BARRIER: active_mask is not used.
  void consume(const RlRecord* records, size_t count);
  // The same records as a packed stream (packed_records.h: the collector's buffers), `count` slots that end on a
  // record's end. A record that runs past the end, or of a form this build does not know, throws EngineError.
  void consume_packed(const RlSlot* slots, size_t count);
  void end_launch(bool complete = true);

  // The engine part of report.json, version RL_ENGINE_JSON_VERSION (docs/report-format.md).
  std::string to_json() const;
  // Which allocations each finished launch read and wrote (format reuselens-object-touches, docs/memory.md).
  std::string object_touches_json() const;
  EngineStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace reuselens
