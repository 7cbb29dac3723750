// ReuseLens object-level device patch (docs/memory.md, "Object-level mode"): for the memory analysis without an
// access trace. Every global access (loads, stores, atomics, the global half of cp.async and of bulk copies) is
// looked up in the table of live allocations; the allocation's mark gets the access kind and the slice of each
// granule the access covers, exactly what the engine's shadow would note for the same access in a traced run
// (shadow_replay.cpp: mark_access + count_accesses). With element maps, the object's map also gets the
// access's lane-granules per slice and its touched granules (count_accesses, count_first_touch). Built like
// patch.cu, into reuselens_objects_patch.fatbin.
#include <sanitizer_patching.h>

#include "device_state.h"
#include "patch_lanes.cuh"
#include "reuselens/object_touches.h"
#include "reuselens/trace_format.h"

namespace {

__device__ __forceinline__ bool holds(const RlObjectEntry& e, uint64_t granule) {
  return granule >= e.first_granule && granule <= e.last_granule;
}

// The entry holding `granule`, or -1; `hint` (an entry index or -1) is tried first.
__device__ __forceinline__ int find_object(const RlObjectState* s, uint64_t granule, int hint) {
  if (hint >= 0 && holds(s->objects[hint], granule)) return hint;
  int lo = 0, hi = int(s->count) - 1, found = -1;
  while (lo <= hi) {  // the last entry starting at or before the granule
    const int mid = (lo + hi) >> 1;
    if (__ldg(&s->objects[mid].first_granule) <= granule) {
      found = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return found >= 0 && granule <= __ldg(&s->objects[found].last_granule) ? found : -1;
}

// Marks are set once per launch and then only read: the load keeps the atomics for the first time.
__device__ __forceinline__ void mark(const RlObjectState* s, int i, unsigned access, unsigned slice) {
  RlObjectMark* m = &s->marks[i];
  if (access && (*(volatile unsigned int*)&m->access & access) != access) atomicOr(&m->access, access);
  const unsigned long long bit = 1ull << slice;
  if (!(*(volatile unsigned long long*)&m->slices & bit)) atomicOr(&m->slices, bit);
}

// The granules [g0, g1] of one access: the object and slice of the first, and of the last where they differ (an
// access of at most 16 bytes never spans more than two slices, slices being at least 1 KiB).
__device__ __forceinline__ void mark_tail(const RlObjectState* s, int i, unsigned slice, uint64_t g1, unsigned access) {
  const int j = (i >= 0 && holds(s->objects[i], g1)) ? i : find_object(s, g1, -1);
  if (j < 0) return;
  const unsigned tail = reuselens::object_slice_of(s->objects[j].first_granule, g1, s->objects[j].slice_shift);
  if (j != i || tail != slice) mark(s, j, access, tail);
}

// Element maps (device_state.h): the touched bits of granules [ga, gb] of entry `e`. The load first: once a
// granule is known, its later accesses cost a read, not an atomic.
__device__ __forceinline__ void set_touched(const RlObjectEntry& e, uint64_t ga, uint64_t gb) {
  uint32_t* bits = reinterpret_cast<uint32_t*>(e.map + reuselens::kObjectSlices);
  const uint64_t b0 = (ga - e.first_granule) >> e.map_shift, b1 = (gb - e.first_granule) >> e.map_shift;
  for (uint64_t b = b0; b <= b1; ++b) {
    uint32_t* word = bits + (b >> 5);
    const uint32_t bit = 1u << (b & 31);
    if (!(*word & bit)) atomicOr(word, bit);
  }
}

// One lane-granule counted on its own: a granule of an access that leaves its first granule's object or slice
// (unaligned, or across a boundary), or a block of a bulk copy.
__device__ __forceinline__ void note_granule(const RlObjectState* s, int hint, uint64_t g) {
  const int j = find_object(s, g, hint);
  if (j < 0 || s->objects[j].map == nullptr) return;
  const RlObjectEntry& e = s->objects[j];
  atomicAdd(&e.map[reuselens::object_slice_of(e.first_granule, g, e.slice_shift)], 1ull);
  set_touched(e, g, g);
}

// The element maps' share of one warp-level access, from every lane of `mask` (`key`: the lane's object and
// slice, `peers`: the lanes of the same key). A group of lanes whose granules all lie in their first granule's
// object and slice adds them in one atomic, as the engine adds a record's lane-granules to each slice; a lane's
// granules past that slice or object are counted one by one. (Sanitizer patches may not use redux, so no
// __reduce_add_sync: every lane of such a group counts alike, (size + 3) / 4 granules, the same in a warp.)
__device__ __forceinline__ void note_elements(const RlObjectState* s, int i, unsigned slice, uint64_t g0, uint64_t g1,
                                              uint32_t mask, unsigned long long key, uint32_t peers, uint32_t lane) {
  const RlObjectEntry* e = i >= 0 && s->objects[i].map != nullptr ? &s->objects[i] : nullptr;
  uint64_t last = g1;
  if (e != nullptr) {
    if (last > e->last_granule) last = e->last_granule;
    if (slice < reuselens::kObjectSlices - 1) {  // the last slice also holds the rest of the object
      const uint64_t slice_last = e->first_granule + ((uint64_t(slice + 1) << e->slice_shift) >> 2) - 1;
      if (last > slice_last) last = slice_last;
    }
  }
  const bool whole = e != nullptr && last == g1;
  // g1 - g0 depends on the access size only: the same for the whole warp, so every lane of `mask` matches here.
  const uint32_t group = g1 == g0 ? peers : __match_any_sync(mask, whole ? key : ~0ull);
  if (e != nullptr) {
    if (!whole)
      atomicAdd(&e->map[slice], (unsigned long long)(last - g0 + 1));
    else if (lane == (uint32_t)(__ffs(group) - 1))
      atomicAdd(&e->map[slice], (unsigned long long)__popc(group) * (g1 - g0 + 1));
    set_touched(*e, g0, last);
  }
  for (uint64_t g = (e != nullptr ? last : g0) + 1; g <= g1; ++g) note_granule(s, i, g);
}

// One warp-level global access: each lane's address; the lanes that land on the same slice of the same object
// agree (__match_any_sync) and one of them marks it.
__device__ __forceinline__ void note_warp_access(void* ud, uint64_t addr, uint32_t size, uint32_t flags) {
  const RlObjectState* s = static_cast<const RlObjectState*>(ud);
  if (s == nullptr || s->enabled == 0 || s->count == 0) return;
  const unsigned access = flags & (reuselens::RL_ACCESS_READ | reuselens::RL_ACCESS_WRITE);
  const uint32_t mask = __activemask();
  const uint32_t lane = lane_id();
  const uint32_t leader = __ffs(mask) - 1;
  const uint64_t g0 = addr >> 2;
  const uint64_t g1 = g0 + (size > 4 ? (size + 3) / 4 - 1 : 0);
  // A warp's addresses mostly lie in one object: the lowest lane's is every lane's first guess.
  int hint = lane == leader ? find_object(s, g0, -1) : -1;
  hint = __shfl_sync(mask, hint, leader);
  const int i = find_object(s, g0, hint);
  const unsigned slice =
      i >= 0 ? reuselens::object_slice_of(s->objects[i].first_granule, g0, s->objects[i].slice_shift) : 0;
  const unsigned long long key = i >= 0 ? ((unsigned long long)i << 6) | slice : ~0ull;
  const uint32_t peers = __match_any_sync(mask, key);
  if (i >= 0 && lane == (uint32_t)(__ffs(peers) - 1)) mark(s, i, access, slice);
  if (g1 != g0) mark_tail(s, i, slice, g1, access);
  note_elements(s, i, slice, g0, g1, mask, key, peers, lane);
}

// One thread's access (bulk copies: one thread issues all the blocks).
__device__ __forceinline__ void note_thread_access(const RlObjectState* s, uint64_t addr, uint32_t size,
                                                   unsigned access) {
  const uint64_t g0 = addr >> 2, g1 = g0 + (size > 4 ? (size + 3) / 4 - 1 : 0);
  const int i = find_object(s, g0, -1);
  unsigned slice = 0;
  if (i >= 0) {
    slice = reuselens::object_slice_of(s->objects[i].first_granule, g0, s->objects[i].slice_shift);
    mark(s, i, access, slice);
  }
  if (g1 != g0) mark_tail(s, i, slice, g1, access);
  for (uint64_t g = g0; g <= g1; ++g) note_granule(s, i, g);
}

// cp.async.bulk: `blocks` 16-byte blocks from `gaddr`, issued by one thread (every active lane sees the same
// operands; the lowest one notes them, as patch.cu records them once).
__device__ __forceinline__ void note_bulk(void* ud, uint64_t gaddr, uint32_t blocks, unsigned access) {
  const RlObjectState* s = static_cast<const RlObjectState*>(ud);
  if (s == nullptr || s->enabled == 0 || s->count == 0) return;
  if (lane_id() != (uint32_t)(__ffs(__activemask()) - 1)) return;
  for (uint32_t k = 0; k < blocks; ++k) note_thread_access(s, gaddr + 16ull * k, 16, access);
}

}  // namespace

#define RL_CB extern "C" __device__ __noinline__ SanitizerPatchResult

RL_CB rl_obj_global(void* ud, uint64_t, void* ptr, uint32_t size, uint32_t flags, const void*) {
  note_warp_access(ud, (uint64_t)ptr, size, flags);
  return SANITIZER_PATCH_SUCCESS;
}

// cp.async (LDGSTS): its global half is a read.
RL_CB rl_obj_memcpy_async(void* ud, uint64_t, void* src, uint32_t, uint32_t size) {
  note_warp_access(ud, (uint64_t)src, size, reuselens::RL_ACCESS_READ);
  return SANITIZER_PATCH_SUCCESS;
}

RL_CB rl_obj_bulk_g2s(void* ud, uint64_t, uint64_t src, uint32_t, uint32_t, uint32_t data, uint32_t) {
  note_bulk(ud, src, data & 0xFFFFu, reuselens::RL_ACCESS_READ);
  return SANITIZER_PATCH_SUCCESS;
}

RL_CB rl_obj_bulk_s2g(void* ud, uint64_t, uint64_t dst, uint32_t, uint32_t blocks) {
  note_bulk(ud, dst, blocks, reuselens::RL_ACCESS_WRITE);
  return SANITIZER_PATCH_SUCCESS;
}
