// Checks TraceFileSink (collector/native/src/sinks.cpp) without a GPU: a packed stream (reuselens/packed_records.h)
// of full records in runs, padding between them, strided and header-only records, over several consume() calls and
// more than one write's worth of packed records, becomes a trace file of exactly the full records, in stream order.
// Built and run by tests/collector/test_trace_sink.py with the run directory as its argument. Prints "ok" and exits
// 0, or names the failed check.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "expect.h"
#include "sinks.h"

using reuselens::RlRecord;
using reuselens::RlSlot;

namespace {

// Record i: full (irregular lanes) unless i % 3 == 2; a barrier (no addresses) when i % 7 == 1, else one stride.
RlRecord record(uint64_t i) {
  RlRecord r;
  std::memset(&r, 0, sizeof r);
  r.type = i % 7 == 1 ? reuselens::RL_REC_BARRIER : reuselens::RL_REC_MEM;
  r.space = 1;
  r.size = 4;
  r.active_mask = i % 5 == 2 ? 0x0000FFFFu : ~0u;
  r.pc = 16 * i;
  r.block = i / 4;
  for (uint32_t lane = 0; lane < 32; ++lane) {
    if (r.type != reuselens::RL_REC_MEM || !((r.active_mask >> lane) & 1u)) continue;
    r.addr[lane] = i % 3 != 2 ? (i * 7919 + lane * lane * 13) : (i << 16) + 4 * lane;
  }
  return r;
}

void pack(std::vector<RlSlot>& out, uint64_t i) {
  const RlRecord r = record(i);
  const auto* whole = reinterpret_cast<const RlSlot*>(&r);
  if (i % 3 != 2) {
    out.insert(out.end(), whole, whole + RL_FULL_SLOTS);
    return;
  }
  RlSlot head = whole[0];
  if (r.type != reuselens::RL_REC_MEM) {
    head.w[0] |= uint64_t(reuselens::RL_FORM_NO_ADDRESSES) << RL_FORM_SHIFT;
    out.push_back(head);
    return;
  }
  head.w[0] |= uint64_t(reuselens::RL_FORM_STRIDED) << RL_FORM_SHIFT;
  out.push_back(head);
  out.push_back(RlSlot{{i << 16, 4, 0, 32}});
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  rlc::TraceFileSink sink(argv[1]);
  rlc::LaunchMeta meta;
  meta.id = 5;
  meta.function_id = 3;
  sink.begin_launch(meta);
  EXPECT(sink.error.empty());
  // Calls of 1, 3, 10 and 15,000 records (more than one write's worth of packed ones), padding after every sixth,
  // inside runs of full records.
  const RlSlot padding{{uint64_t(reuselens::RL_FORM_PADDING) << RL_FORM_SHIFT, 0, 0, 0}};
  uint64_t next = 0;
  for (uint64_t calls : {1, 3, 10, 15000}) {
    std::vector<RlSlot> stream;
    for (uint64_t k = 0; k < calls; ++k, ++next) {
      pack(stream, next);
      if (next % 6 == 0) stream.push_back(padding);
    }
    sink.consume(stream.data(), stream.size());
    EXPECT(sink.error.empty());
  }
  sink.end_launch(true);
  EXPECT(sink.error.empty());

  const std::string path = std::string(argv[1]) + "/traces/5.rltrace";
  FILE* f = std::fopen(path.c_str(), "rb");
  EXPECT(f != nullptr);
  reuselens::RlTraceHeader header;
  EXPECT(std::fread(&header, sizeof header, 1, f) == 1);
  EXPECT(header.record_count == next && header.launch_id == 5 && header.kernel_function_id == 3);
  EXPECT((header.flags & reuselens::RL_FILE_COMPLETE) != 0);
  for (uint64_t i = 0; i < next; ++i) {
    RlRecord got;
    EXPECT(std::fread(&got, sizeof got, 1, f) == 1);
    const RlRecord want = record(i);
    if (std::memcmp(&got, &want, sizeof got) != 0) {
      std::printf("failed: record %llu differs\n", (unsigned long long)i);
      return 1;
    }
  }
  char extra;
  EXPECT(std::fread(&extra, 1, 1, f) == 0);
  std::fclose(f);
  std::printf("ok\n");
  return 0;
}
