// Engine::Impl, the engine behind the public API of reuselens/engine.h. Its members are defined by step, one file
// each (docs/engine.md, "Source files"): record_ids.cpp (phase 1), distributions.cpp (phase 2), blocks.cpp
// (phase 3), shadow_replay.cpp (the labels, phases 3 and 4), consume.cpp (the batch driver), launches.cpp,
// allocations.cpp, engine_json.cpp (the result) and engine.cpp (the public API).
// Private to the engine's sources: it brings the detail namespace into reuselens.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "batch.h"
#include "instructions.h"
#include "kernel_group.h"
#include "lane_addresses.h"
#include "pool.h"
#include "reuselens/engine.h"
#include "reuselens/object_touches.h"
#include "shadow.h"
#include "stats.h"
#include "worker.h"

namespace reuselens {

using namespace detail;

struct Engine::Impl {
  explicit Impl(const EngineConfig& c);

  EngineConfig config;
  bool approx_on = false;  // config.values && config.value_approx > 0
  Budget budget;
  WorkerPool pool;
  unsigned W;
  uint64_t block_magic;  // BlockOwners::magic_for(W)
  unsigned block_owner(uint64_t block) const { return BlockOwners::of(block, W, block_magic); }
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

  // Two batches may be in flight (consume.cpp): phases 1-2 fill slot route_slot while phases 3-4 read slot
  // step_slot. Each slot: the records' contexts and who routed each piece (phases 3-4 walk pieces in order).
  // wide: the allocations the batch owns by wider units than the chunk (choose_wide_units), which its routing
  // (phase 2) and its global step (phase 4) both read.
  struct BatchSlot {
    std::vector<Ctx> ctx;
    std::vector<PieceRef> piece_map;
    WideUnits wide;
  };
  BatchSlot batch_slots[2];
  unsigned route_slot = 0, step_slot = 0;
  std::vector<Ctx>& route_ctx() { return batch_slots[route_slot].ctx; }
  const std::vector<Ctx>& step_ctx() const { return batch_slots[step_slot].ctx; }
  std::vector<uint32_t> misses;  // finish_phase1: records with new PCs, all workers, in record order
  // phases 1-2: the next piece of the batch nobody has taken yet. A line of its own: every piece takes it while
  // other workers' steps 3-4 read the batch slots beside it (pipelined runs, consume.cpp).
  struct alignas(64) NextPiece {
    std::atomic<size_t> at{0};
  } next_piece;
  // Phases 3 and 4 in one run (fused_blocks_and_global): per block owner, how many pieces of the batch its block
  // step has done (release: the Sync slots of those pieces are written); kFusedAbort once it threw.
  struct alignas(64) PieceProgress {
    std::atomic<size_t> done{0};
  };
  static constexpr size_t kFusedAbort = ~size_t(0);
  std::unique_ptr<PieceProgress[]> block_progress;
  static bool fusion_enabled();
  static bool pipelining_enabled();
  static bool wide_units_enabled();
  void fused_blocks_and_global(const RlRecord* recs, size_t n, unsigned w, Worker& wk);
  void await_block_owner(unsigned owner, size_t piece, size_t* known, Worker& wk);
  std::vector<Group> groups;
  std::map<GroupKey, size_t> group_index;
  EngineStats counters;
  std::string failure;  // what the consume() call that failed threw; nonempty: every later call throws

  // ---- phase 1: ids (record_ids.cpp) ---------------------------------------------------------------------
  uint32_t node_id(const RlRecord& r);
  uint32_t barrier_id(const RlRecord& r);
  uint32_t find_id(const RlRecord& r, Worker& wk) const;
  bool plausible(const RlRecord& r) const;
  std::string check_record(const RlRecord& r) const;
  enum class PieceState { kClean, kNewPcs, kMalformed };
  PieceState phase1_piece(const RlRecord* recs, size_t n, size_t piece, Worker& wk);
  bool finish_phase1(const RlRecord* recs);

  // ---- phase 2: distributions and routing (distributions.cpp) --------------------------------------------
  static std::pair<uint64_t, uint64_t> global_distribution(const RlRecord& r, Ctx& c, NodeStats& s, uint64_t* a,
                                                           unsigned lanes);
  static void shared_distribution(const RlRecord& r, Ctx& c, NodeStats& s, SharedShapes& shapes);
  void route_global(const RlRecord& r, uint32_t i, uint32_t slot, const WideUnits& wide, Worker& wk);
  WideUnits choose_wide_units(const RlRecord* recs, size_t n);
  uint64_t wide_unit_batches = 0;  // batches routed with a unit wider than the chunk (EngineStats)
  void phase2_piece(const RlRecord* recs, size_t n, size_t piece, unsigned w, Worker& wk);
  void finish_routing(Worker& wk);
  void distribute_and_route(const RlRecord& r, size_t i, Worker& wk);

  // ---- phase 3: blocks (blocks.cpp) ----------------------------------------------------------------------
  void on_barrier(const RlRecord& r, const Ctx& c, Worker& wk);
  uint32_t warp_lanes(uint32_t warp) const;
  void on_exit(const RlRecord& r, Worker& wk);
  void block_step(const RlRecord& r, const Ctx& c, Sync& out, unsigned w, Worker& wk);
  void prefetch_block(const RlRecord& r, Worker& wk);
  void phase3(const RlRecord* recs, size_t n, unsigned w, bool publish = false);

  // ---- shadow replay, phases 3 and 4 (shadow_replay.cpp) -------------------------------------------------
  struct Run;
  // The region holding granule, or null; `hint`, the index of the region found last, is tried first (inline: most
  // lanes of a record and most records in a row lie in one region).
  RegionShadow* find_region(uint64_t granule, size_t& hint) {
    if (hint < regions.size() && regions[hint]->contains_granule(granule)) return regions[hint].get();
    return search_region(granule, hint);
  }
  RegionShadow* search_region(uint64_t granule, size_t& hint);
  Entry* global_slot(uint64_t granule, Worker& wk);
  Entry* global_entry(uint64_t granule, Worker& wk);
  void flush_run(const Run& run, const RlRecord& r, const Ctx& c, Worker& wk);
  uint64_t touch(Entry* e, uint64_t w0, uint64_t w1, bool global, const RlRecord& r, const Ctx& c, uint32_t tid,
                 bool same_issue) const;
  uint64_t touch_shared(uint64_t* e, uint64_t now, const RlRecord& r, const Ctx& c, uint32_t tid,
                        bool same_issue) const;
  void count_followers(const RlRecord& r, const Ctx& c, Worker& wk);
  struct Repeats {
    uint64_t same = 0, approx = 0;
  };
  Repeats broadcast_repeats(const RlRecord& r, const RlRecord& values) const;
  bool near_value(uint32_t size, uint64_t old, uint64_t now, uint64_t value) const;
  static uint64_t* global_value_slot(uint64_t g, RegionShadow* region, Worker& wk);
  bool replay_consecutive(const RlRecord& r, const Ctx& c, uint32_t mask, unsigned w, Worker& wk, Entry* e);
  bool replay_segment(const RlRecord& r, const Ctx& c, unsigned w, Worker& wk, Entry* e);
  uint64_t segment_records() const {
    uint64_t n = 0;
    for (const auto& w : workers) n += w->segment_records;
    return n;
  }
  static bool alike_entries(const Entry* e, unsigned count, unsigned shift);
  bool consecutive_code(const RlRecord& r, const Ctx& c, unsigned first, unsigned n, const Entry* e, uint64_t* code);
  void write_consecutive(const RlRecord& r, const Ctx& c, unsigned first, unsigned n, unsigned shift, Entry* e,
                         uint64_t code, unsigned w, Worker& wk);
  template <class SlotOf>
  void flush_consecutive_values(const RlRecord& r, const Ctx& c, uint64_t code, unsigned n, unsigned shift,
                                const RlRecord& values, SlotOf slot_of, RegionShadow* region, unsigned w, Worker& wk);
  bool replay_shared_consecutive(const RlRecord& r, const Ctx& c, uint32_t mask, Worker& wk);
  bool replay_shared_groups(const RlRecord& r, const Ctx& c, uint32_t mask, Worker& wk, uint64_t granules);
  bool replay_shared_disjoint(const RlRecord& r, const Ctx& c, uint32_t mask, Worker& wk, uint64_t granules);
  template <unsigned kSpace, bool kOneGranule, bool kDirect>
  void replay_lanes(const RlRecord& r, const Ctx& c, uint32_t mask, unsigned w, Worker& wk, Entry* page,
                    uint64_t page_lo);
  template <unsigned kSpace>
  void replay_space(const RlRecord& r, const Ctx& c, uint32_t mask, unsigned w, Worker& wk);
  void replay_record(const RlRecord& r, const Ctx& c, uint32_t mask, unsigned w, Worker& wk);
  bool direct_window(const RlRecord& r, const Ctx& c, uint32_t mask, Worker& wk);
  void replay_in_window(const RlRecord& r, const Ctx& c, uint32_t mask, unsigned w, Worker& wk);
  bool replay_lane_runs(const RlRecord& r, const Ctx& c, uint32_t mask, unsigned w, Worker& wk);
  template <unsigned kSpace>
  uint64_t* value_slot(uint64_t g, uint32_t tid, BlockState* bs, Worker& wk, RegionShadow* region) const;
  template <unsigned kSpace>
  uint64_t compare_value(uint64_t code, const RlRecord& values, unsigned lane, uint64_t g, uint64_t k, uint32_t size,
                         uint32_t tid, BlockState* bs, Worker& wk, RegionShadow* region, unsigned w) const;
  void prefetch_lanes(const RlRecord& r, const Ctx& c, uint32_t mask, size_t& hint, LinesAhead& lines);
  void phase4(const RlRecord* recs, size_t n, unsigned w, bool await = false);

  // Walks what phase 2 routed to owner `w`, in record order: piece k of the batch was routed by worker
  // piece_map[k].worker as its piece_map[k].local-th piece. The records come from all over the batch (other cores'
  // caches), so the next ones are prefetched while the current one is replayed: their header and context, and the lane
  // addresses of those whose lanes are replayed (phase 4's whole records, phase 3's shared and local ones:
  // lanes_wanted); phase 3 writes the context (barrier counters), so it asks for the line to write. A second cursor
  // runs kWalkAhead items ahead of the visit, across pieces: at twelve workers a piece of 64 records holds five or six
  // of an owner's, and a look-ahead confined to one piece's items asked for almost nothing (until session 39).
  // visit(item, list, x, ahead): ahead.item(d), the item d places further on, for the visit's own prefetching.
  // after_piece(k), if given, runs once piece k's items are visited.
  template <class T, class Visit, class AfterPiece = std::nullptr_t>
  void for_each_routed(std::vector<Routed<T>> Worker::Routing::* routed, size_t n, unsigned w, const RlRecord* recs,
                       Visit visit, AfterPiece after_piece = nullptr) {
    const std::vector<Ctx>& ctx = step_ctx();
    const std::vector<PieceRef>& piece_map = batch_slots[step_slot].piece_map;
    const size_t pieces = pieces_of(n);
    // Piece `piece`'s items for this owner: list->items[first, end), in the list of the worker that routed it.
    struct Bounds {
      Routed<T>* list;
      uint32_t first, end;
    };
    const auto bounds = [&](size_t piece) -> Bounds {
      Routed<T>& list = (workers[piece_map[piece].worker]->routing[step_slot].*routed)[w];
      const uint32_t j = piece_map[piece].local;
      return {&list, j ? list.ends[j - 1] : 0, list.ends[j]};
    };
    // The cursor ahead: the next item to ask for is items[x] of `list`, while x < hi; then piece `next` is opened.
    size_t next = 0;
    Routed<T>* list = nullptr;
    uint32_t x = 0, hi = 0;
    const T* ring[kWalkRing];
    size_t fetched = 0;
    const auto fetch = [&] {
      while (x == hi) {
        if (next == pieces) return;
        const Bounds b = bounds(next++);
        list = b.list;
        x = b.first;
        hi = b.end;
      }
      const T& item = list->items[x];
      const uint32_t i = record_index(item);
      const char* p = reinterpret_cast<const char*>(recs + i);
      __builtin_prefetch(p);
      if (lanes_wanted(item)) {
        __builtin_prefetch(p + 64);
        __builtin_prefetch(p + 128);
        __builtin_prefetch(p + 192);
        __builtin_prefetch(p + 256);
      } else if constexpr (std::is_same_v<T, Item>) {
        // Handed over: the first active lane's address and, by two, the last's, as they lie in a full warp (a record
        // of 288 bytes starts half-way into a line every other record, its lane slots then in the lines after it).
        __builtin_prefetch(p + offsetof(RlRecord, addr));
        if (last_lane_wanted(item)) __builtin_prefetch(p + offsetof(RlRecord, addr) + 8 * (RL_WARP_SIZE - 1));
      }
      __builtin_prefetch(&ctx[i], 0);
      if constexpr (!std::is_same_v<T, Item>) __builtin_prefetch(&list->sync[x], 1);
      ring[fetched++ % kWalkRing] = &item;
      ++x;
    };
    for (size_t k = 0; k < kWalkAhead; ++k) fetch();
    size_t visited = 0;
    for (size_t piece = 0; piece < pieces; ++piece) {
      const Bounds b = bounds(piece);
      const T* items = b.list->items.data();
      for (uint32_t at = b.first; at < b.end; ++at, ++visited) {
        fetch();
        visit(items[at], *b.list, at, RoutedAhead<T>{ring, visited, fetched});
      }
      if constexpr (!std::is_same_v<AfterPiece, std::nullptr_t>) after_piece(piece);
    }
  }

  // ---- the batch driver (consume.cpp) --------------------------------------------------------------------
  void phases12(const RlRecord* recs, size_t n, unsigned w, Worker& wk);
  void consume(const RlRecord* recs, size_t n);
  void consume_packed(const RlSlot* slots, size_t count);
  std::vector<RlRecord> unpacked;            // consume_packed's records, one batch at a time
  std::vector<const RlSlot*> packed_starts;  // where each of them starts in the packed stream
  // While consume_packed's batch runs: its records' starts, unpacked piece by piece in phases12
  const RlSlot* const* batch_packed = nullptr;
  void consume_records(const RlRecord* recs, const RlRecord* const* values, size_t n);

  // ---- value mode (consume.cpp, docs/engine.md "Value redundancy") --------------------------------------
  // consume() takes the companions out of the records (compact) and keeps, per record, its companion or null
  // (companions); the steps find a record's companion through values_of. A record flagged RL_FLAG_VALUES that
  // ends a consume() call waits in held_record for its companion, the next call's first record.
  std::vector<RlRecord> compact;
  std::vector<const RlRecord*> companions;
  RlRecord held_record{}, held_companion{};
  bool holding = false;
  const RlRecord* batch_recs = nullptr;
  const RlRecord* const* batch_values = nullptr;
  const RlRecord* values_of(const RlRecord& r) const { return batch_values ? batch_values[&r - batch_recs] : nullptr; }
  void consume_values(const RlRecord* recs, size_t n);
  void release_held();
  static void value_distribution(const RlRecord& r, const RlRecord& v, ValueCounts& s);
  // One run of the pool over a batch of `records`: parallel, or on this thread below
  // config.inline_batch_records; each worker adds the seconds `job` took to its busy[step].
  template <class Job>
  void run_timed(size_t records, Job&& job) {
    if (records < config.inline_batch_records)
      pool.run_inline([&](unsigned w) { job(w, *workers[w]); });
    else
      pool.run([&](unsigned w) { job(w, *workers[w]); });
  }
  template <class Job>
  static void timed(Worker& wk, int step, Job&& job) {
    auto t0 = std::chrono::steady_clock::now();
    job();
    wk.busy[step] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  // ---- launches (launches.cpp) and allocations (allocations.cpp) -----------------------------------------
  void begin_launch(const LaunchInfo& l);
  void wrap_generations();
  void end_launch(bool complete);
  void add_allocation(uint64_t address, uint64_t size);
  void free_allocation(uint64_t address);
  void forget_cached_regions();

  // ---- which allocations each launch read and wrote (allocations.cpp): the object touches ----------------
  using ObjectTouch = reuselens::ObjectTouch;  // reuselens/object_touches.h, shared with the collector
  using LaunchTouches = reuselens::LaunchTouches;
  using ObjectSummary = reuselens::ObjectSummary;
  std::vector<LaunchTouches> object_touches;
  std::vector<ObjectTouch> open_touches;  // the open launch's, of allocations freed meanwhile
  // Profiles of the first kMaxProfiledObjects allocations only (object_touches.h), as many as run.json lists (the
  // collector's cap): the memory analysis refuses a run past it, and a profile per allocation of a long run would
  // grow without bound.
  std::vector<ObjectSummary> freed_objects;
  uint64_t allocations_seen = 0;
  std::vector<uint64_t> region_order;  // parallel to `regions`: each region's place in allocation order
  static ObjectSummary summarize(const RegionShadow& region, uint64_t order);
  void note_object_touches(RegionShadow& region);
  void close_object_touches();
  std::string object_touches_json() const;

  // ---- the result (engine_json.cpp) and the public API's guard (engine.cpp) ------------------------------
  std::string to_json() const;
  void check_usable() const;
};

}  // namespace reuselens
