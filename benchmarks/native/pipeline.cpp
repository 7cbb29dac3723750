// The collector's host side of online analysis, without a GPU or an app: a packed record stream (as the device
// patch writes it; benchmarks/pipeline.py makes one from a recorded launch slice) handed buffer by buffer to the
// engine queue (queued_sink.cpp), whose copy threads unpack it into the ring, while the real engine consumes the
// ring with its workers (analyzer/engine), as engine_sink.cpp runs it. What a record-heavy app waits for when
// the engine is its bound, measured where the GPU and the app cannot add their noise.
//   pipeline STREAM GRID BLOCK DYNAMIC_SHARED WORKERS COPY_THREADS LAUNCHES ALLOCATIONS [RESULTS]
// STREAM: a file of 32-byte slots; GRID, BLOCK: x sizes of the launch; LAUNCHES: the stream replayed as that many
// launches of one kernel, one after another (the first finds the shadow empty, the others warm); ALLOCATIONS:
// base:size,... in bytes; RESULTS: where to write the engine's JSON at the end (what analysis.json would hold).
// Prints per launch the engine's consume seconds and M records/s (its own clock), then the whole pipeline's wall
// seconds from the first buffer handed over to the queue's last record analysed.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "reuselens/engine.h"
#include "reuselens/packed_records.h"
#include "sinks.h"

using reuselens::RlSlot;

namespace {

constexpr size_t kBufferBytes = 8u << 20;  // the collector's default trace buffer

// engine_sink.cpp's consuming side alone: records the queue unpacked go to Engine::consume, packed ones (none, with
// unpacking copy threads) to consume_packed. No run directory.
class EngineOnly : public rlc::RecordSink {
 public:
  explicit EngineOnly(const reuselens::EngineConfig& config) : engine_(config) {}
  const char* name() const override { return "engine"; }
  void add_allocation(uint64_t address, uint64_t size) override { engine_.add_allocation(address, size); }
  void begin_launch(const rlc::LaunchMeta& m) override {
    reuselens::LaunchInfo info;
    info.launch_id = m.id;
    info.kernel_function_id = m.function_id;
    for (int i = 0; i < 3; ++i) info.grid[i] = m.grid[i], info.block[i] = m.block[i];
    info.dynamic_shared_bytes = uint32_t(m.dynamic_shared_bytes > 0 ? m.dynamic_shared_bytes : 0);
    engine_.begin_launch(info);
    before_ = engine_.stats();
  }
  void consume(const RlSlot* slots, size_t n) override { engine_.consume_packed(slots, n); }
  void consume_full(const reuselens::RlRecord* records, size_t n) override { engine_.consume(records, n); }
  // run_dir: here the results file, if any.
  bool finish(const std::string& results, std::string* err) override {
    if (results.empty()) return true;
    std::ofstream out(results, std::ios::binary);
    out << engine_.to_json();
    if (!out) *err = "cannot write " + results;
    return bool(out);
  }
  void end_launch(bool complete) override {
    engine_.end_launch(complete);
    const reuselens::EngineStats s = engine_.stats();
    const double secs = s.consume_seconds - before_.consume_seconds;
    const double records = double(s.records - before_.records);
    char line[320];
    std::snprintf(line, sizeof line,
                  "  launch: %.0f records, engine consume %.3f s (%.2f M records/s); steps, slowest worker / all "
                  "workers' CPU, ms: ids %.1f / %.1f, routing %.1f / %.1f, blocks %.1f / %.1f, global %.1f / %.1f",
                  records, secs, secs > 0 ? records / secs / 1e6 : 0.0,
                  1e3 * (s.phase_seconds[0] - before_.phase_seconds[0]),
                  1e3 * (s.phase_cpu_seconds[0] - before_.phase_cpu_seconds[0]),
                  1e3 * (s.phase_seconds[2] - before_.phase_seconds[2]),
                  1e3 * (s.phase_cpu_seconds[2] - before_.phase_cpu_seconds[2]),
                  1e3 * (s.phase_seconds[3] - before_.phase_seconds[3]),
                  1e3 * (s.phase_cpu_seconds[3] - before_.phase_cpu_seconds[3]),
                  1e3 * (s.phase_seconds[4] - before_.phase_seconds[4]),
                  1e3 * (s.phase_cpu_seconds[4] - before_.phase_cpu_seconds[4]));
    launch_note = line;
  }

 private:
  reuselens::Engine engine_;
  reuselens::EngineStats before_;
};

struct Buffer {
  size_t first = 0, slots = 0;  // in the stream
  std::vector<const RlSlot*> starts;
};

// The stream cut into buffers of at most kBufferBytes at record bounds, each record's first slot found, as the
// drain's resolving walk finds them (the queue then does not walk the buffer again: consume_walked).
bool cut(const std::vector<RlSlot>& stream, std::vector<Buffer>& out) {
  const size_t per_buffer = kBufferBytes / sizeof(RlSlot);
  Buffer b;
  for (size_t at = 0; at < stream.size();) {
    const size_t n = reuselens::packed_record_slots(&stream[at], stream.size() - at);
    if (n == 0) return false;
    if (at + n - b.first > per_buffer) {
      b.slots = at - b.first;
      out.push_back(std::move(b));
      b = Buffer{};
      b.first = at;
    }
    if (reuselens::packed_form(stream[at]) != reuselens::RL_FORM_PADDING) b.starts.push_back(&stream[at]);
    at += n;
  }
  b.slots = stream.size() - b.first;
  if (b.slots) out.push_back(std::move(b));
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 9 && argc != 10) {
    std::fprintf(stderr,
                 "usage: pipeline STREAM GRID BLOCK DYNAMIC_SHARED WORKERS COPY_THREADS LAUNCHES ALLOCATIONS "
                 "[RESULTS]\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "pipeline: cannot read %s\n", argv[1]);
    return 1;
  }
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.empty() || bytes.size() % sizeof(RlSlot) != 0) {
    std::fprintf(stderr, "pipeline: %s is not whole 32-byte slots\n", argv[1]);
    return 1;
  }
  std::vector<RlSlot> stream(bytes.size() / sizeof(RlSlot));
  std::memcpy(stream.data(), bytes.data(), bytes.size());
  std::vector<char>().swap(bytes);
  std::vector<Buffer> buffers;
  if (!cut(stream, buffers)) {
    std::fprintf(stderr, "pipeline: %s holds a malformed record\n", argv[1]);
    return 1;
  }
  rlc::LaunchMeta meta;
  meta.grid[0] = uint32_t(std::strtoul(argv[2], nullptr, 10));
  meta.block[0] = uint32_t(std::strtoul(argv[3], nullptr, 10));
  meta.dynamic_shared_bytes = std::strtoll(argv[4], nullptr, 10);
  reuselens::EngineConfig config;
  config.workers = unsigned(std::atoi(argv[5]));
  const unsigned copy_threads = unsigned(std::atoi(argv[6]));
  const int launches = std::atoi(argv[7]);
  auto sink = rlc::make_queued_sink(std::make_unique<EngineOnly>(config), 1ull << 30, copy_threads, true);
  std::stringstream allocations(argv[8]);
  for (std::string item; std::getline(allocations, item, ',');) {
    const size_t colon = item.find(':');
    if (colon == std::string::npos) continue;
    sink->add_allocation(std::strtoull(item.c_str(), nullptr, 0), std::strtoull(item.c_str() + colon + 1, nullptr, 0));
  }
  uint64_t records = 0;
  for (const Buffer& b : buffers) records += b.starts.size();
  std::printf("stream: %zu slots (%.1f bytes a record), %llu records, %zu buffers; %u workers, %u copy threads\n",
              stream.size(), double(stream.size() * sizeof(RlSlot)) / double(records), (unsigned long long)records,
              buffers.size(), config.workers, copy_threads);
  const auto t0 = std::chrono::steady_clock::now();
  for (int launch = 0; launch < launches; ++launch) {
    meta.id = uint64_t(launch);
    sink->begin_launch(meta);
    for (const Buffer& b : buffers) sink->consume_walked(&stream[b.first], b.slots, b.starts, true);
    sink->end_launch(true);
    // the queue's note of the launch, and the engine's notes of the launches it has analysed so far
    if (!sink->launch_note.empty()) std::printf("%s\n", sink->launch_note.c_str());
    sink->launch_note.clear();
  }
  std::string err;
  const bool ok = sink->finish(argc == 10 ? argv[9] : "", &err);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%s\n", sink->finish_note.c_str());
  std::printf("pipeline: %d launches, %.3f s, %.2f M records/s end to end\n", launches, wall,
              double(records) * launches / wall / 1e6);
  if (!ok) std::fprintf(stderr, "pipeline: %s\n", err.c_str());
  return ok ? 0 : 1;
}
