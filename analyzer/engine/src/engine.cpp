// The analysis engine: Topological Distance (cuVein paper, section 3.1), PCDepGraph edges (3.2.1) and node
// distributions (3.2.2) from warp records. docs/engine.md describes the rules; this file cites them.
//
// Processing of one batch of records (docs/engine.md, "Determinism and parallelism"), every step parallel:
//   1. pieces of 64 records, to whichever worker is free: validation and node/barrier id lookup (new PCs are
//      inserted serially afterwards, in record order), then node distributions (pure sums) and routing: every
//      record to the worker owning its block, every lane of a global record to the worker owning its
//      granule's 1 KiB chunk of address space;
//   2. block owners, in record order: per-warp barrier counters, barrier executions, block exits, and the
//      shared/local shadow;
//   3. chunk owners, in record order: the global shadow.
// A block's and a granule's history is each seen by one worker in record order, so every label and origin is
// the one a single worker would compute; all aggregates are sums, merged at end_launch. In the code the steps
// keep the numbers of the stats they are timed under: phase 1 (ids) and 2 (distributions, routing) form step
// 1, phase 3 is step 2, phase 4 step 3.
#include "reuselens/engine.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstring>
#include <type_traits>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include "pool.h"
#include "shadow.h"
#include "stats.h"
#include "word_union.h"

namespace reuselens {
namespace detail {
namespace {

// Records per internal batch: 4096 (1.2 MB, stays in L2 across the phases) for one worker; with more workers
// each phase's share per worker shrinks, so batches grow (up to 32768) to keep the four pool barriers cheap.
inline size_t batch_records(unsigned workers) { return std::min<size_t>(32768, std::max<size_t>(4096, 2048u * workers)); }
// Phases 1 and 2 hand a batch out in pieces of this many records, the next piece to whichever worker is free:
// the drain order groups the warps of one instruction, and instructions differ widely in cost (a coalesced
// load vs. a conflicted shared store), so contiguous slices left one worker with the expensive instruction,
// and a fixed deal still waits for a worker the machine slowed down.
constexpr size_t kPiece = 64;
inline size_t pieces_of(size_t n) { return (n + kPiece - 1) / kPiece; }
constexpr uint8_t kNoOverlap = 1;   // Ctx flag: no two lanes of the record share a granule
constexpr uint8_t kOneChunk = 2;    // Ctx flag: all granules of the record lie in one chunk (one owner)
constexpr uint64_t kLocalThreadShift = 48;
constexpr unsigned kMaxWorkers = 64;  // route_global keeps one lane mask per worker on the stack

struct PcKey {
  uint32_t function_id;
  uint64_t pc;
  bool operator==(const PcKey& o) const { return function_id == o.function_id && pc == o.pc; }
};
struct PcKeyHash {
  size_t operator()(const PcKey& k) const {
    uint64_t h = (k.pc ^ (uint64_t(k.function_id) << 40)) * 0x9e3779b97f4a7c15ull;
    return size_t(h ^ (h >> 31));
  }
};

struct NodeInfo {
  uint32_t function_id;
  uint64_t pc;
  uint8_t space, access, flags;
  uint16_t size;
};
struct BarrierInfo {
  uint32_t function_id;
  uint64_t pc;
  uint8_t kind;
};

// The barrier counters of a record's warp when it issued (phase 3, docs/engine.md "Barriers").
struct Sync {
  uint16_t bsync, wsync;
  uint32_t bar_block, bar_any;  // the warp's last block barrier / last block-or-warp barrier
};
// Per-record context: id (phase 1), flags (phase 2); the replay works on a copy with the counters filled in.
// The ctx array holds only what the worker dealt the record's piece writes; the counters of a global record
// go to a slot its block owner alone writes (Routed::sync), so owners never write the same cache line.
struct Ctx {
  uint32_t id;  // node id (MEM) or barrier id (BARRIER)
  uint8_t flags;
  Sync sync;
};
struct Item {
  uint32_t index;
  uint32_t mask;  // lanes the owner must look at
  uint32_t slot;  // the record's position in what its piece's worker routed to the block owner (Routed::sync)
};
// Phase 2 output of one worker for one owner: the items of each piece the worker dealt with, in record order;
// ends[j] = items.size() after the worker's j-th piece, so the owner can walk all pieces in batch order.
template <class T>
struct Routed {
  std::vector<T> items;
  std::vector<uint32_t> ends;
  std::vector<Sync> sync;  // by_block only: counters of items[x], written by the block owner in phase 3
  void clear() {
    items.clear();
    ends.clear();
  }
};
// Which worker routed piece k of the batch, and as its how-manieth piece (Routed::ends index).
struct PieceRef {
  uint32_t worker, local;
};
inline uint32_t record_index(uint32_t i) { return i; }
inline uint32_t record_index(const Item& it) { return it.index; }

// Barrier counters of one warp of the open launch (docs/engine.md, "Barriers").
struct WarpState {
  uint32_t bsync = 0, wsync = 0, bar_block = 0, bar_any = 0;
};

// Owner worker of a chunk: a multiplicative hash mapped onto [0, workers) by multiply-shift (no division).
inline unsigned owner_of(uint64_t chunk, unsigned workers) {
  return unsigned((((chunk * 0x9e3779b97f4a7c15ull) >> 32) * workers) >> 32);
}
inline unsigned block_owner(uint64_t block, unsigned workers) { return owner_of(block ^ 0x5bd1e9955bd1e995ull, workers); }
inline uint64_t chunk_of(uint64_t granule) { return granule >> 8; }  // 256 granules = one shadow page

// Active lanes of a mask. The shipped build targets any x86-64 (no POPCNT instruction assumed), where
// __builtin_popcount becomes a libgcc call; this inline bit count is cheaper than the call.
inline unsigned popcount32(uint32_t v) {
  v = v - ((v >> 1) & 0x55555555u);
  v = (v & 0x33333333u) + ((v >> 2) & 0x33333333u);
  return (((v + (v >> 4)) & 0x0f0f0f0fu) * 0x01010101u) >> 24;
}

// The lane addresses of one record: 32 at most, usually already sorted.
void insertion_sort(uint64_t* a, size_t n) {
  for (size_t i = 1; i < n; ++i) {
    uint64_t v = a[i];
    size_t j = i;
    while (j > 0 && a[j - 1] > v) {
      a[j] = a[j - 1];
      --j;
    }
    a[j] = v;
  }
}

// Granules already touched by earlier lanes of the record being processed: such a lane's most recent prior
// access is the same dynamic instruction issue (label warp_same_inst, section 3.1).
class SameIssueTable {
 public:
  void begin(size_t expected) {
    size_t want = 64;
    while (want < 2 * expected) want <<= 1;
    if (want > keys_.size()) {
      keys_.assign(want, 0);
      stamps_.assign(want, 0);
      stamp_ = 0;
    }
    if (++stamp_ == 0) {
      std::fill(stamps_.begin(), stamps_.end(), 0);
      stamp_ = 1;
    }
  }
  // True when `g` was seen earlier in this record; records it otherwise.
  bool seen(uint64_t g) {
    size_t mask = keys_.size() - 1;
    size_t i = size_t((g * 0x9e3779b97f4a7c15ull) >> 20) & mask;
    while (stamps_[i] == stamp_) {
      if (keys_[i] == g) return true;
      i = (i + 1) & mask;
    }
    stamps_[i] = stamp_;
    keys_[i] = g;
    return false;
  }

 private:
  std::vector<uint64_t> keys_;
  std::vector<uint32_t> stamps_;
  uint32_t stamp_ = 0;
};

// Edge counts folded before they reach the hash map: consecutive records (the warps of one PC) mostly hit the
// same few edges. Kept across records; flushed when full and at the end of every phase.
class EdgeBuffer {
 public:
  struct Slot {
    EdgeKey key;
    EdgeStats stats;
    uint32_t barrier;  // the barrier its synced accesses credit (docs/engine.md, "Barriers")
  };
  Slot& slot(const EdgeKey& k, uint32_t barrier, Accumulator& acc) {
    if (last_ < n_ && slots_[last_].key == k && slots_[last_].barrier == barrier) return slots_[last_];
    for (size_t i = 0; i < n_; ++i) {
      if (slots_[i].key == k && slots_[i].barrier == barrier) return slots_[last_ = i];
    }
    if (n_ == kSlots) flush(acc);
    slots_[n_] = Slot{k, EdgeStats(), barrier};
    last_ = n_;
    return slots_[n_++];
  }
  void flush(Accumulator& acc) {
    for (size_t i = 0; i < n_; ++i) {
      const Slot& s = slots_[i];
      acc.edges[s.key].merge(s.stats);
      if (s.stats.synced) {
        SpanStats& span = acc.barriers[s.barrier].spans[s.key];
        span.accesses += s.stats.synced;
        span.bytes += s.stats.synced_bytes;
      }
    }
    n_ = 0;
  }

 private:
  static constexpr size_t kSlots = 16;
  Slot slots_[kSlots];
  size_t n_ = 0, last_ = 0;
};

// Everything the engine keeps about one running block; only the worker owning the block touches it.
struct BlockState {
  explicit BlockState(Budget* b) : shared(b), local(b) {}
  PagedShadow shared, local;
  WarpState warps[32];
  uint32_t exited[32] = {0};  // per warp: lanes that executed EXIT so far
  uint32_t warps_done = 0;
};

}  // namespace

struct Worker {
  explicit Worker(Budget* b) : budget(b), fallback(b) {}
  Budget* budget;
  Accumulator acc;                                     // this launch, this worker
  std::unordered_map<uint64_t, BlockState> blocks;     // running blocks this worker owns
  PagedShadow fallback;                                // global granules outside allocations, owned chunks
  SameIssueTable same;
  EdgeBuffer buffer;
  std::vector<Routed<uint32_t>> by_block;              // phase 2 output, per block owner: record indices
  std::vector<Routed<Item>> by_chunk;                  // phase 2 output, per chunk owner: global lanes
  std::vector<uint32_t> misses;                        // phase 1: records whose PC is new (or changed)
  size_t error_index = SIZE_MAX;                       // phase 1: first malformed record this worker met
  std::vector<uint32_t> deferred;                      // pieces with new PCs: phase 2 after their insertion
  uint32_t pieces_routed = 0;                          // pieces this worker ran phase 2 on, this batch
  double busy[5] = {0, 0, 0, 0, 0};                    // seconds in each step of the current batch
  std::string error;
  uint64_t lanes = 0;
  uint64_t last_pc = 0;                                // phase 1: last PC resolved to an id (find_id)
  uint32_t last_fn = 0, last_id = 0;
  uint8_t last_type = 0;                               // 0: nothing cached yet
  uint64_t last_block = ~0ull;
  BlockState* last_state = nullptr;
  BlockState& block_state(uint64_t block) {
    if (block != last_block) {
      last_state = &blocks.try_emplace(block, budget).first->second;
      last_block = block;
    }
    return *last_state;
  }
  void drop_block(uint64_t block) {
    blocks.erase(block);
    last_block = ~0ull;
    last_state = nullptr;
  }
  std::vector<uint64_t> scratch;
  size_t region_hint = 0;
  uint64_t page_lo = 0, page_hi = 0;  // cached shadow page of a region: granules [page_lo, page_hi)
  Entry* page = nullptr;
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
    last_block = ~0ull;
    last_state = nullptr;
    last_node = 0;
    last_stats = nullptr;
  }
  uint32_t last_node = 0;
  NodeStats* last_stats = nullptr;
};

}  // namespace detail

using namespace detail;

struct GroupKey {
  uint32_t kernel;
  uint32_t grid[3], block[3], dyn;
  bool operator<(const GroupKey& o) const {
    return std::memcmp(this, &o, sizeof(GroupKey)) < 0;
  }
};

struct Group {
  GroupKey key;
  std::vector<uint64_t> launches, partial;
  uint64_t records = 0;
  Accumulator acc;
};

struct Engine::Impl {
  explicit Impl(const EngineConfig& c)
      : config(c), budget(c.shadow_budget_bytes), pool(std::min(kMaxWorkers, std::max(1u, c.workers))), W(pool.size()) {
    nodes.push_back(NodeInfo{});
    barriers.push_back(BarrierInfo{});
    gen_kernel.push_back(kNone);
    for (unsigned w = 0; w < W; ++w) {
      workers.emplace_back(new Worker(&budget));
      workers.back()->by_block.resize(W);
      workers.back()->by_chunk.resize(W);
    }
  }

  EngineConfig config;
  Budget budget;
  WorkerPool pool;
  unsigned W;
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<std::unique_ptr<RegionShadow>> regions;  // sorted by base

  std::vector<NodeInfo> nodes;  // index = engine-wide node id; 0 = Cold Miss
  std::unordered_map<PcKey, uint32_t, PcKeyHash> node_ids;
  std::vector<BarrierInfo> barriers;
  std::unordered_map<PcKey, uint32_t, PcKeyHash> barrier_ids;

  std::vector<uint32_t> gen_kernel;  // generation -> kernel function id of that launch
  uint32_t gen = 0;
  bool open = false;
  LaunchInfo launch;
  uint32_t warps_per_block = 1, threads_per_block = 32;
  uint64_t launch_records = 0;

  std::vector<Ctx> ctx;
  std::vector<uint32_t> misses;  // finish_phase1: records with new PCs, all workers, in record order
  std::atomic<size_t> next_piece{0};  // phases 1-2: the next piece of the batch nobody has taken yet
  std::vector<PieceRef> piece_map;    // phase 2: who routed each piece (phases 3-4 walk pieces in order)
  std::vector<Group> groups;
  std::map<GroupKey, size_t> group_index;
  EngineStats counters;

  // ---- phase 1: ids ------------------------------------------------------------------------------------
  // Serial insertion of a new PC (or one seen with new access flags / a larger size: type and size of a node
  // are the union over its records).
  uint32_t node_id(const RlRecord& r) {
    PcKey k{r.function_id, r.pc};
    auto it = node_ids.find(k);
    if (it != node_ids.end()) {
      NodeInfo& n = nodes[it->second];
      n.access |= r.access;
      n.size = std::max(n.size, r.size);
      return it->second;
    }
    if (nodes.size() >= kMaxNode) throw EngineError("more than 2^28 distinct memory instructions");
    uint32_t id = uint32_t(nodes.size());
    nodes.push_back(NodeInfo{r.function_id, r.pc, r.space, r.access, r.flags, r.size});
    node_ids.emplace(k, id);
    return id;
  }
  uint32_t barrier_id(const RlRecord& r) {
    PcKey k{r.function_id, r.pc};
    auto it = barrier_ids.find(k);
    if (it != barrier_ids.end()) return it->second;
    uint32_t id = uint32_t(barriers.size());
    barriers.push_back(BarrierInfo{r.function_id, r.pc, r.space});
    barrier_ids.emplace(k, id);
    return id;
  }
  // Read-only lookup during the parallel phase; 0 = resolve serially.
  // The worker remembers the last PC it resolved (ids never change once given): consecutive records are
  // mostly the warps of one instruction, so the hash lookup is skipped for them.
  uint32_t find_id(const RlRecord& r, Worker& wk) const {
    uint32_t id;
    if (r.pc == wk.last_pc && r.function_id == wk.last_fn && r.type == wk.last_type) {
      id = wk.last_id;
    } else {
      PcKey k{r.function_id, r.pc};
      const auto& table = r.type == RL_REC_BARRIER ? barrier_ids : node_ids;
      auto it = table.find(k);
      if (it == table.end()) return 0;
      id = it->second;
      wk.last_pc = r.pc;
      wk.last_fn = r.function_id;
      wk.last_type = r.type;
      wk.last_id = id;
    }
    if (r.type == RL_REC_BARRIER) return id;
    const NodeInfo& n = nodes[id];
    return ((n.access | r.access) == n.access && r.size <= n.size) ? id : 0;
  }
  // Fast test of what check_record spells out (this runs for every record).
  bool plausible(const RlRecord& r) const {
    bool mem = r.type == RL_REC_MEM, bar = r.type == RL_REC_BARRIER;
    return (mem | bar | (r.type == RL_REC_BLOCK_EXIT)) & (r.warp < warps_per_block) & (r.block < kMaxBlock) &
           ((!mem) | ((r.space >= RL_SPACE_GLOBAL) & (r.space <= RL_SPACE_LOCAL) & (r.size != 0))) &
           ((!bar) | ((r.space >= RL_BARRIER_BLOCK) & (r.space <= RL_BARRIER_MBARRIER)));
  }
  std::string check_record(const RlRecord& r) const {
    if (r.type < RL_REC_MEM || r.type > RL_REC_BLOCK_EXIT) return "unknown record type " + std::to_string(r.type);
    if (r.warp >= warps_per_block) {
      return "warp index " + std::to_string(r.warp) + " but the block has " + std::to_string(warps_per_block) +
             " warps";
    }
    if (r.block >= kMaxBlock) return "block index " + std::to_string(r.block) + " is beyond 2^40";
    if (r.type == RL_REC_MEM) {
      if (r.space < RL_SPACE_GLOBAL || r.space > RL_SPACE_LOCAL) return "unknown memory space " + std::to_string(r.space);
      if (r.size == 0) return "access size 0";
    }
    if (r.type == RL_REC_BARRIER && (r.space < RL_BARRIER_BLOCK || r.space > RL_BARRIER_MBARRIER)) {
      return "unknown barrier kind " + std::to_string(r.space);
    }
    return std::string();
  }
  // Phase 1 of one piece. kClean: every record valid and with its id, phase 2 may follow at once.
  enum class PieceState { kClean, kNewPcs, kMalformed };
  PieceState phase1_piece(const RlRecord* recs, size_t n, size_t piece, Worker& wk) {
    const size_t misses_before = wk.misses.size();
    for (size_t i = piece * kPiece, hi = std::min(n, i + kPiece); i < hi; ++i) {
      const RlRecord& r = recs[i];
      if (!plausible(r)) {
        wk.error_index = i;
        wk.error = check_record(r);
        return PieceState::kMalformed;
      }
      Ctx& c = ctx[i];
      c = Ctx{0, 0, Sync{0, 0, 0, 0}};
      if (r.type == RL_REC_BLOCK_EXIT) continue;
      c.id = find_id(r, wk);
      if (!c.id) wk.misses.push_back(uint32_t(i));
      if (r.type == RL_REC_MEM) wk.lanes += uint32_t(popcount32(r.active_mask));
    }
    return wk.misses.size() == misses_before ? PieceState::kClean : PieceState::kNewPcs;
  }
  // Phases 1 and 2 of one batch, one worker's share: pieces are taken in increasing order from a shared
  // counter. A worker stops at its first malformed record; pieces before it went to the other workers, so
  // the lowest index any worker reports is the first malformed record of the batch.
  void phases12(const RlRecord* recs, size_t n, unsigned w, Worker& wk) {
    for (auto& v : wk.by_block) v.clear();
    for (auto& v : wk.by_chunk) v.clear();
    wk.misses.clear();
    wk.deferred.clear();
    wk.error_index = SIZE_MAX;
    wk.pieces_routed = 0;
    wk.scratch.resize(64);
    for (;;) {
      size_t piece = next_piece.fetch_add(1, std::memory_order_relaxed);
      if (piece >= pieces_of(n)) break;
      PieceState state = PieceState::kClean;
      timed(wk, 0, [&] { state = phase1_piece(recs, n, piece, wk); });
      if (state == PieceState::kMalformed) break;
      if (state == PieceState::kNewPcs) {
        wk.deferred.push_back(uint32_t(piece));
      } else {
        timed(wk, 2, [&] { phase2_piece(recs, n, piece, w, wk); });
      }
    }
    if (wk.deferred.empty()) finish_routing(wk);
  }

  // The first malformed record in record order wins, whatever the slicing; then new PCs get ids in order.
  // Returns true when a piece still needs phase 2 (it had new PCs).
  bool finish_phase1(const RlRecord* recs) {
    const Worker* failed = nullptr;  // each worker stops at its first malformed record: the lowest index wins
    for (auto& w : workers) {
      if (w->error_index != SIZE_MAX && (!failed || w->error_index < failed->error_index)) failed = w.get();
    }
    if (failed) {
      throw EngineError("record " + std::to_string(launch_records + failed->error_index) + " of launch " +
                        std::to_string(launch.launch_id) + ": " + failed->error);
    }
    misses.clear();
    for (auto& w : workers) {
      misses.insert(misses.end(), w->misses.begin(), w->misses.end());
      counters.lane_accesses += w->lanes;
      w->lanes = 0;
    }
    std::sort(misses.begin(), misses.end());  // pieces were dealt out round-robin: back to record order
    for (uint32_t i : misses) ctx[i].id = recs[i].type == RL_REC_MEM ? node_id(recs[i]) : barrier_id(recs[i]);
    for (auto& w : workers) {
      if (!w->deferred.empty()) return true;
    }
    return false;
  }

  // ---- phase 3: blocks -----------------------------------------------------------------------------------
  // Barrier counters (docs/engine.md, "Barriers"): a block barrier advances both counters of the warp, a warp
  // barrier only the warp counter; an mbarrier is counted but orders nothing we can see.
  void on_barrier(const RlRecord& r, const Ctx& c, Worker& wk) {
    wk.acc.barriers[c.id].executions += 1;
    WarpState& ws = wk.block_state(r.block).warps[r.warp];
    if (r.space == RL_BARRIER_BLOCK) {
      ws.bsync += 1;
      ws.wsync += 1;
      ws.bar_block = ws.bar_any = c.id;
    } else if (r.space == RL_BARRIER_WARP) {
      ws.wsync += 1;
      ws.bar_any = c.id;
    }
  }
  // Lanes a warp of this launch's blocks has: 32, except a partial last warp.
  uint32_t warp_lanes(uint32_t warp) const {
    uint32_t tail = threads_per_block % 32;
    return (warp + 1 < warps_per_block || tail == 0) ? 0xffffffffu : (1u << tail) - 1;
  }
  // A block's shared and local memory die when every thread has executed EXIT. Threads may exit in several
  // pieces (early return), so exits are counted per lane; a record with no lanes set stands for its whole warp.
  void on_exit(const RlRecord& r, Worker& wk) {
    BlockState& st = wk.block_state(r.block);
    uint32_t want = warp_lanes(r.warp);
    uint32_t before = st.exited[r.warp];
    st.exited[r.warp] |= (r.active_mask ? r.active_mask : want) & want;
    if (before != want && st.exited[r.warp] == want) st.warps_done += 1;
    if (st.warps_done >= warps_per_block) wk.drop_block(r.block);
  }
  // `out`: where a global record's counters go for phase 4.
  void block_step(const RlRecord& r, const Ctx& c, Sync& out, unsigned w, Worker& wk) {
    if (r.type == RL_REC_MEM) {
      const WarpState& ws = wk.block_state(r.block).warps[r.warp];
      Sync now{uint16_t(ws.bsync & kBsyncMask), uint16_t(ws.wsync & kWsyncMask), ws.bar_block, ws.bar_any};
      if (r.space == RL_SPACE_GLOBAL) {
        out = now;
      } else {
        Ctx full = c;
        full.sync = now;
        replay_record(r, full, r.active_mask, w, wk);
      }
    } else if (r.type == RL_REC_BARRIER) {
      on_barrier(r, c, wk);
    } else {
      on_exit(r, wk);
    }
  }
  // One worker owns everything: walk the batch itself instead of routed lists.
  void phase3(const RlRecord* recs, size_t n, unsigned w) {
    Worker& wk = *workers[w];
    if (W == 1) {
      for (size_t i = 0; i < n; ++i) block_step(recs[i], ctx[i], ctx[i].sync, 0, wk);
    } else {
      for_each_routed<false>(&Worker::by_block, n, w, recs, [&](uint32_t i, Routed<uint32_t>& list, uint32_t x) {
        block_step(recs[i], ctx[i], list.sync[x], w, wk);
      });
    }
    wk.buffer.flush(wk.acc);
  }

  // ---- phase 2: distributions and routing --------------------------------------------------------------
  // Distributions of section 3.2.2 for a global access: distinct lane addresses, distinct 32-byte sectors of
  // the lane footprints [addr, addr + size), and the ideal ceil(lanes * size / 32).
  // Returns the lowest and highest lane address (for routing).
  static std::pair<uint64_t, uint64_t> global_distribution(const RlRecord& r, Ctx& c, NodeStats& s, uint64_t* a,
                                                           unsigned lanes) {
    size_t n = 0;
    if (r.active_mask == 0xffffffffu) {
      std::memcpy(a, r.addr, 32 * sizeof(uint64_t));
      n = 32;
    } else {
      for (uint32_t m = r.active_mask; m; m &= m - 1) a[n++] = r.addr[__builtin_ctz(m)];
    }
    if (n == 0) {
      c.flags |= kNoOverlap;
      s.addresses.add(0);
      s.sectors.add(0);
      s.sectors_ideal.add(0);
      return std::make_pair(uint64_t(0), uint64_t(0));
    }
    const uint64_t granules = (r.size + 3) / 4, last = uint64_t(r.size) - 1;
    // Contiguous lanes (a[i] = a[i-1] + size, whole granules, no wrap-around: the fully coalesced case): the
    // footprints are one interval, all addresses distinct and no granule shared; the general pass below gives
    // the same figures.
    if (r.size % 4 == 0 && a[0] <= a[n - 1] && a[n - 1] + last >= a[n - 1]) {
      uint64_t step = r.size, broken = 0;
      for (size_t i = 1; i < n; ++i) broken |= a[i] ^ (a[i - 1] + step);
      if (!broken) {
        c.flags |= kNoOverlap;
        s.addresses.add(uint32_t(n));
        s.sectors.add(uint32_t(((a[n - 1] + last) >> 5) - (a[0] >> 5) + 1));
        s.sectors_ideal.add(uint32_t((uint64_t(lanes) * r.size + 31) / 32));
        return std::make_pair(a[0], a[n - 1]);
      }
    }
    // Sorted footprints [a, a + size): the last sector of each is non-decreasing, so a footprint adds the
    // sectors after its predecessor's last one (distinct sectors of the union). The lane order is usually
    // already sorted (coalesced accesses): the first pass assumes it and checks; otherwise sort and redo.
    uint64_t overlap = 0, distinct = 1, sectors = 0;
    for (int pass = 0; pass < 2; ++pass) {
      uint64_t prev = a[0], prev_s1 = (prev + last) >> 5, unsorted = 0;
      overlap = 0;
      distinct = 1;
      sectors = std::max(prev_s1 + 1, prev >> 5) - (prev >> 5);
      for (size_t i = 1; i < n; ++i) {
        uint64_t x = a[i];
        unsorted |= uint64_t(x < prev);
        overlap |= uint64_t((prev >> 2) + granules > (x >> 2));
        distinct += uint64_t(x != prev);
        uint64_t s0 = std::max(x >> 5, prev_s1 + 1), s1 = (x + last) >> 5;
        sectors += std::max(s1 + 1, s0) - s0;
        prev_s1 = std::max(prev_s1, s1);
        prev = x;
      }
      if (!unsorted) break;
      insertion_sort(a, n);
    }
    if (!overlap) c.flags |= kNoOverlap;
    s.addresses.add(uint32_t(distinct));
    s.sectors.add(uint32_t(sectors));
    s.sectors_ideal.add(uint32_t((uint64_t(lanes) * r.size + 31) / 32));
    return std::make_pair(a[0], a[n - 1]);
  }

  // Shared memory (section 3.2.2): distinct 32-bit words of the lane footprints; wavefronts = per lane group
  // the largest number of distinct words in one bank ((word) & 31), summed over groups. Lanes are grouped by
  // lane index: 32 lanes per group up to 4 bytes per lane, 128 / size lanes beyond (8 B: 16, 16 B: 8).
  // The ideal is ceil(distinct words / 32) per group, summed over the same groups. Footprints are handled as
  // word intervals (WordUnion), so the cost does not grow with the access size.
  static void shared_distribution(const RlRecord& r, Ctx& c, NodeStats& s) {
    const unsigned per_group = r.size <= 4 ? 32u : std::max(1u, 128u / r.size);
    WordUnion group, all;
    uint64_t wave = 0, ideal = 0, pushed = 0;
    for (unsigned g0 = 0; g0 < 32; g0 += per_group) {
      group.clear();
      for (unsigned lane = g0; lane < std::min(32u, g0 + per_group); ++lane) {
        if (!(r.active_mask >> lane & 1)) continue;
        uint64_t w0 = r.addr[lane] >> 2, w1 = (r.addr[lane] + r.size - 1) >> 2;
        if (w1 < w0) continue;  // a footprint past 2^64 - 1 wraps around: it has no words
        group.add(w0, w1);
        all.add(w0, w1);
        pushed += w1 - w0 + 1;
      }
      if (group.empty()) continue;
      const uint64_t n = group.merge();
      wave += group.busiest_bank();
      ideal += (n + 31) / 32;
    }
    const uint64_t distinct = all.merge();
    // lanes' granules are a subset of their footprint words: distinct footprints mean no shared granule
    if (distinct == pushed) c.flags |= kNoOverlap;
    s.addresses.add(uint32_t(distinct));
    s.wavefronts.add(uint32_t(wave));
    s.wavefronts_ideal.add(uint32_t(ideal));
  }

  void route_global(const RlRecord& r, uint32_t i, uint32_t slot, Worker& wk) {
    uint32_t masks[kMaxWorkers] = {0};
    uint64_t last = (r.size + 3) / 4 - 1;
    for (uint32_t m = r.active_mask; m; m &= m - 1) {
      unsigned lane = unsigned(__builtin_ctz(m));
      uint64_t g = r.addr[lane] >> 2;
      uint64_t c0 = chunk_of(g), c1 = chunk_of(g + last);
      for (uint64_t ch = c0; ch <= c1; ++ch) masks[owner_of(ch, W)] |= 1u << lane;
    }
    for (unsigned o = 0; o < W; ++o) {
      if (masks[o]) wk.by_chunk[o].items.push_back(Item{i, masks[o], slot});
    }
  }

  void phase2_piece(const RlRecord* recs, size_t n, size_t piece, unsigned w, Worker& wk) {
    for (size_t i = piece * kPiece, hi = std::min(n, i + kPiece); i < hi; ++i) distribute_and_route(recs[i], i, wk);
    if (W > 1) {
      for (auto& v : wk.by_block) v.ends.push_back(uint32_t(v.items.size()));
      for (auto& v : wk.by_chunk) v.ends.push_back(uint32_t(v.items.size()));
      piece_map[piece] = PieceRef{w, wk.pieces_routed++};
    }
  }
  void finish_routing(Worker& wk) {
    for (auto& v : wk.by_block) v.sync.resize(v.items.size());
  }
  void distribute_and_route(const RlRecord& r, size_t i, Worker& wk) {
    Ctx& c = ctx[i];
    uint32_t slot = 0;  // position in the block owner's list: where phase 3 leaves the counters
    if (W > 1) {
      auto& to_owner = wk.by_block[block_owner(r.block, W)].items;
      slot = uint32_t(to_owner.size());
      to_owner.push_back(uint32_t(i));
    }
    if (r.type != RL_REC_MEM) return;
    unsigned lanes = unsigned(popcount32(r.active_mask));
    NodeStats& s = *wk.stats_for(c.id);
    s.executions += 1;
    s.bytes += uint64_t(lanes) * r.size;
    s.lanes.add(lanes);
    if (r.space == RL_SPACE_GLOBAL) {
      auto span = global_distribution(r, c, s, wk.scratch.data(), lanes);
      uint64_t c_lo = chunk_of(span.first >> 2), c_hi = chunk_of((span.second >> 2) + (r.size + 3) / 4 - 1);
      if (c_lo == c_hi) c.flags |= kOneChunk;  // the common coalesced case: one owner, one shadow page
      if (W == 1) {
        // phase 4 walks the batch itself
      } else if (c_lo == c_hi) {  // no per-lane routing
        if (lanes) wk.by_chunk[owner_of(c_lo, W)].items.push_back(Item{uint32_t(i), r.active_mask, slot});
      } else {
        route_global(r, uint32_t(i), slot, wk);
      }
    } else if (r.space == RL_SPACE_SHARED) {
      shared_distribution(r, c, s);
    }
  }

  // Walks what phase 2 routed to owner `w`, in record order: piece k of the batch was routed by worker
  // piece_map[k].worker as its piece_map[k].local-th piece. The records come from all over the batch (other cores' caches), so the next ones
  // are prefetched while the current one is replayed: their header and context, and for phase 4 (kLanes) the
  // lane addresses; phase 3 writes the context (barrier counters), so it asks for the line to write.
  template <bool kLanes, class T, class Visit>
  void for_each_routed(std::vector<Routed<T>> Worker::*routed, size_t n, unsigned w, const RlRecord* recs,
                       Visit visit) {
    constexpr size_t kAhead = 6;
    for (size_t piece = 0; piece < pieces_of(n); ++piece) {
      const PieceRef& from = piece_map[piece];
      Routed<T>& list = ((*workers[from.worker]).*routed)[w];
      size_t j = from.local;
      uint32_t lo = j ? list.ends[j - 1] : 0, hi = list.ends[j];
      const T* items = list.items.data();
      for (uint32_t x = lo; x < hi; ++x) {
        if (x + kAhead < hi) {
          uint32_t ahead = record_index(items[x + kAhead]);
          const char* p = reinterpret_cast<const char*>(recs + ahead);
          __builtin_prefetch(p);
          if (kLanes) {
            __builtin_prefetch(p + 64);
            __builtin_prefetch(p + 128);
            __builtin_prefetch(p + 192);
            __builtin_prefetch(p + 256);
            __builtin_prefetch(&ctx[ahead], 0);
          } else {
            __builtin_prefetch(&ctx[ahead], 0);
            __builtin_prefetch(&list.sync[x + kAhead], 1);
          }
        }
        visit(items[x], list, x);
      }
    }
  }

  // ---- shadow replay (phases 3 and 4) --------------------------------------------------------------------
  RegionShadow* find_region(uint64_t granule, size_t& hint) {
    if (hint < regions.size() && regions[hint]->contains_granule(granule)) return regions[hint].get();
    uint64_t addr = granule << 2;
    auto it = std::upper_bound(regions.begin(), regions.end(), addr,
                               [](uint64_t a, const std::unique_ptr<RegionShadow>& r) { return a < r->base(); });
    if (it == regions.begin()) return nullptr;
    --it;
    if (!(*it)->contains_granule(granule)) return nullptr;
    hint = size_t(it - regions.begin());
    return it->get();
  }
  Entry* global_entry(uint64_t granule, Worker& wk) {
    if (granule - wk.page_lo < wk.page_hi - wk.page_lo) return wk.page + (granule - wk.page_lo);
    RegionShadow* reg = find_region(granule, wk.region_hint);
    if (!reg) return wk.fallback.entry(0, granule);
    Entry* e = reg->entry(granule);
    reg->page_span(granule, wk.page_lo, wk.page_hi);
    wk.page = e - (granule - wk.page_lo);
    return e;
  }

  // Consecutive lane-granules of one record with the same outcome (edge, access kind, barrier span) are folded
  // into a run before they reach the EdgeBuffer: most lanes of a warp hit the same edge. `code` packs the
  // outcome: bits 0-27 node of the prior access (to / prior_node), bits 28-30 label, bit 31 separated by a
  // barrier (synced), bits 32-55 generation of a prior access of an earlier launch (cold edge with a
  // prior-kernel origin; 0 otherwise), bit 56 the prior access wrote. code 0 = cold with no prior access (no
  // access kind counted). The barrier an edge credits is a function of the label within one record
  // (c.sync.bar_any / c.sync.bar_block), so it need not be part of the code.
  struct Run {
    uint64_t code = 0;
    uint64_t accesses = 0, bytes = 0;
  };
  static constexpr uint64_t kCodeSynced = 1ull << 31, kCodePriorWrote = 1ull << 56;

  // Turns a run into its edge key (section 3.2.1) and adds its counts to the worker's EdgeBuffer.
  void flush_run(const Run& run, const RlRecord& r, const Ctx& c, Worker& wk) {
    if (!run.accesses) return;
    EdgeKey k;
    k.from = c.id;
    uint32_t node = uint32_t(run.code & kNodeMask);
    uint8_t label = uint8_t(run.code >> 28 & 7);
    uint32_t og = uint32_t(run.code >> 32 & kGenMask);
    uint32_t barrier = 0;
    if (label == kCold) {
      if (og) {
        k.prior_kernel = gen_kernel[og];  // data last touched by an earlier launch: cold, with its origin
        k.prior_node = node;
      }
    } else {
      k.to = node;
      k.label = label;
      barrier = label == kWarpDiff ? c.sync.bar_any : label == kBlock ? c.sync.bar_block : 0;
    }
    EdgeStats& s = wk.buffer.slot(k, barrier, wk.acc).stats;
    s.bytes += run.bytes;
    s.accesses += run.accesses;
    if (run.code != 0) {  // a prior access exists: rar/raw/war/waw (current letter first)
      unsigned cw = (r.access & RL_ACCESS_WRITE) != 0, ow = (run.code & kCodePriorWrote) != 0;
      s.kind[cw * 2 + ow] += run.accesses;
    }
    if (run.code & kCodeSynced) {
      s.synced += run.accesses;
      s.synced_bytes += run.bytes;
    }
  }

  // One lane-granule access against its shadow entry: classify (section 3.1), then install the current access.
  // `same_issue` comes from the SameIssueTable; `global` selects whether older generations are origins
  // (global memory) or stale (shared/local). Returns the outcome code (see Run).
  inline uint64_t touch(Entry* e, uint64_t w0, uint64_t w1, bool global, const RlRecord& r, const Ctx& c,
                        uint32_t tid, bool same_issue) const {
    Entry old = *e;
    e->w0 = w0;
    e->w1 = w1;
    uint32_t og = e_gen(old);
    uint64_t prior_wrote = (old.w1 >> 50 & 1) << 56;
    if (og == gen) {
      uint64_t label;
      if (same_issue) {
        label = kWarpSame;
      } else if (e_block(old) != r.block) {
        label = kGrid;
      } else if (e_tid(old) == tid) {
        label = kThread;
      } else if (e_tid(old) / 32 == r.warp) {
        uint32_t d = (c.sync.wsync - e_wsync(old)) & kWsyncMask;
        label = kWarpDiff | (d != 0 && d <= kWsyncMask / 2 ? 8 : 0);  // 8 << 28 = kCodeSynced
      } else {
        uint32_t d = (c.sync.bsync - e_bsync(old)) & kBsyncMask;
        label = kBlock | (d != 0 && d <= kBsyncMask / 2 ? 8 : 0);
      }
      return e_node(old) | label << 28 | prior_wrote;
    }
    if (og != 0 && global) return e_node(old) | uint64_t(og) << 32 | prior_wrote;
    return 0;
  }

  // All lane-granules of one record (or of the lanes `mask` routed to this worker), specialised per space, for
  // one-granule accesses (size <= 4, the common case: a run's bytes are accesses * size) and for global records
  // whose granules all lie in one shadow page of a region (kDirect: `page` + (g - `page_lo`), no lookup).
  template <unsigned kSpace, bool kOneGranule, bool kDirect>
  void replay_lanes(const RlRecord& r, const Ctx& c, uint32_t mask, unsigned w, Worker& wk, Entry* page,
                    uint64_t page_lo) {
    constexpr bool global = kSpace == RL_SPACE_GLOBAL;
    const bool write = (r.access & RL_ACCESS_WRITE) != 0;
    const uint32_t size = r.size;
    const uint64_t granules = kOneGranule ? 1 : (size + 3) / 4;
    const uint64_t w0 = pack_w0(gen, c.id, c.sync.wsync);
    const uint64_t w1_base = pack_w1(r.block, 0, write, c.sync.bsync);
    const bool check_same = kSpace != RL_SPACE_LOCAL && !(c.flags & kNoOverlap);
    const bool filter = global && !kDirect && W > 1 && !(c.flags & kOneChunk);  // lanes may span other owners
    if (check_same) wk.same.begin(size_t(popcount32(mask)) * granules);
    BlockState* bs = global ? nullptr : &wk.block_state(r.block);
    const uint32_t warp_tid = uint32_t(r.warp) * 32;
    Run run;
    auto flush = [&]() {
      if (kOneGranule) run.bytes = run.accesses * size;
      flush_run(run, r, c, wk);
    };
    for (uint32_t m = mask; m; m &= m - 1) {
      unsigned lane = unsigned(__builtin_ctz(m));
      uint32_t tid = warp_tid + lane;
      uint64_t w1 = w1_base | uint64_t(tid) << 40;
      uint64_t g0 = r.addr[lane] >> 2;
      for (uint64_t k = 0; k < granules; ++k) {
        uint64_t g = g0 + k;
        Entry* e;
        if (kDirect) {
          e = page + (g - page_lo);
        } else if (global) {
          if (filter && owner_of(chunk_of(g), W) != w) continue;
          e = global_entry(g, wk);
        } else if (kSpace == RL_SPACE_SHARED) {
          e = bs->shared.entry(0, g);
        } else {
          e = bs->local.entry(uint64_t(tid) << kLocalThreadShift, g);
        }
        bool same = check_same && wk.same.seen(g);
        uint64_t code = touch(e, w0, w1, global, r, c, tid, same);
        if (code != run.code) {
          flush();
          run.code = code;
          run.accesses = run.bytes = 0;
        }
        run.accesses += 1;
        if (!kOneGranule) run.bytes += std::min<uint64_t>(4, size - 4 * k);
      }
    }
    flush();
  }

  template <unsigned kSpace>
  void replay_space(const RlRecord& r, const Ctx& c, uint32_t mask, unsigned w, Worker& wk) {
    if (r.size <= 4) {
      replay_lanes<kSpace, true, false>(r, c, mask, w, wk, nullptr, 0);
    } else {
      replay_lanes<kSpace, false, false>(r, c, mask, w, wk, nullptr, 0);
    }
  }

  void replay_record(const RlRecord& r, const Ctx& c, uint32_t mask, unsigned w, Worker& wk) {
    switch (r.space) {
      case RL_SPACE_GLOBAL:
        if ((c.flags & kOneChunk) && mask) {
          // One chunk = 256 granules; when it lies inside one shadow page of a region, index the page directly.
          // global_entry on the first lane's granule charges that page exactly as the lane itself would.
          uint64_t g = r.addr[__builtin_ctz(mask)] >> 2, chunk_lo = chunk_of(g) << 8;
          global_entry(g, wk);
          if (chunk_lo - wk.page_lo < wk.page_hi - wk.page_lo && chunk_lo + 256 <= wk.page_hi) {
            if (r.size <= 4) {
              return replay_lanes<RL_SPACE_GLOBAL, true, true>(r, c, mask, w, wk, wk.page, wk.page_lo);
            }
            return replay_lanes<RL_SPACE_GLOBAL, false, true>(r, c, mask, w, wk, wk.page, wk.page_lo);
          }
        }
        return replay_space<RL_SPACE_GLOBAL>(r, c, mask, w, wk);
      case RL_SPACE_SHARED:
        return replay_space<RL_SPACE_SHARED>(r, c, mask, w, wk);
      default:
        return replay_space<RL_SPACE_LOCAL>(r, c, mask, w, wk);
    }
  }

  void phase4(const RlRecord* recs, size_t n, unsigned w) {
    Worker& wk = *workers[w];
    if (W == 1) {
      for (size_t i = 0; i < n; ++i) {
        const RlRecord& r = recs[i];
        if (r.type == RL_REC_MEM && r.space == RL_SPACE_GLOBAL) replay_record(r, ctx[i], r.active_mask, 0, wk);
      }
    } else {
      for_each_routed<true>(&Worker::by_chunk, n, w, recs, [&](const Item& it, Routed<Item>&, uint32_t) {
        const RlRecord& r = recs[it.index];
        Ctx full = ctx[it.index];
        full.sync = (*workers[piece_map[it.index / kPiece].worker]).by_block[block_owner(r.block, W)].sync[it.slot];
        replay_record(r, full, it.mask, w, wk);
      });
    }
    wk.buffer.flush(wk.acc);
  }

  // One parallel run of the pool; each worker adds the seconds `job` took to its busy[step].
  template <class Job>
  void run_timed(Job&& job) {
    pool.run([&](unsigned w) { job(w, *workers[w]); });
  }
  template <class Job>
  static void timed(Worker& wk, int step, Job&& job) {
    auto t0 = std::chrono::steady_clock::now();
    job();
    wk.busy[step] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  void consume(const RlRecord* recs, size_t n) {
    if (!open) throw EngineError("consume() called with no open launch (begin_launch first)");
    for (auto& w : workers) w->page_lo = w->page_hi = 0;  // regions may have changed since the last call
    const size_t batch = batch_records(W);
    const auto start = std::chrono::steady_clock::now();
    while (n > 0) {
      size_t b = std::min(n, batch);
      ctx.resize(b);
      // Phases 1 and 2 in one run: a piece whose PCs are all known (the steady state) goes on to phase 2 at
      // once; the others wait for the serial insertion of their new PCs and run phase 2 in a second run.
      next_piece.store(0);
      piece_map.resize(pieces_of(b));
      run_timed([&](unsigned w, Worker& wk) { phases12(recs, b, w, wk); });
      auto t0 = std::chrono::steady_clock::now();
      bool late = finish_phase1(recs);
      workers[0]->busy[1] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (late) {
        run_timed([&](unsigned w, Worker& wk) {
          if (wk.deferred.empty()) return;
          timed(wk, 2, [&] {
            for (uint32_t piece : wk.deferred) phase2_piece(recs, b, piece, w, wk);
          });
          finish_routing(wk);
        });
      }
      run_timed([&](unsigned w, Worker& wk) { timed(wk, 3, [&] { phase3(recs, b, w); }); });
      run_timed([&](unsigned w, Worker& wk) { timed(wk, 4, [&] { phase4(recs, b, w); }); });
      for (int step = 0; step < 5; ++step) {
        double most = 0;
        for (auto& w : workers) {
          most = std::max(most, w->busy[step]);
          counters.phase_cpu_seconds[step] += w->busy[step];
          w->busy[step] = 0;
        }
        counters.phase_seconds[step] += most;
      }
      launch_records += b;
      counters.records += b;
      recs += b;
      n -= b;
    }
    counters.consume_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  // ---- launches ------------------------------------------------------------------------------------------
  void begin_launch(const LaunchInfo& l) {
    if (open) throw EngineError("begin_launch() while launch " + std::to_string(launch.launch_id) + " is open");
    // Each dimension first: the product of three unchecked 32-bit dimensions can wrap into the valid range.
    uint64_t threads = 1;
    for (int d = 0; d < 3; ++d) threads *= std::min<uint64_t>(l.block[d], 1025);
    if (threads == 0 || threads > 1024) {
      throw EngineError("launch " + std::to_string(l.launch_id) + ": block of " + std::to_string(l.block[0]) + "x" +
                        std::to_string(l.block[1]) + "x" + std::to_string(l.block[2]) +
                        " threads (CUDA allows 1 to 1024 threads per block)");
    }
    if (gen + 1 >= kMaxGen) wrap_generations();
    ++gen;
    gen_kernel.push_back(l.kernel_function_id);
    launch = l;
    threads_per_block = uint32_t(threads);
    warps_per_block = uint32_t((threads + 31) / 32);
    open = true;
    launch_records = 0;
  }
  // 2^24 launches: forget every global entry (they could alias new generations). Cross-launch origins older
  // than this point are lost; docs/engine.md says so.
  void wrap_generations() {
    for (auto& r : regions) r->reset();
    for (auto& w : workers) w->fallback.clear();
    gen = 0;
    gen_kernel.assign(1, kNone);
  }
  void end_launch(bool complete) {
    if (!open) throw EngineError("end_launch() with no open launch");
    GroupKey key{};
    key.kernel = launch.kernel_function_id;
    for (int d = 0; d < 3; ++d) {
      key.grid[d] = launch.grid[d];
      key.block[d] = launch.block[d];
    }
    key.dyn = launch.dynamic_shared_bytes;
    auto it = group_index.find(key);
    if (it == group_index.end()) {
      it = group_index.emplace(key, groups.size()).first;
      groups.emplace_back();
      groups.back().key = key;
    }
    Group& g = groups[it->second];
    g.launches.push_back(launch.launch_id);
    if (!complete) g.partial.push_back(launch.launch_id);
    g.records += launch_records;
    for (auto& w : workers) {
      g.acc.merge(w->acc);
      w->reset_launch();
    }
    open = false;
  }

  void add_allocation(uint64_t address, uint64_t size) {
    if (size == 0) return;
    if (size - 1 > ~0ull - address) {  // the last byte, address + size - 1, would lie beyond 2^64 - 1
      throw EngineError("allocation at 0x" + hex(address) + " of " + std::to_string(size) +
                        " bytes runs past the end of the 64-bit address space");
    }
    auto it = std::upper_bound(regions.begin(), regions.end(), address,
                               [](uint64_t a, const std::unique_ptr<RegionShadow>& r) { return a < r->base(); });
    // Compared by last byte: an allocation may end at the very top of the address space.
    bool overlaps_prev = it != regions.begin() && (*(it - 1))->base() + ((*(it - 1))->size() - 1) >= address;
    bool overlaps_next = it != regions.end() && address + (size - 1) >= (*it)->base();
    if (overlaps_prev || overlaps_next) {
      throw EngineError("allocation at 0x" + hex(address) + " overlaps an allocation that was not freed");
    }
    regions.emplace(it, new RegionShadow(address, size, &budget));
    for (auto& w : workers) w->region_hint = 0;
  }
  void free_allocation(uint64_t address) {
    for (auto it = regions.begin(); it != regions.end(); ++it) {
      if ((*it)->base() == address) {
        regions.erase(it);
        for (auto& w : workers) w->region_hint = 0;
        return;
      }
    }
    throw EngineError("free of unknown allocation 0x" + hex(address));
  }
  static std::string hex(uint64_t v) {
    char buf[17];
    auto end = std::to_chars(buf, buf + sizeof buf, v, 16).ptr;
    return std::string(buf, end);
  }

  std::string to_json() const;
  void check_usable() const;
  std::string failure;  // what the consume() call that failed threw; nonempty: every later call throws
};

// ---- JSON ----------------------------------------------------------------------------------------------------
namespace {

// Appends text and integers to a string. Not std::ostringstream: the stream's numeric output goes through the
// global locale, which is not set up when the module carries its own static libstdc++ (the device image's
// g++ 13 builds it that way; inserting the first integer crashed there) — and to_chars is faster anyway.
struct JsonOut {
  std::string s;
  JsonOut& operator<<(const char* text) { s += text; return *this; }
  JsonOut& operator<<(char c) { s += c; return *this; }
  template <typename T, typename = std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, char> &&
                                                    !std::is_same_v<T, bool>>>
  JsonOut& operator<<(T v) {
    char buf[24];
    s.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
    return *this;
  }
};

const char* kLabelNames[kLabelCount] = {"cold", "thread", "warp_same_inst", "warp_diff_inst", "block", "grid"};
const char* kSpaceNames[4] = {"null", "\"global\"", "\"shared\"", "\"local\""};
const char* kBarrierKinds[4] = {"null", "\"block\"", "\"warp\"", "\"mbarrier\""};

void put_hist(JsonOut& os, const char* name, const Histogram& h) {
  os << ",\"" << name << "\":[";
  bool first = true;
  for (size_t v = 0; v < h.counts.size(); ++v) {
    if (!h.counts[v]) continue;
    os << (first ? "" : ",") << '[' << v << ',' << h.counts[v] << ']';
    first = false;
  }
  for (const auto& kv : h.large) {
    os << (first ? "" : ",") << '[' << kv.first << ',' << kv.second << ']';
    first = false;
  }
  os << ']';
}

const char* type_name(uint8_t access) {
  bool r = access & RL_ACCESS_READ, w = access & RL_ACCESS_WRITE;
  if (r && w) return "\"atomic\"";
  return w ? "\"write\"" : "\"read\"";
}

}  // namespace

std::string Engine::Impl::to_json() const {
  JsonOut os;
  os << "{\"format\":\"reuselens-engine\",\"version\":" << RL_ENGINE_JSON_VERSION << ",\"kernels\":[";
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const Group& g = groups[gi];
    // Dense per-kernel node ids: 0 = Cold Miss, then by (function_id, pc).
    std::vector<uint32_t> ids;
    for (const auto& kv : g.acc.nodes) ids.push_back(kv.first);
    std::sort(ids.begin(), ids.end(), [&](uint32_t a, uint32_t b) {
      return std::make_pair(nodes[a].function_id, nodes[a].pc) < std::make_pair(nodes[b].function_id, nodes[b].pc);
    });
    std::unordered_map<uint32_t, uint32_t> local;
    local[0] = 0;
    for (size_t i = 0; i < ids.size(); ++i) local[ids[i]] = uint32_t(i + 1);
    os << (gi ? "," : "") << "{\"id\":\"k" << gi << "\",\"kernel_function_id\":" << g.key.kernel
       << ",\"function_id\":" << g.key.kernel << ",\"grid\":[" << g.key.grid[0] << ','
       << g.key.grid[1] << ',' << g.key.grid[2] << "],\"block\":[" << g.key.block[0] << ',' << g.key.block[1] << ','
       << g.key.block[2] << "],\"dynamic_shared_bytes\":" << g.key.dyn << ",\"launches\":[";
    for (size_t i = 0; i < g.launches.size(); ++i) os << (i ? "," : "") << g.launches[i];
    os << "],\"partial_launches\":[";
    for (size_t i = 0; i < g.partial.size(); ++i) os << (i ? "," : "") << g.partial[i];
    os << "],\"records\":" << g.records << ",\"nodes\":[{\"id\":0,\"function_id\":null,\"pc\":null,\"space\":null,"
       << "\"type\":null,\"size\":0,\"async_copy\":false,\"executions\":0,\"lanes\":[],\"addresses\":[],"
       << "\"sectors\":[],\"sectors_ideal\":[],\"wavefronts\":[],\"wavefronts_ideal\":[],\"bytes\":0}";
    for (size_t i = 0; i < ids.size(); ++i) {
      const NodeInfo& n = nodes[ids[i]];
      const NodeStats& s = g.acc.nodes.at(ids[i]);
      os << ",{\"id\":" << i + 1 << ",\"function_id\":" << n.function_id << ",\"pc\":" << n.pc
         << ",\"space\":" << kSpaceNames[n.space] << ",\"type\":" << type_name(n.access) << ",\"size\":" << n.size
         << ",\"async_copy\":" << ((n.flags & RL_FLAG_ASYNC_COPY) ? "true" : "false")
         << ",\"executions\":" << s.executions;
      put_hist(os, "lanes", s.lanes);
      put_hist(os, "addresses", s.addresses);
      put_hist(os, "sectors", s.sectors);
      put_hist(os, "sectors_ideal", s.sectors_ideal);
      put_hist(os, "wavefronts", s.wavefronts);
      put_hist(os, "wavefronts_ideal", s.wavefronts_ideal);
      os << ",\"bytes\":" << s.bytes << '}';
    }
    std::vector<std::pair<EdgeKey, EdgeStats>> edges;
    for (const auto& kv : g.acc.edges) {
      EdgeKey k = kv.first;
      k.from = local.at(k.from);
      k.to = local.at(k.to);
      edges.emplace_back(k, kv.second);
    }
    std::sort(edges.begin(), edges.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    os << "],\"edges\":[";
    for (size_t i = 0; i < edges.size(); ++i) {
      const EdgeKey& k = edges[i].first;
      const EdgeStats& s = edges[i].second;
      os << (i ? "," : "") << "{\"from\":" << k.from << ",\"to\":" << k.to << ",\"label\":\"" << kLabelNames[k.label]
         << "\",\"bytes\":" << s.bytes << ",\"accesses\":" << s.accesses << ",\"rar\":" << s.kind[0] << ",\"raw\":" << s.kind[1]
         << ",\"war\":" << s.kind[2] << ",\"waw\":" << s.kind[3] << ",\"synced\":" << s.synced
         << ",\"synced_bytes\":" << s.synced_bytes << ",\"prior_kernel\":";
      if (k.prior_kernel == kNone) {
        os << "null}";
      } else {
        const NodeInfo& p = nodes[k.prior_node];
        os << "{\"kernel_function_id\":" << k.prior_kernel << ",\"function_id\":" << p.function_id
           << ",\"pc\":" << p.pc << ",\"bytes\":" << s.bytes << "}}";
      }
    }
    os << "],\"barriers\":[";
    std::vector<uint32_t> bids;
    for (const auto& kv : g.acc.barriers) bids.push_back(kv.first);
    std::sort(bids.begin(), bids.end(), [&](uint32_t a, uint32_t b) {
      return std::make_pair(barriers[a].function_id, barriers[a].pc) <
             std::make_pair(barriers[b].function_id, barriers[b].pc);
    });
    bool first = true;
    for (uint32_t b : bids) {
      if (b == 0) continue;  // spans with no barrier id cannot occur; guard against a zero key
      const BarrierInfo& bi = barriers[b];
      const BarrierStats& bs = g.acc.barriers.at(b);
      uint64_t acc = 0, bytes = 0;
      std::vector<std::pair<EdgeKey, SpanStats>> spans;
      for (const auto& kv : bs.spans) {
        EdgeKey k = kv.first;
        k.from = local.at(k.from);
        k.to = local.at(k.to);
        spans.emplace_back(k, kv.second);
        acc += kv.second.accesses;
        bytes += kv.second.bytes;
      }
      std::sort(spans.begin(), spans.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
      os << (first ? "" : ",") << "{\"function_id\":" << bi.function_id << ",\"pc\":" << bi.pc
         << ",\"kind\":" << kBarrierKinds[bi.kind] << ",\"executions\":" << bs.executions
         << ",\"spanned_cross_thread_edges\":" << spans.size() << ",\"spanned_accesses\":" << acc
         << ",\"spanned_bytes\":" << bytes << ",\"spans\":[";
      for (size_t i = 0; i < spans.size(); ++i) {
        os << (i ? "," : "") << "{\"from\":" << spans[i].first.from << ",\"to\":" << spans[i].first.to
           << ",\"label\":\"" << kLabelNames[spans[i].first.label] << "\",\"accesses\":" << spans[i].second.accesses
           << ",\"bytes\":" << spans[i].second.bytes << '}';
      }
      os << "]}";
      first = false;
    }
    os << "]}";
  }
  os << "],\"stats\":{\"records\":" << counters.records << ",\"lane_accesses\":" << counters.lane_accesses
     << ",\"peak_shadow_bytes\":" << budget.peak() << ",\"workers\":" << W << "}}";
  return std::move(os.s);
}

// ---- public API ----------------------------------------------------------------------------------------------
// An error thrown by consume() can leave a batch half applied (some blocks replayed, others not), so the engine
// refuses every later call instead of returning figures that mix in a partial batch (engine.h).
void Engine::Impl::check_usable() const {
  if (!failure.empty()) throw EngineError("engine unusable after an earlier error: " + failure);
}
Engine::Engine(const EngineConfig& config) : impl_(new Impl(config)) {}
Engine::~Engine() = default;
void Engine::add_allocation(uint64_t address, uint64_t size) {
  impl_->check_usable();
  impl_->add_allocation(address, size);
}
void Engine::free_allocation(uint64_t address) {
  impl_->check_usable();
  impl_->free_allocation(address);
}
void Engine::begin_launch(const LaunchInfo& launch) {
  impl_->check_usable();
  impl_->begin_launch(launch);
}
void Engine::consume(const RlRecord* records, size_t count) {
  impl_->check_usable();
  try {
    impl_->consume(records, count);
  } catch (const std::exception& e) {
    impl_->failure = e.what();
    throw;
  }
}
void Engine::end_launch(bool complete) {
  impl_->check_usable();
  impl_->end_launch(complete);
}
std::string Engine::to_json() const {
  impl_->check_usable();
  if (impl_->open) throw EngineError("to_json() while a launch is open (end_launch first)");
  return impl_->to_json();
}
EngineStats Engine::stats() const {
  EngineStats s = impl_->counters;
  s.shadow_bytes = impl_->budget.used();
  s.peak_shadow_bytes = impl_->budget.peak();
  return s;
}

}  // namespace reuselens
