// Phase 1 of a batch (docs/engine.md, "Determinism and parallelism"): every record checked, and every memory
// instruction and barrier given its engine-wide id, new PCs serially in record order.
#include "engine_impl.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

namespace reuselens {

// Serial insertion of a new PC (or one seen with new access flags / a larger size: type and size of a node
// are the union over its records).
uint32_t Engine::Impl::node_id(const RlRecord& r) {
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
  // kHandedOverFlags say how one record's lanes were handed over, not what the instruction is
  nodes.push_back(NodeInfo{r.function_id, r.pc, r.space, r.access, uint8_t(r.flags & ~kHandedOverFlags), r.size});
  node_ids.emplace(k, id);
  return id;
}
uint32_t Engine::Impl::barrier_id(const RlRecord& r) {
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
uint32_t Engine::Impl::find_id(const RlRecord& r, Worker& wk) const {
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
bool Engine::Impl::plausible(const RlRecord& r) const {
  bool mem = r.type == RL_REC_MEM, bar = r.type == RL_REC_BARRIER;
  // Handed over by its addresses (lane_addresses.h): by its first active lane's, so it has one; by its first and
  // last lanes' (the stride between them), so it has two.
  const bool handed = mem & ((r.flags & kHandedOverFlags) != 0), by_two = mem & ((r.flags & RL_FLAG_ONE_STRIDE) != 0);
  return (mem | bar | (r.type == RL_REC_BLOCK_EXIT)) & (r.warp < warps_per_block) & (r.block < kMaxBlock) &
         ((!mem) | ((r.space >= RL_SPACE_GLOBAL) & (r.space <= RL_SPACE_LOCAL) & (r.size != 0))) &
         ((!bar) | ((r.space >= RL_BARRIER_BLOCK) & (r.space <= RL_BARRIER_MBARRIER))) &
         ((!handed) | (r.active_mask != 0)) & ((!by_two) | ((r.active_mask & (r.active_mask - 1)) != 0));
}
std::string Engine::Impl::check_record(const RlRecord& r) const {
  if (r.type == RL_REC_VALUES) return "a value companion (record type 4) in a launch analysed without value mode";
  if (r.type < RL_REC_MEM || r.type > RL_REC_BLOCK_EXIT) return "unknown record type " + std::to_string(r.type);
  if (r.warp >= warps_per_block) {
    return "warp index " + std::to_string(r.warp) + " but the block has " + std::to_string(warps_per_block) + " warps";
  }
  if (r.block >= kMaxBlock) return "block index " + std::to_string(r.block) + " is beyond 2^40";
  if (r.type == RL_REC_MEM) {
    if (r.space < RL_SPACE_GLOBAL || r.space > RL_SPACE_LOCAL) return "unknown memory space " + std::to_string(r.space);
    if (r.size == 0) return "access size 0";
    if ((r.flags & RL_FLAG_ONE_STRIDE) && (r.active_mask & (r.active_mask - 1)) == 0) {
      return "handed over by the stride between its first and last lanes (flag 0x20) with fewer than two active lanes";
    }
    if ((r.flags & RL_FLAG_ONE_ADDRESS) && r.active_mask == 0) {
      return "handed over by its first lane's address (flag 0x10) with no active lane";
    }
  }
  if (r.type == RL_REC_BARRIER && (r.space < RL_BARRIER_BLOCK || r.space > RL_BARRIER_MBARRIER)) {
    return "unknown barrier kind " + std::to_string(r.space);
  }
  return std::string();
}
// Phase 1 of one piece. kClean: every record valid and with its id, phase 2 may follow at once.
Engine::Impl::PieceState Engine::Impl::phase1_piece(const RlRecord* recs, size_t n, size_t piece, Worker& wk) {
  const size_t misses_before = wk.misses.size();
  // The piece's records were written by the queue's copy threads on other cores (or long ago, behind a deep queue):
  // the header's line of a record a few ahead is asked for, so that this loop's header reads find it near, and once
  // a record's header is read, the lines of its lanes when the routing of the same piece right after this loop
  // (phase2_piece) reads them: a barrier, an exit and a record handed over by one or two addresses (lane_addresses.h)
  // have nothing there that any step reads, or anything written this time round the queue's ring.
  constexpr size_t kAhead = 4;
  for (size_t i = piece * kPiece, hi = std::min(n, i + kPiece); i < hi; ++i) {
    if (i + kAhead < hi) __builtin_prefetch(recs + i + kAhead);
    const RlRecord& r = recs[i];
    if (r.type == RL_REC_MEM && !(r.flags & kHandedOverFlags)) {
      const char* p = reinterpret_cast<const char*>(&r);
      for (size_t line = 64; line < sizeof(RlRecord); line += 64) __builtin_prefetch(p + line);
      __builtin_prefetch(p + sizeof(RlRecord) - 1);
    }
    if (!plausible(r)) {
      wk.error_index = i;
      wk.error = check_record(r);
      return PieceState::kMalformed;
    }
    Ctx& c = route_ctx()[i];
    c = Ctx{0, 0, Sync{0, 0, 0, 0}};
    if (r.type == RL_REC_BLOCK_EXIT) continue;
    c.id = find_id(r, wk);
    if (!c.id) wk.misses.push_back(uint32_t(i));
    if (r.type == RL_REC_MEM) wk.lanes += uint32_t(popcount32(r.active_mask));
  }
  return wk.misses.size() == misses_before ? PieceState::kClean : PieceState::kNewPcs;
}

// The first malformed record in record order wins, whatever the slicing; then new PCs get ids in order.
// Returns true when a piece still needs phase 2 (it had new PCs).
bool Engine::Impl::finish_phase1(const RlRecord* recs) {
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
  std::vector<Ctx>& ctx = route_ctx();
  for (uint32_t i : misses) ctx[i].id = recs[i].type == RL_REC_MEM ? node_id(recs[i]) : barrier_id(recs[i]);
  for (auto& w : workers) {
    if (!w->deferred.empty()) return true;
  }
  return false;
}
}  // namespace reuselens
