// Feeds one pseudo-random trace to engines with 1 and with several workers and checks that they report the
// same kernels (docs/engine.md, "Determinism and parallelism"). Built with ThreadSanitizer by
// tests/engine/test_engine_threads.py, so a data race in the worker pool, the piece hand-out or the routed
// lists fails the test even when the results happen to agree. Prints "same" and exits 0, or says what differs.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "reuselens/engine.h"

using namespace reuselens;

namespace {

constexpr uint64_t kAlloc = 0x7f0000000000ull;

// Warps of 40 blocks interleaved; global (inside and outside the allocation, coalesced, strided and scattered
// over several 1 KiB chunks), shared and local accesses of 1-16 bytes, partial masks, block and warp
// barriers, block exits; PCs keep appearing for the whole trace, so later batches also take the path for
// pieces with new PCs.
std::vector<RlRecord> make_trace(size_t n) {
  std::mt19937_64 rng(7);
  std::vector<RlRecord> recs(n);
  const uint16_t sizes[] = {1, 4, 8, 16};
  for (size_t i = 0; i < n; ++i) {
    RlRecord& r = recs[i];
    std::memset(&r, 0, sizeof r);
    unsigned kind = unsigned(rng() % 40);
    r.type = kind == 0 ? RL_REC_BARRIER : kind == 1 ? RL_REC_BLOCK_EXIT : RL_REC_MEM;
    r.warp = uint16_t(rng() % 4);
    r.block = rng() % 40;
    r.pc = 16 * (rng() % (8 + i / 200));
    r.active_mask = rng() % 4 ? 0xffffffffu : uint32_t(rng());
    if (r.type == RL_REC_BARRIER) {
      r.space = uint8_t(1 + rng() % 2);
      continue;
    }
    if (r.type == RL_REC_BLOCK_EXIT) continue;
    r.space = kind < 24 ? RL_SPACE_GLOBAL : kind < 36 ? RL_SPACE_SHARED : RL_SPACE_LOCAL;
    r.access = uint8_t(1 + rng() % 3);
    r.size = sizes[rng() % 4];
    uint64_t base = (rng() % 3 ? kAlloc : kAlloc + (1 << 24)) + (rng() % 4096) * 4;
    uint64_t stride = r.size * (rng() % 3) + (rng() % 5 == 0 ? 1024 : 0);
    for (int lane = 0; lane < 32; ++lane) {
      r.addr[lane] = r.space == RL_SPACE_GLOBAL ? base + lane * stride : (rng() % 2048) * r.size % 8192;
    }
  }
  return recs;
}

// The trace as the value patch writes it (docs/trace-format.md, "Value companions"): each memory record flagged
// and followed by a companion whose lanes hold values from {0, 1, 2} (atomics none, stores partly silent).
std::vector<RlRecord> with_companions(const std::vector<RlRecord>& recs) {
  std::mt19937_64 rng(11);
  std::vector<RlRecord> out;
  for (RlRecord r : recs) {
    if (r.type != RL_REC_MEM) {
      out.push_back(r);
      continue;
    }
    r.flags |= RL_FLAG_VALUES;
    out.push_back(r);
    RlRecord v;
    std::memset(&v, 0, sizeof v);
    v.type = RL_REC_VALUES;
    v.space = r.space;
    v.access = r.access;
    v.size = r.size;
    v.warp = r.warp;
    v.block = r.block;
    v.active_mask = r.access == (RL_ACCESS_READ | RL_ACCESS_WRITE) ? 0 : r.active_mask;
    v.pc = r.access == RL_ACCESS_WRITE ? uint32_t(rng()) : 0;
    for (int lane = 0; lane < 32; ++lane) v.addr[lane] = rng() % 3;
    out.push_back(v);
  }
  return out;
}

// chunk: records per consume() call (odd: calls cut record-companion pairs); inline_batch:
// EngineConfig::inline_batch_records (0: every batch goes to the workers, a large value: every batch runs inline on
// this thread); values: value mode.
std::string kernels(unsigned workers, const std::vector<RlRecord>& recs, size_t chunk = 7001,
                    uint64_t inline_batch = 2048, bool values = false) {
  EngineConfig config;
  config.values = values;
  config.workers = workers;
  config.shadow_budget_bytes = 1ull << 30;
  config.inline_batch_records = inline_batch;
  Engine e(config);
  e.add_allocation(kAlloc, 1 << 20);
  for (uint64_t launch = 0; launch < 2; ++launch) {
    LaunchInfo l;
    l.launch_id = launch;
    l.grid[0] = 40;
    l.block[0] = 128;
    e.begin_launch(l);
    for (size_t s = 0; s < recs.size(); s += chunk) e.consume(recs.data() + s, std::min(chunk, recs.size() - s));
    e.end_launch(true);
  }
  std::string json = e.to_json();
  return json.substr(0, json.find("\"stats\""));  // stats name the worker count
}

// The shadow budget runs out somewhere in the trace's batches: in a block step (others' global steps wait on it
// in the fused run, consume.cpp) or in a global step. Whichever: the error, and no hang. How many budgets failed.
int budget_failures(unsigned workers, const std::vector<RlRecord>& recs) {
  int failures = 0;
  for (uint64_t kib : {4u, 64u, 256u, 1024u, 4096u, 16384u, 65536u}) {
    EngineConfig config;
    config.workers = workers;
    config.shadow_budget_bytes = kib << 10;
    config.inline_batch_records = 0;
    Engine e(config);
    e.add_allocation(kAlloc, 1 << 20);
    LaunchInfo l;
    l.grid[0] = 40;
    l.block[0] = 128;
    e.begin_launch(l);
    try {
      e.consume(recs.data(), recs.size());
      e.end_launch(true);
    } catch (const EngineError& error) {
      if (std::strstr(error.what(), "shadow memory budget") == nullptr) {
        std::printf("budget %llu KiB: unexpected error: %s\n", (unsigned long long)kib, error.what());
        return -1;
      }
      ++failures;
    }
  }
  return failures;
}

}  // namespace

int main() {
  const std::vector<RlRecord> recs = make_trace(12000);
  const std::string one = kernels(1, recs);
  for (unsigned workers : {2u, 5u}) {
    if (kernels(workers, recs) != one) {
      std::printf("%u workers report other kernels than 1 worker\n", workers);
      return 1;
    }
    // the whole trace in one call: several batches, each batch's steps sharing a run with the next one's routing
    // (consume_records' pipeline), small first batches handed to the workers too
    for (uint64_t inline_batch : {uint64_t(2048), uint64_t(0)}) {
      if (kernels(workers, recs, recs.size(), inline_batch) != one) {
        std::printf("%u workers, the trace in one call, report other kernels than 1 worker\n", workers);
        return 1;
      }
    }
    // short batches (a short launch's records): inline on the consuming thread, and handed to the workers
    for (uint64_t inline_batch : {uint64_t(0), uint64_t(1) << 40}) {
      if (kernels(workers, recs, 500, inline_batch) != one) {
        std::printf("%u workers, batches of 500 %s, report other kernels than 1 worker\n", workers,
                    inline_batch ? "inline" : "on the workers");
        return 1;
      }
    }
  }
  // value mode: its value shadows (beside the allocation's entries, per worker, per block) and per-object counts
  const std::vector<RlRecord> valued = with_companions(recs);
  const std::string one_valued = kernels(1, valued, 7001, 2048, true);
  if (one_valued.find("\"same_value\"") == std::string::npos) {
    std::printf("value mode found no redundant load in a trace full of them\n");
    return 1;
  }
  for (unsigned workers : {2u, 5u}) {
    if (kernels(workers, valued, 7001, 2048, true) != one_valued) {
      std::printf("value mode: %u workers report other kernels than 1 worker\n", workers);
      return 1;
    }
    if (kernels(workers, valued, valued.size(), 2048, true) != one_valued) {
      std::printf("value mode: %u workers, the trace in one call, report other kernels than 1 worker\n", workers);
      return 1;
    }
  }
  for (unsigned workers : {2u, 5u}) {
    const int failed = budget_failures(workers, recs);
    if (failed <= 0) {
      std::printf("%u workers: no budget ran out (%d)\n", workers, failed);
      return 1;
    }
  }
  std::printf("same\n");
  return 0;
}
