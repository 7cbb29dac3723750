// The collector's host side of online analysis, without a GPU or an app: a packed record stream (as the device
// patch writes it; benchmarks/pipeline.py makes one from a recorded launch slice) handed buffer by buffer to the
// engine queue (queued_sink.cpp), whose copy threads unpack it into the ring, while the collector's own engine sink
// (engine_sink.cpp, make_engine_sink: the workers and settings the REUSELENS_* variables give it, as in an app)
// analyses the ring. What a record-heavy app waits for when the engine is its bound, measured where the GPU and the
// app cannot add their noise.
//   pipeline STREAM GRID BLOCK DYNAMIC_SHARED COPY_THREADS LAUNCHES ALLOCATIONS RUN_DIR
// STREAM: a file of 32-byte slots; GRID, BLOCK: x sizes of the launch; LAUNCHES: the stream replayed as that many
// launches of one kernel, one after another (the first finds the shadow empty, the others warm); ALLOCATIONS:
// base:size,... in bytes; RUN_DIR: where the engine sink writes analysis.json at the end, as in a run directory.
// Prints the queue's and the engine's notes per launch (the engine's M records/s on its own clock), the engine's
// steps over the run, then the whole pipeline's wall seconds from the first buffer handed over to the queue's last
// record analysed.
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

#include "reuselens/packed_records.h"
#include "sinks.h"

using reuselens::RlSlot;

namespace {

constexpr size_t kBufferBytes = 8u << 20;  // the collector's default trace buffer

struct Buffer {
  size_t first = 0, slots = 0;  // in the stream
  std::vector<const RlSlot*> starts;
};

// The stream cut into buffers at record bounds, each record's first slot found by the walk the drain's PC resolution
// makes (PackedCursor), so that the queue does not walk the buffer again (consume_walked). A buffer's records fit in
// kBufferBytes; the cursor steps over padding, so a padding run after a buffer's last record stays in that buffer
// (the device pads where a record would cross its own buffer's end: patch.cu, take_ticket).
bool cut(const std::vector<RlSlot>& stream, std::vector<Buffer>& out) {
  const size_t per_buffer = kBufferBytes / sizeof(RlSlot);
  reuselens::PackedCursor cursor(stream.data(), stream.size());
  Buffer b;
  for (const RlSlot* r = cursor.next(); r != nullptr; r = cursor.next()) {
    const size_t at = size_t(r - stream.data());
    if (at + reuselens::packed_slots(*r) - b.first > per_buffer) {
      b.slots = at - b.first;
      out.push_back(std::move(b));
      b = Buffer{};
      b.first = at;
    }
    b.starts.push_back(r);
  }
  if (cursor.malformed()) return false;
  b.slots = stream.size() - b.first;
  if (b.slots) out.push_back(std::move(b));
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 9) {
    std::fprintf(stderr,
                 "usage: pipeline STREAM GRID BLOCK DYNAMIC_SHARED COPY_THREADS LAUNCHES ALLOCATIONS RUN_DIR\n");
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
  const unsigned copy_threads = unsigned(std::atoi(argv[5]));
  const int launches = std::atoi(argv[6]);
  std::unique_ptr<rlc::RecordSink> engine = rlc::make_engine_sink();
  if (!engine) {
    std::fprintf(stderr,
                 "pipeline: no engine sink (REUSELENS_ONLINE_ANALYSIS=0, or the engine refused its settings)\n");
    return 1;
  }
  auto sink = rlc::make_queued_sink(std::move(engine), 1ull << 30, copy_threads, true);
  std::stringstream allocations(argv[7]);
  for (std::string item; std::getline(allocations, item, ',');) {
    const size_t colon = item.find(':');
    if (colon == std::string::npos) continue;
    sink->add_allocation(std::strtoull(item.c_str(), nullptr, 0), std::strtoull(item.c_str() + colon + 1, nullptr, 0));
  }
  uint64_t records = 0;
  for (const Buffer& b : buffers) records += b.starts.size();
  std::printf("stream: %zu slots (%.1f bytes a record), %llu records, %zu buffers; %u copy threads\n", stream.size(),
              double(stream.size() * sizeof(RlSlot)) / double(records), (unsigned long long)records, buffers.size(),
              copy_threads);
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
  const bool ok = sink->finish(argv[8], &err);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%s\n", sink->finish_note.c_str());
  std::printf("pipeline: %d launches, %.3f s, %.2f M records/s end to end\n", launches, wall,
              double(records) * launches / wall / 1e6);
  if (!ok) std::fprintf(stderr, "pipeline: %s\n", err.c_str());
  return ok ? 0 : 1;
}
