// The batch driver of consume(): the steps of each batch run in turn on the worker pool, and their time is
// counted per step (EngineStats).
#include "engine_impl.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace reuselens {

// Phases 1 and 2 of one batch, one worker's share: pieces are taken in increasing order from a shared
// counter. A worker stops at its first malformed record; pieces before it went to the other workers, so
// the lowest index any worker reports is the first malformed record of the batch.
void Engine::Impl::phases12(const RlRecord* recs, size_t n, unsigned w, Worker& wk) {
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

void Engine::Impl::consume(const RlRecord* recs, size_t n) {
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
    run_timed(b, [&](unsigned w, Worker& wk) { phases12(recs, b, w, wk); });
    auto t0 = std::chrono::steady_clock::now();
    bool late = finish_phase1(recs);
    workers[0]->busy[1] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (late) {
      run_timed(b, [&](unsigned w, Worker& wk) {
        if (wk.deferred.empty()) return;
        timed(wk, 2, [&] {
          for (uint32_t piece : wk.deferred) phase2_piece(recs, b, piece, w, wk);
        });
        finish_routing(wk);
      });
    }
    run_timed(b, [&](unsigned w, Worker& wk) { timed(wk, 3, [&] { phase3(recs, b, w); }); });
    run_timed(b, [&](unsigned w, Worker& wk) { timed(wk, 4, [&] { phase4(recs, b, w); }); });
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
}  // namespace reuselens
