// The batch driver of consume(): the steps of each batch run in turn on the worker pool, and their time is
// counted per step (EngineStats).
#include "engine_impl.h"
#include "switches.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>

namespace reuselens {

// Phases 1 and 2 of one batch, one worker's share: pieces are taken in increasing order from a shared
// counter. A worker stops at its first malformed record; pieces before it went to the other workers, so
// the lowest index any worker reports is the first malformed record of the batch.
void Engine::Impl::phases12(const RlRecord* recs, size_t n, unsigned w, Worker& wk) {
  Worker::Routing& routing = wk.routing[route_slot];
  for (auto& v : routing.by_block) v.clear();
  for (auto& v : routing.by_chunk) v.clear();
  routing.pieces_routed = 0;
  wk.misses.clear();
  wk.deferred.clear();
  wk.error_index = SIZE_MAX;
  wk.scratch.resize(64);
  for (;;) {
    size_t piece = next_piece.at.fetch_add(1, std::memory_order_relaxed);
    if (piece >= pieces_of(n)) break;
    PieceState state = PieceState::kClean;
    timed(wk, 0, [&] {
      if (batch_packed) {  // consume_packed: this piece's records are still packed (recs is `unpacked`)
        for (size_t i = piece * kPiece, hi = std::min(n, i + kPiece); i < hi; ++i)
          unpack_for_engine(batch_packed[i], &unpacked[i]);
      }
      state = phase1_piece(recs, n, piece, wk);
    });
    if (state == PieceState::kMalformed) break;
    if (state == PieceState::kNewPcs) {
      wk.deferred.push_back(uint32_t(piece));
    } else {
      timed(wk, 2, [&] { phase2_piece(recs, n, piece, w, wk); });
    }
  }
  if (wk.deferred.empty()) finish_routing(wk);
}

// Phases 3 and 4 of a batch in one run of the pool (docs/engine.md, "Determinism and parallelism"): each worker
// does its block step, then its global step, which reads each record's barrier counters (Sync) once the record's
// block owner has announced that piece done (block_progress). Owners still walk their records in record order,
// so results are those of two runs; what changes is the barrier between the steps: a worker whose block step was
// light starts its global step instead of waiting for the busiest block owner, and the run ends when the busiest
// worker's two steps together are done rather than the sum of each step's busiest. Only on the pool's threads
// (run, not run_inline, where one thread runs the shares in turn and the first global step would wait for a block
// step not yet begun). REUSELENS_ENGINE_FUSE=0 runs the two steps apart (to measure what this buys).
bool Engine::Impl::fusion_enabled() {
  static const bool enabled = switched_on("REUSELENS_ENGINE_FUSE");
  return enabled;
}
namespace {
struct BlockOwnerFailed {};  // await_block_owner: the owner's block step threw; the pool reports its error
}  // namespace
void Engine::Impl::fused_blocks_and_global(const RlRecord* recs, size_t n, unsigned w, Worker& wk) {
  try {
    timed(wk, 3, [&] { phase3(recs, n, w, true); });
  } catch (...) {  // the chunk owners waiting on this worker's pieces stop
    block_progress[w].done.store(kFusedAbort, std::memory_order_release);
    throw;
  }
  wk.block_waits = 0;
  try {
    timed(wk, 4, [&] { phase4(recs, n, w, true); });
  } catch (const BlockOwnerFailed&) {
  }
  wk.busy[4] -= wk.block_waits;  // waiting for block owners is no global-step work: it counts as hand-over
}
// Phases 1-2 of the next batch in the run of this one's steps 3-4 (consume_records). REUSELENS_ENGINE_PIPELINE=0
// runs them apart, to measure what this buys.
bool Engine::Impl::pipelining_enabled() {
  static const bool enabled = switched_on("REUSELENS_ENGINE_PIPELINE");
  return enabled;
}
// Allocations owned by units wider than the chunk where it pays (choose_wide_units). REUSELENS_ENGINE_WIDE_UNITS=0
// keeps the chunk, to measure what this buys.
bool Engine::Impl::wide_units_enabled() {
  static const bool enabled = switched_on("REUSELENS_ENGINE_WIDE_UNITS");
  return enabled;
}
// Waits until block owner `owner` has done piece `piece` of the batch; *known: how many it has done, as last seen.
// Spins, then yields, then sleeps in short naps: a wait behind a busy owner must not keep a core from the app and
// the collector beside the engine (its workers run at a lower priority online for the same reason). The time is
// the worker's block_waits.
void Engine::Impl::await_block_owner(unsigned owner, size_t piece, size_t* known, Worker& wk) {
  const std::atomic<size_t>& done = block_progress[owner].done;
  const size_t already = done.load(std::memory_order_acquire);
  if (already != kFusedAbort && already > piece) {  // the common case: no wait to time
    *known = already;
    return;
  }
  const auto t0 = std::chrono::steady_clock::now();
  struct Waited {  // counted however the wait ends
    Worker& wk;
    std::chrono::steady_clock::time_point t0;
    ~Waited() { wk.block_waits += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); }
  } waited{wk, t0};
  for (unsigned spins = 0;; ++spins) {
    const size_t now = done.load(std::memory_order_acquire);
    if (now == kFusedAbort) throw BlockOwnerFailed{};
    if (now > piece) {
      *known = now;
      return;
    }
    if (spins < 1024) {
      cpu_relax();
    } else if (spins < 2048) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }
}

void Engine::Impl::consume(const RlRecord* recs, size_t n) {
  if (!open) throw EngineError("consume() called with no open launch (begin_launch first)");
  if (config.values) return consume_values(recs, n);
  consume_records(recs, nullptr, n);
}

// A packed stream (packed_records.h) is consumed a batch at a time: a serial walk finds where each record starts,
// and each worker unpacks a piece into `unpacked` as it takes the piece in phase 1 (phases12), while the piece's
// lines are its own to read next. Unpacked on the consuming thread alone (session 25, call 1), or by the workers in
// a round of their own (call 2), the engine fell behind the GPU on the suite's apps. Value mode pairs records with
// the companions after them before the steps start, so it unpacks first. A long run of full records (value mode
// writes only those) is consumed where it lies. The batches' bounds do not change results: records count only in
// order.
void Engine::Impl::consume_packed(const RlSlot* slots, size_t count) {
  if (!open) throw EngineError("consume_packed() called with no open launch (begin_launch first)");
  constexpr size_t kInPlaceRun = 256;  // shorter runs of full records are unpacked (copied) with their neighbours
  const size_t batch = batch_records(W);
  unpacked.resize(batch);
  packed_starts.clear();
  const auto flush = [&] {
    const size_t n = packed_starts.size();
    if (n == 0) return;
    if (config.values) {
      for (size_t i = 0; i < n; ++i) unpack_for_engine(packed_starts[i], &unpacked[i]);
      consume_values(unpacked.data(), n);
    } else {
      batch_packed = packed_starts.data();
      consume_records(unpacked.data(), nullptr, n);  // n <= batch: one batch, whose pieces phases12 unpacks
      batch_packed = nullptr;
    }
    packed_starts.clear();
  };
  const RlSlot* at = slots;
  const RlSlot* const end = slots + count;
  while (at < end) {
    const size_t k = packed_record_slots(at, size_t(end - at));
    if (k == 0)
      throw EngineError("packed records: the record at slot " + std::to_string(at - slots) + " of " +
                        std::to_string(count) + " runs past the end, or its form or stride group is not known");
    const unsigned form = packed_form(*at);
    if (form == RL_FORM_FULL) {
      const RlSlot* run = at;
      size_t full = 0;
      while (full < batch && size_t(end - at) >= RL_FULL_SLOTS && packed_form(*at) == RL_FORM_FULL) {
        at += RL_FULL_SLOTS;
        ++full;
      }
      if (full >= kInPlaceRun) {
        flush();
        consume(reinterpret_cast<const RlRecord*>(run), full);
        continue;
      }
      for (size_t i = 0; i < full; ++i) {
        packed_starts.push_back(run + i * RL_FULL_SLOTS);
        if (packed_starts.size() == batch) flush();
      }
      continue;
    }
    if (form != RL_FORM_PADDING) {
      packed_starts.push_back(at);
      if (packed_starts.size() == batch) flush();
    }
    at += k;
  }
  flush();
}

// Value mode: the records without their companions, each MEM record flagged RL_FLAG_VALUES paired with the record
// after it. Padding (a companion of no record) is dropped; a flagged record whose next record is no companion
// is replayed without values, as is one left held at the end of the launch.
void Engine::Impl::consume_values(const RlRecord* recs, size_t n) {
  compact.clear();
  companions.clear();
  size_t i = 0;
  if (holding && n > 0) {
    holding = false;
    compact.push_back(held_record);
    if (recs[0].type == RL_REC_VALUES) {
      held_companion = recs[0];
      companions.push_back(&held_companion);
      i = 1;
    } else {
      companions.push_back(nullptr);
    }
  }
  for (; i < n; ++i) {
    const RlRecord& r = recs[i];
    if (r.type == RL_REC_VALUES) continue;  // padding, or a companion whose record was malformed
    const bool flagged = r.type == RL_REC_MEM && (r.flags & RL_FLAG_VALUES);
    if (flagged && i + 1 == n) {
      held_record = r;
      holding = true;
      break;
    }
    compact.push_back(r);
    const bool paired = flagged && recs[i + 1].type == RL_REC_VALUES;
    companions.push_back(paired ? &recs[i + 1] : nullptr);
    if (paired) ++i;
  }
  consume_records(compact.data(), companions.data(), compact.size());
}

void Engine::Impl::release_held() {
  if (!holding) return;
  holding = false;
  const RlRecord* none = nullptr;
  consume_records(&held_record, &none, 1);
}

// Batches go through the steps in turn: phases 1-2 (ids, distributions, routing), then 3-4 (block and global
// steps). With several workers, phases 1-2 of batch k + 1 share a run of the pool with phases 3-4 of batch k
// (pipelined, docs/engine.md "Determinism and parallelism"): each worker does its block and global steps of batch k,
// then takes pieces of batch k + 1 as the other workers do. The two batches live in the two slots (their contexts,
// piece maps and routed lists); phases 1-2 depend on nothing phases 3-4 write, and the serial work between
// (new PCs' ids, the first malformed record) still runs between runs, when no step does. A call of K batches
// then takes K + 1 runs instead of 3K, and the pieces of the next batch fill the time a worker would have waited
// for the busiest owner.
void Engine::Impl::consume_records(const RlRecord* recs, const RlRecord* const* values, size_t n) {
  for (auto& w : workers) w->page_lo = w->page_hi = 0;  // regions may have changed since the last call
  const size_t batch = batch_records(W);
  const auto start = std::chrono::steady_clock::now();
  batch_recs = recs;  // values_of: a record's companion, by its place in this call
  batch_values = values;
  const auto parallel = [&](size_t b) { return W > 1 && b >= config.inline_batch_records; };
  // Phases 1-2 of the batch at `at` (b records) into route_slot; with `steps`, in the same run as steps(w, wk),
  // and after_run() once that run is over (before finish_phase1 may report a malformed record of this batch).
  const auto route = [&](const RlRecord* at, size_t b, const std::function<void(unsigned, Worker&)>& steps,
                         const std::function<void()>& after_run) {
    route_ctx().resize(b);
    batch_slots[route_slot].piece_map.resize(pieces_of(b));
    const auto t_unit = std::chrono::steady_clock::now();
    batch_slots[route_slot].wide = choose_wide_units(at, b);
    if (batch_slots[route_slot].wide.count) ++wide_unit_batches;
    workers[0]->busy[2] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t_unit).count();
    next_piece.at.store(0);
    run_timed(std::max(b, steps ? config.inline_batch_records : b), [&](unsigned w, Worker& wk) {
      if (steps) steps(w, wk);
      phases12(at, b, w, wk);
    });
    if (after_run) after_run();
    auto t0 = std::chrono::steady_clock::now();
    const bool late = finish_phase1(at);
    workers[0]->busy[1] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (late) {
      run_timed(b, [&](unsigned w, Worker& wk) {
        if (wk.deferred.empty()) return;
        timed(wk, 2, [&] {
          for (uint32_t piece : wk.deferred) phase2_piece(at, b, piece, w, wk);
        });
        finish_routing(wk);
      });
    }
  };
  const auto account = [&](size_t b) {
    // The slowest worker per step. Fused and pipelined, steps of one run overlap in time, so the steps' slowest may
    // sum to more than the run's wall time.
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
  };
  size_t b = std::min(n, batch);
  route_slot = 0;
  if (n > 0) route(recs, b, {}, {});
  while (n > 0) {
    step_slot = route_slot;
    const RlRecord* next = recs + b;
    const size_t next_b = std::min(n - b, batch);
    const bool fuse = parallel(b) && fusion_enabled();
    const std::function<void(unsigned, Worker&)> fused = [&](unsigned w, Worker& wk) {
      fused_blocks_and_global(recs, b, w, wk);
    };
    if (fuse) {
      for (unsigned w = 0; w < W; ++w) block_progress[w].done.store(0, std::memory_order_relaxed);
    }
    route_slot ^= 1;
    if (fuse && next_b > 0 && pipelining_enabled()) {
      route(next, next_b, fused, [&] { account(b); });  // the next batch's ids and routing count with this run
    } else {
      if (fuse) {
        run_timed(b, fused);
      } else {
        run_timed(b, [&](unsigned w, Worker& wk) { timed(wk, 3, [&] { phase3(recs, b, w); }); });
        run_timed(b, [&](unsigned w, Worker& wk) { timed(wk, 4, [&] { phase4(recs, b, w); }); });
      }
      account(b);
      if (next_b > 0) route(next, next_b, {}, {});
    }
    recs = next;
    n -= b;
    b = next_b;
  }
  batch_recs = nullptr;
  batch_values = nullptr;
  counters.consume_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}
}  // namespace reuselens
