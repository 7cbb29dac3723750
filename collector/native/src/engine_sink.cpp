// The online analysis engine (analyzer/engine) as a record sink: records are analysed while the
// application runs and the engine's JSON is written to RUN/analysis.json at exit.
#include "sinks.h"

#ifdef REUSELENS_WITH_ENGINE
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "json.h"
#include "reuselens/engine.h"
#include "support.h"

namespace rlc {
namespace {

constexpr char kObjectTouchesFile[] = "object_touches.json";  // docs/memory.md, "Object touches"

// Where the engine spent the run's consume() time, per step (docs/engine.md, "Determinism and parallelism"): the
// critical path (per batch the slowest worker, summed) and all workers' CPU seconds. Their ratio against the wall
// time tells a step that waits for one busy owner from one that simply has much to do.
std::string steps_note(const reuselens::EngineStats& s) {
  static const char* const kSteps[5] = {"ids", "new PCs", "distributions and routing", "blocks", "global shadow"};
  std::string note = "engine steps, slowest worker / all workers' CPU:";
  char part[160];
  for (int i = 0; i < 5; ++i) {
    snprintf(part, sizeof part, "%s %s %.3f / %.3f s", i ? ";" : "", kSteps[i], s.phase_seconds[i],
             s.phase_cpu_seconds[i]);
    note += part;
  }
  snprintf(part, sizeof part, "; consume wall %.3f s; %llu records as shadow segments; %llu batches by wide units",
           s.consume_seconds, static_cast<unsigned long long>(s.segment_records),
           static_cast<unsigned long long>(s.wide_unit_batches));
  return note + part;
}

class EngineSink : public RecordSink {
 public:
  explicit EngineSink(const reuselens::EngineConfig& config) : engine_(config) {}
  const char* name() const override { return "engine"; }

  void add_allocation(uint64_t address, uint64_t size) override {
    guard([&] { engine_.add_allocation(address, size); });
  }
  void free_allocation(uint64_t address) override {
    guard([&] { engine_.free_allocation(address); });
  }
  void begin_launch(const LaunchMeta& m) override {
    reuselens::LaunchInfo info;
    info.launch_id = m.id;
    info.kernel_function_id = m.function_id;
    std::copy(m.grid, m.grid + 3, info.grid);
    std::copy(m.block, m.block + 3, info.block);
    info.dynamic_shared_bytes = m.dynamic_shared_bytes > 0 ? (uint32_t)m.dynamic_shared_bytes : 0;
    open_ = guard([&] { engine_.begin_launch(info); });
    launch_id_ = m.id;
    const reuselens::EngineStats s = engine_.stats();
    consume_s0_ = s.consume_seconds;
    records0_ = s.records;
  }
  void consume(const reuselens::RlSlot* slots, size_t n) override {
    if (open_) open_ = guard([&] { engine_.consume_packed(slots, n); });
  }
  // Records the queue unpacked: consume_packed's serial walk over each record's form (13-16 ns a record from
  // memory on the development machine, on the consuming thread while the workers wait) would find them all full.
  void consume_full(const reuselens::RlRecord* records, size_t n) override {
    if (open_) open_ = guard([&] { engine_.consume(records, n); });
  }
  void end_launch(bool complete) override {
    if (open_) {
      guard([&] { engine_.end_launch(complete); });
      // The engine's own time for this launch's records (behind the queue this is not the drain's "sinks" time,
      // which is the copy plus the wait for queue space, i.e. for the engine to finish records queued earlier).
      const reuselens::EngineStats s = engine_.stats();
      char note[160];
      const double secs = s.consume_seconds - consume_s0_;
      const uint64_t n = s.records - records0_;
      snprintf(note, sizeof note, "engine: launch %llu analysed, %llu records in %.3f s (%.2f M records/s)",
               (unsigned long long)launch_id_, (unsigned long long)n, secs, secs > 0 ? n / secs / 1e6 : 0.0);
      launch_note = note;
    }
    open_ = false;
  }
  bool finish(const std::string& run_dir, std::string* err) override {
    if (broken_) {
      *err = "online analysis stopped: " + first_error_ + "; replay the traces with `reuselens analyze`";
      return false;
    }
    std::string text, touches;
    if (!guard([&] {
          text = engine_.to_json();
          touches = engine_.object_touches_json();
        })) {
      *err = first_error_;
      return false;
    }
    finish_note = steps_note(engine_.stats());
    return write_file_atomic(run_dir + "/analysis.json", text, err) &&
           write_file_atomic(run_dir + "/" + kObjectTouchesFile, touches, err);
  }

 private:
  template <typename F>
  bool guard(F&& f) {
    if (broken_) return false;
    try {
      f();
      return true;
    } catch (const std::exception& e) {
      broken_ = true;
      first_error_ = e.what();
      error = std::string("analysis engine: ") + e.what();
      return false;
    }
  }
  reuselens::Engine engine_;
  bool open_ = false;
  bool broken_ = false;
  uint64_t launch_id_ = 0, records0_ = 0;
  double consume_s0_ = 0;
  std::string first_error_;
};

}  // namespace

std::unique_ptr<RecordSink> make_engine_sink() {
  const char* off = getenv("REUSELENS_ONLINE_ANALYSIS");
  if (off && off[0] == '0') return nullptr;
  reuselens::EngineConfig config;
  unsigned hw = std::thread::hardware_concurrency();
  // Three quarters of the cores: the rest go to the drain thread, the copy threads (config.cpp) and the app.
  // On the 16-core H200 host, 12 workers beat 8 and 15 (benchmarks/results/h200-2026-12-02-s9, call 2:
  // mergeSort 12.0 / 8.1 / 10.0 s, gemm 9.7 / 7.5 / 8.3 s, `profile --no-analyze`).
  config.workers = std::clamp(hw * 3 / 4, 1u, 16u);
  if (const char* w = getenv("REUSELENS_ENGINE_WORKERS")) config.workers = (unsigned)std::max(1, atoi(w));
  if (const char* b = getenv("REUSELENS_SHADOW_BUDGET_BYTES")) config.shadow_budget_bytes = strtoull(b, nullptr, 10);
  if (const char* n = getenv("REUSELENS_ENGINE_NICE")) config.worker_nice = std::clamp(atoi(n), 0, 19);
  // One result entry per launch configuration instead of per kernel (`reuselens profile --per-configuration`).
  if (const char* s = getenv("REUSELENS_SPLIT_CONFIGURATIONS")) config.split_configurations = s[0] == '1';
  // Value mode (`reuselens profile --values`): records come with value companions (config.cpp, Config::values).
  config.values = getenv_str("REUSELENS_VALUES") == "1" && getenv_str("REUSELENS_OBJECT_LEVEL") != "1";
  config.value_approx = values_approx_from_env();
  try {
    return std::make_unique<EngineSink>(config);
  } catch (const std::exception&) {
    return nullptr;
  }
}

}  // namespace rlc

#else

namespace rlc {
std::unique_ptr<RecordSink> make_engine_sink() { return nullptr; }
}  // namespace rlc

#endif
