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

// chunk: records per consume() call; inline_batch: EngineConfig::inline_batch_records (0: every batch goes to
// the workers, a large value: every batch runs inline on this thread).
std::string kernels(unsigned workers, const std::vector<RlRecord>& recs, size_t chunk = 7001,
                    uint64_t inline_batch = 2048) {
  EngineConfig config;
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

}  // namespace

int main() {
  const std::vector<RlRecord> recs = make_trace(12000);
  const std::string one = kernels(1, recs);
  for (unsigned workers : {2u, 5u}) {
    if (kernels(workers, recs) != one) {
      std::printf("%u workers report other kernels than 1 worker\n", workers);
      return 1;
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
  std::printf("same\n");
  return 0;
}
