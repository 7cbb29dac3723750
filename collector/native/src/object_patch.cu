// ReuseLens object-level device patch (docs/memory.md, "Object-level mode"): for the memory analysis without an
// access trace. Every global access (loads, stores, atomics, the global half of cp.async and of bulk copies) is
// looked up in the table of live allocations; the allocation's mark gets the access kind and the slice of each
// granule the access covers, exactly what the engine's shadow would note for the same access in a traced run
// (shadow_replay.cpp: mark_access + count_accesses). Built like patch.cu, into reuselens_objects_patch.fatbin.
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
