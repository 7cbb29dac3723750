// Phase 3 of a batch, on the worker owning each block: per-warp barrier counters, barrier executions, block
// exits, and the replay of shared and local accesses (docs/engine.md, "Barriers").
#include "engine_impl.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace reuselens {

// Barrier counters (docs/engine.md, "Barriers"): a block barrier advances both counters of the warp, a warp
// barrier only the warp counter; an mbarrier is counted but orders nothing we can see.
void Engine::Impl::on_barrier(const RlRecord& r, const Ctx& c, Worker& wk) {
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
uint32_t Engine::Impl::warp_lanes(uint32_t warp) const {
  uint32_t tail = threads_per_block % 32;
  return (warp + 1 < warps_per_block || tail == 0) ? 0xffffffffu : (1u << tail) - 1;
}
// A block's shared and local memory die when every thread has executed EXIT. Threads may exit in several
// pieces (early return), so exits are counted per lane; a record with no lanes set stands for its whole warp.
void Engine::Impl::on_exit(const RlRecord& r, Worker& wk) {
  BlockState& st = wk.block_state(r.block);
  uint32_t want = warp_lanes(r.warp);
  uint32_t before = st.exited[r.warp];
  st.exited[r.warp] |= (r.active_mask ? r.active_mask : want) & want;
  if (before != want && st.exited[r.warp] == want) st.warps_done += 1;
  if (st.warps_done >= warps_per_block) wk.drop_block(r.block);
}
// `out`: where a global record's counters go for phase 4.
void Engine::Impl::block_step(const RlRecord& r, const Ctx& c, Sync& out, unsigned w, Worker& wk) {
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
// The records of a batch come from hundreds of resident blocks in no particular order (the drain interleaves
// them), so a shared record's shadow lines and its warp's counters are rarely in the cache: a sorting network
// keeps 528 blocks of 8 KiB shared memory resident, 8 MiB of shadow. Asking for them a few records ahead lets
// the misses overlap. Blocks and words not made yet are skipped: nothing is made or charged here.
void Engine::Impl::prefetch_block(const RlRecord& r, Worker& wk) {
  const BlockState* bs = wk.find_block(r.block);
  if (!bs) return;
  __builtin_prefetch(&bs->warps[r.warp], 1);
  if (r.type != RL_REC_MEM || r.space != RL_SPACE_SHARED) return;
  if (!r.active_mask) return;
  // The first and last active lanes' lines, and those between them when the lanes span a few lines only (a
  // warp's consecutive words); a scattered record is asked for at its ends alone, which costs less than its misses.
  const uint64_t first = r.addr[__builtin_ctz(r.active_mask)] >> 2,
                 last = r.addr[31 - __builtin_clz(r.active_mask)] >> 2;
  const uint64_t lo = std::min(first, last) >> 3, hi = std::max(first, last) >> 3;
  if (hi - lo < 8) {
    for (uint64_t line = lo; line <= hi; ++line) {
      if (const uint64_t* e = bs->shared.peek(line << 3)) __builtin_prefetch(e, 1);
    }
  } else {
    if (const uint64_t* e = bs->shared.peek(first)) __builtin_prefetch(e, 1);
    if (const uint64_t* e = bs->shared.peek(last)) __builtin_prefetch(e, 1);
  }
}
// One worker owns everything: walk the batch itself instead of routed lists.
// publish: phases 3 and 4 run fused (consume.cpp): each finished piece is announced in block_progress[w], after
// its Sync slots, for the chunk owners that wait on them.
void Engine::Impl::phase3(const RlRecord* recs, size_t n, unsigned w, bool publish) {
  Worker& wk = *workers[w];
  std::vector<Ctx>& ctx = batch_slots[step_slot].ctx;
  constexpr size_t kAhead = 3;  // for_each_routed asks for the record's lines kWalkAhead records ahead
  static_assert(kAhead < kWalkAhead, "the walk has asked for that item's lines already");
  if (W == 1) {
    for (size_t i = 0; i < n; ++i) {
      if (i + kAhead < n) prefetch_block(recs[i + kAhead], wk);
      block_step(recs[i], ctx[i], ctx[i].sync, 0, wk);
    }
  } else {
    std::atomic<size_t>& done = block_progress[w].done;
    for_each_routed(
        &Worker::Routing::by_block, n, w, recs,
        [&](uint32_t item, Routed<uint32_t>& list, uint32_t x, RoutedAhead<uint32_t> ahead) {
          if (const uint32_t* later = ahead.item(kAhead)) prefetch_block(recs[record_index(*later)], wk);
          const uint32_t i = record_index(item);
          block_step(recs[i], ctx[i], list.sync[x], w, wk);
        },
        [&](size_t piece) {
          if (publish) done.store(piece + 1, std::memory_order_release);
        });
  }
}
}  // namespace reuselens
