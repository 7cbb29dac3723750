// How consume() cuts a batch of records into pieces and routes them to the workers that own blocks and chunks of
// address space (docs/engine.md, "Determinism and parallelism"), and the per-record context the steps pass on.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "reuselens/trace_format.h"

namespace reuselens {
namespace detail {

// Records per internal batch: 4096 (1.2 MB, stays in L2 across the phases) for one worker; with more workers
// each phase's share per worker shrinks, so batches grow (up to 32768) to keep the four pool barriers cheap.
inline size_t batch_records(unsigned workers) {
  return std::min<size_t>(32768, std::max<size_t>(4096, 2048u * workers));
}
// Phases 1 and 2 hand a batch out in pieces of this many records, the next piece to whichever worker is free:
// the drain order groups the warps of one instruction, and instructions differ widely in cost (a coalesced
// load vs. a conflicted shared store), so contiguous slices left one worker with the expensive instruction,
// and a fixed deal still waits for a worker the machine slowed down.
constexpr size_t kPiece = 64;
inline size_t pieces_of(size_t n) { return (n + kPiece - 1) / kPiece; }
constexpr uint8_t kNoOverlap = 1;  // Ctx flag: no two lanes of the record share a granule
constexpr uint8_t kOneChunk = 2;   // Ctx flag: all granules of the record lie in one chunk (one owner)
// Ctx flag: a global record of at most 4 bytes per lane whose active lanes, two or more, share one granule (a
// broadcast: a scalar or a vector element every lane reads). Its lanes after the first are warp_same_inst.
constexpr uint8_t kSharedGranule = 4;
// Ctx flag: a record of 4-, 8- or 16-byte lanes whose active lanes are consecutive lanes on consecutive footprints
// (a[i] = a[i-1] + size: the fully coalesced access of a scalar or vector). Lane j covers granules
// [j << s, (j + 1) << s) of the record's run, s = consecutive_shift(size).
constexpr uint8_t kConsecutive = 8;
// Whether the lanes of `mask` are one run of consecutive lanes (none: false). Any such part of a kConsecutive record's
// lanes is consecutive lanes on consecutive footprints too, and so is each run replay_lane_runs cuts.
inline bool one_run_of_lanes(uint32_t mask) {
  if (mask == 0) return false;
  const uint32_t from_first = mask >> __builtin_ctz(mask);
  return (from_first & (from_first + 1)) == 0;
}
inline bool consecutive_size(uint32_t size) { return size == 4 || size == 8 || size == 16; }
inline unsigned consecutive_shift(uint32_t size) { return size >> 3; }  // log2(size / 4) for 4, 8 and 16
constexpr unsigned kMaxWorkers = 64;  // route_global keeps one lane mask per worker on the stack

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
  uint32_t index;  // the record's index in the batch, flagged with the lane slots a step reads (chunk_item_index)
  uint32_t mask;   // lanes the owner must look at
  uint32_t slot;   // the record's position in what its piece's worker routed to the block owner (Routed::sync)
};
// Phase 2 output of one worker for one owner: the items of each piece the worker dealt with, in record order;
// ends[j] = items.size() after the worker's j-th piece, so the owner can walk all pieces in batch order. A line of
// its own: in a pipelined run (consume.cpp) owners read one batch slot's lists while their router pushes onto the
// other slot's, which the allocator may have put right behind.
template <class T>
struct alignas(64) Routed {
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
// What lies ahead of the item an owner's walk visits (Engine::Impl::for_each_routed): item(d), the item d places
// further on (d <= kWalkAhead), or null past the walk's end. The walk keeps the items it has asked for in a ring.
constexpr size_t kWalkAhead = 6;  // how far ahead a walk asks for its records' lines
constexpr size_t kWalkRing = 8;   // a power of two above kWalkAhead
template <class T>
struct RoutedAhead {
  const T* const* ring;  // item k of the walk at ring[k % kWalkRing], for k in (visited - 1, fetched)
  size_t visited;        // the index of the item being visited
  size_t fetched;        // how many items the walk has asked for
  const T* item(size_t d) const { return visited + d < fetched ? ring[(visited + d) % kWalkRing] : nullptr; }
};
// A block owner's item (a record index) flagged kLanesWanted: phase 3 reads the record's lanes (a shared or local
// access), not only its header, so the walk asks for all its lines ahead. Every record reaches its block owner, and
// the owner's items are scattered over the batch: the hardware prefetcher, which streams a one-worker walk, does
// not follow them. A chunk owner's item (Item::index) is flagged kLanesWanted when the record is whole; one the queue
// handed over by one or two addresses (lane_addresses.h) has nothing in its lane slots that any step reads but its
// first active lane's address and, handed over by two (RL_FLAG_ONE_STRIDE), its last one's: kLastLaneWanted. Batches
// hold far fewer than 2^30 records.
constexpr uint32_t kLanesWanted = 1u << 31;
constexpr uint32_t kLastLaneWanted = 1u << 30;
inline uint32_t record_index(uint32_t i) { return i & ~(kLanesWanted | kLastLaneWanted); }
inline uint32_t record_index(const Item& it) { return record_index(it.index); }
inline bool lanes_wanted(uint32_t i) { return (i & kLanesWanted) != 0; }
inline bool lanes_wanted(const Item& it) { return lanes_wanted(it.index); }
inline bool last_lane_wanted(const Item& it) { return (it.index & kLastLaneWanted) != 0; }
// A global record's index as its chunk owners' items carry it.
inline uint32_t chunk_item_index(uint32_t i, uint8_t record_flags) {
  if (record_flags & RL_FLAG_ONE_STRIDE) return i | kLastLaneWanted;
  return (record_flags & RL_FLAG_ONE_ADDRESS) ? i : i | kLanesWanted;
}

// Owner worker of a chunk: a multiplicative hash mapped onto [0, workers) by multiply-shift (no division).
inline unsigned owner_of(uint64_t chunk, unsigned workers) {
  return unsigned((((chunk * 0x9e3779b97f4a7c15ull) >> 32) * workers) >> 32);
}
// Owner worker of a block: round robin over the block index (its low 32 bits), so that the blocks resident at one
// time, consecutive indices, are dealt evenly. A hash left the busiest of 12 workers with 1.18-1.27 times the mean
// number of 132 consecutive blocks (one per SM of an H200: a GEMM's grid), and the block step waits for the
// busiest. `magic` = BlockOwners::magic_for(workers): Lemire's remainder by multiplication, no division per record.
struct BlockOwners {
  static uint64_t magic_for(unsigned workers) { return ~0ull / workers + 1; }
  static unsigned of(uint64_t block, unsigned workers, uint64_t magic) {
    __extension__ typedef unsigned __int128 u128;  // GCC and Clang on 64-bit targets
    return unsigned((u128(magic * uint32_t(block)) * workers) >> 64);
  }
};
// Shift from a granule to its chunk (256 granules = one shadow page): the ownership unit of every granule but those
// of a batch's wide allocations.
constexpr unsigned kChunkShift = 8;
inline uint64_t chunk_of(uint64_t granule) { return granule >> kChunkShift; }
// The widest ownership unit: 2^22 granules, 16 MiB (a warp whose lanes walk rows 512 KiB apart).
constexpr unsigned kWidestUnitShift = 22;
// The allocations whose granules one batch owns by units wider than the chunk (Engine::Impl::choose_wide_units):
// granules [lo[k], hi[k]] by units of 2^shift[k] granules, every other granule by its chunk. Owners must stay a
// function of the granule within a batch, and granules outside allocations keep their chunk in every batch (their
// shadow is their owner's own, Worker::fallback), so a range is an allocation's granules or none of them; each
// holds at least a chunk, so no range lies inside a chunk without covering one of its ends.
struct WideUnits {
  static constexpr unsigned kMax = 4;
  unsigned count = 0;
  uint64_t lo[kMax], hi[kMax];
  unsigned shift[kMax];
  // The range holding g, or kMax for none.
  unsigned range_of(uint64_t g) const {
    for (unsigned k = 0; k < count; ++k) {
      if (g - lo[k] <= hi[k] - lo[k]) return k;
    }
    return kMax;
  }
  unsigned shift_of(uint64_t g) const {
    const unsigned k = range_of(g);
    return k == kMax ? kChunkShift : shift[k];
  }
  unsigned owner(uint64_t g, unsigned workers) const { return owner_of(g >> shift_of(g), workers); }
  // Whether granules [g_lo, g_hi] lie in one chunk and have one owner: both ends in the same range, or both in none
  // (a range, a chunk at least, cannot lie between them). Two wide ranges of one shift may share a chunk, with
  // granules of neither between them: the ends' shifts alone do not tell.
  bool one_owner_in_chunk(uint64_t g_lo, uint64_t g_hi) const {
    return chunk_of(g_lo) == chunk_of(g_hi) && (count == 0 || range_of(g_lo) == range_of(g_hi));
  }
};

// Active lanes of a mask. The shipped build targets any x86-64 (no POPCNT instruction assumed), where
// __builtin_popcount becomes a libgcc call; this inline bit count is cheaper than the call.
inline unsigned popcount32(uint32_t v) {
  v = v - ((v >> 1) & 0x55555555u);
  v = (v & 0x33333333u) + ((v >> 2) & 0x33333333u);
  return (((v + (v >> 4)) & 0x0f0f0f0fu) * 0x01010101u) >> 24;
}
inline unsigned popcount64(uint64_t v) {
  v = v - ((v >> 1) & 0x5555555555555555ull);
  v = (v & 0x3333333333333333ull) + ((v >> 2) & 0x3333333333333333ull);
  return unsigned((((v + (v >> 4)) & 0x0f0f0f0f0f0f0f0full) * 0x0101010101010101ull) >> 56);
}

}  // namespace detail
}  // namespace reuselens
