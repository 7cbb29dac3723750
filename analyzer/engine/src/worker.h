// The state one analysis worker owns: its share of a launch's aggregates, the blocks and global chunks it owns,
// what it routed in the current batch, and the lookups it caches between records.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "batch.h"
#include "block_table.h"
#include "edge_buffer.h"
#include "same_issue.h"
#include "shadow.h"
#include "shared_shadow.h"
#include "stats.h"
#include "value_shadow.h"

namespace reuselens {
namespace detail {

// Barrier counters of one warp of the open launch (docs/engine.md, "Barriers").
struct WarpState {
  uint32_t bsync = 0, wsync = 0, bar_block = 0, bar_any = 0;
};

// Everything the engine keeps about one running block; only the worker owning the block touches it.
struct BlockState {
  explicit BlockState(Budget* b) : shared(b), local(b), shared_values(b), local_values(b) {}
  SharedShadow shared;
  PagedShadow local;
  ValueShadow shared_values, local_values;  // value mode only
  WarpState warps[32];
  uint32_t exited[32] = {0};  // per warp: lanes that executed EXIT so far
  uint32_t warps_done = 0;
};

// Shadow lines of an irregular record ahead (phase 4, prefetch_lanes), asked for one per lane the replay takes
// instead of all at once: a burst of 32 prefetches fills the core's miss buffers, and the replay behind the burst
// waits for its lines to arrive instead of working while they come (a random gather's global step spent half its
// time on its entries' loads, prefetched two records ahead in bursts; docs/engine.md, "Irregular access").
class LinesAhead {
 public:
  void add(const void* line) {
    if (n_ < kMax) {
      at_[n_++] = line;
    } else {
      __builtin_prefetch(line, 1);
    }
  }
  void ask_one() {
    if (next_ < n_) __builtin_prefetch(at_[next_++], 1);
  }
  void ask_rest() {
    while (next_ < n_) __builtin_prefetch(at_[next_++], 1);
    n_ = next_ = 0;
  }
  void drop() { n_ = next_ = 0; }  // the end of a walk: what was not asked for is not needed

 private:
  static constexpr unsigned kMax = 32;  // one record's lanes
  const void* at_[kMax];
  unsigned n_ = 0, next_ = 0;
};

// The figures of a shared record whose shape was met before (shared_distribution). A record's distinct words,
// wavefronts and ideal depend only on its active lanes' addresses relative to the first one's, the byte of that
// address in its word, the mask and the size, as long as no footprint crosses 2^32 and the offsets fit in 32 signed
// bits (every footprint below 2^31 here; shared windows are under 1 MiB): moving every footprint by whole words turns
// the banks round, which keeps each group's busiest bank. The warps of one instruction usually repeat one shape
// (lane offsets from the thread index, a base from the warp's), and finding its figures again took a cascade of
// closed forms and windows, or a sort of intervals (cuBLAS's SGEMM stores its asynchronous copies to rows 36 words
// apart: four passes over the lanes before the wide window fits). One shape per slot, the slot chosen by the record's
// node (256 slots: a kernel has tens of shared PCs, cuBLAS's SGEMM 54); the key is the whole shape, so another node's
// shape in the slot only misses.
struct SharedShape {
  uint32_t mask = 0, size = 0, low_bits = 0;  // low_bits: the first active lane's address modulo 4
  uint32_t offset[32] = {};                   // each lane's address minus the first active one's (0: inactive)
  uint32_t distinct = 0, wave = 0, ideal = 0;
  uint8_t flags = 0;    // kNoOverlap, kConsecutive
  uint32_t misses = 0;  // lookups of the slot that missed since its last hit
};
struct SharedShapes {
  static constexpr unsigned kSlots = 256;
  SharedShape slot[kSlots];
  SharedShape& of(uint32_t node) { return slot[node % kSlots]; }
};

struct Worker {
  explicit Worker(Budget* b) : budget(b), fallback(b), global_values(b) {}
  Budget* budget;
  Accumulator acc;                // this launch, this worker
  BlockTable<BlockState> blocks;  // running blocks this worker owns
  PagedShadow fallback;           // global granules outside allocations, owned chunks
  ValueShadow global_values;      // value mode: the global granules this worker owns
  SameIssueTable same;
  SharedShapes shared_shapes;  // phase 2
  LinesAhead lines_ahead;      // phase 4
  EdgeBuffer buffer;
  // Phase 2 output, one per batch slot (consume.cpp: phases 1-2 route one batch while phases 3-4 replay the one
  // before): per block owner the record indices, per chunk owner the global lanes, and how many pieces this worker
  // routed in that batch.
  // A slot's own cache lines: one worker routes into one slot while the others read its other slot (pipelined runs).
  struct alignas(64) Routing {
    std::vector<Routed<uint32_t>> by_block;
    std::vector<Routed<Item>> by_chunk;
    uint32_t pieces_routed = 0;
  };
  Routing routing[2];
  std::vector<uint32_t> misses;      // phase 1: records whose PC is new (or changed)
  size_t error_index = SIZE_MAX;     // phase 1: first malformed record this worker met
  std::vector<uint32_t> deferred;    // pieces with new PCs: phase 2 after their insertion
  double busy[5] = {0, 0, 0, 0, 0};  // seconds in each step of the current batch
  double block_waits = 0;            // fused run: seconds the global step waited for block owners
  std::string error;
  uint64_t lanes = 0;
  uint64_t segment_records = 0;  // global records replayed as a summarized segment (replay_segment)
  uint64_t last_pc = 0;          // phase 1: last PC resolved to an id (find_id)
  uint32_t last_fn = 0, last_id = 0;
  uint8_t last_type = 0;  // 0: nothing cached yet
  uint64_t last_block = ~0ull;
  BlockState* last_state = nullptr;
  BlockState& block_state(uint64_t block) {
    if (block != last_block) {
      last_state = &blocks.get(block, budget);
      last_block = block;
    }
    return *last_state;
  }
  const BlockState* find_block(uint64_t block) const {  // makes no state for a block not seen yet
    if (block == last_block) return last_state;
    return blocks.find(block);
  }
  void drop_block(uint64_t block) {
    blocks.erase(block);
    last_block = ~0ull;
    last_state = nullptr;
  }
  std::vector<uint64_t> scratch;
  size_t region_hint = 0;
  uint64_t shared_words = 0;          // words of shared window the open launch's blocks needed so far (SharedShadow)
  uint64_t page_lo = 0, page_hi = 0;  // cached shadow page of a region: granules [page_lo, page_hi)
  Entry* page = nullptr;
  RegionShadow* page_region = nullptr;   // the region of `page`
  RegionShadow* entry_region = nullptr;  // the region of the last global_entry() (null: outside allocations)
  void forget_regions() {
    region_hint = 0;
    page_lo = page_hi = 0;
    page = nullptr;
    page_region = entry_region = nullptr;
  }
  NodeStats* stats_for(uint32_t node) {
    if (node != last_node) {
      last_stats = &acc.nodes[node];
      last_node = node;
    }
    return last_stats;
  }
  void reset_launch() {
    acc.clear();
    blocks.clear();
    shared_words = 0;
    last_block = ~0ull;
    last_state = nullptr;
    last_node = 0;
    last_stats = nullptr;
  }
  uint32_t last_node = 0;
  NodeStats* last_stats = nullptr;
};

}  // namespace detail
}  // namespace reuselens
