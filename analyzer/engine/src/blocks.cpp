// Phase 3 of a batch, on the worker owning each block: per-warp barrier counters, barrier executions, block
// exits, and the replay of shared and local accesses (docs/engine.md, "Barriers").
#include "engine_impl.h"

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
// One worker owns everything: walk the batch itself instead of routed lists.
void Engine::Impl::phase3(const RlRecord* recs, size_t n, unsigned w) {
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
}  // namespace reuselens
