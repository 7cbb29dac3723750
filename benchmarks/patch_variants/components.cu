// The record path taken apart (issue 14): global, shared and local accesses run the pieces of patch.cu's
// emit() that RL_COMPONENTS selects, on scratch counters, so no record reaches the host and the run stays
// valid (zero records). Bits: 1 ticket (leader's atomicAdd, broadcast), 2 record writes into the pinned host
// buffer (header + 32 address words, as emit writes them), 4 the leader's fence.acq_rel.sys, 8 the leader's
// commit atomicAdd (waiting for its result). Every other callback returns at once, as in floor.cu.
// Built by build.sh as components_<bits>.fatbin; REUSELENS_PATCH=... reuselens profile --no-analyze -- APP.
#include <sanitizer_patching.h>

#include "device_state.h"
#include "patch_lanes.cuh"
#include "reuselens/trace_format.h"

#ifndef RL_COMPONENTS
#define RL_COMPONENTS 15
#endif

namespace {

__device__ __forceinline__ void pieces(void* userdata, uint64_t pc, uint64_t addr) {
  RlDeviceState* s = static_cast<RlDeviceState*>(userdata);
  // The scratch counters are ring slots the collector's default two buffers never use.
  if (s == nullptr || s->enabled == 0 || s->nbuf > RL_MAX_BUFFERS - 2) return;
  unsigned long long* scratch_head = &s->allowed_cache[RL_MAX_BUFFERS - 1];
  unsigned long long* scratch_commit = &s->allowed_cache[RL_MAX_BUFFERS - 2];
  const uint32_t mask = __activemask();
  const uint32_t lane = lane_id();
  const uint32_t leader = __ffs(mask) - 1;
  unsigned long long t = 0;
  if ((RL_COMPONENTS & 1) && lane == leader) t = atomicAdd(scratch_head, 1ull);
  t = __shfl_sync(mask, t, leader);
  if (RL_COMPONENTS & 2) {
    reuselens::RlRecord* r = reinterpret_cast<reuselens::RlRecord*>(s->buffers) + (t % s->capacity);
    if (lane == leader) {
      uint64_t* w = reinterpret_cast<uint64_t*>(r);
      w[0] = 1;
      w[1] = (uint64_t)mask << 32;
      w[2] = pc;
      w[3] = blockIdx.x;
      uint32_t idle = ~mask;
      while (idle) {
        const int i = __ffs(idle) - 1;
        idle &= idle - 1;
        r->addr[i] = 0;
      }
    }
    r->addr[lane] = addr;
  }
  __syncwarp(mask);
  if (lane == leader) {
    if (RL_COMPONENTS & 4) asm volatile("fence.acq_rel.sys;" ::: "memory");
    if (RL_COMPONENTS & 8) {
      unsigned long long done = atomicAdd(scratch_commit, 1ull);
      if (done == ~0ull) __threadfence_system();  // never true: keeps the result awaited, as commit() awaits it
    }
  }
}

}  // namespace

#define RL_CB extern "C" __device__ __noinline__ SanitizerPatchResult

RL_CB rl_global(void* ud, uint64_t pc, void* ptr, uint32_t, uint32_t, const void*) {
  pieces(ud, pc, (uint64_t)ptr);
  return SANITIZER_PATCH_SUCCESS;
}
RL_CB rl_shared(void* ud, uint64_t pc, void* ptr, uint32_t, uint32_t, const void*) {
  pieces(ud, pc, (uint64_t)ptr);
  return SANITIZER_PATCH_SUCCESS;
}
RL_CB rl_local(void* ud, uint64_t pc, void* ptr, uint32_t, uint32_t, const void*) {
  pieces(ud, pc, (uint64_t)ptr);
  return SANITIZER_PATCH_SUCCESS;
}
RL_CB rl_memcpy_async(void*, uint64_t, void*, uint32_t, uint32_t) { return SANITIZER_PATCH_SUCCESS; }
RL_CB rl_matrix(void*, uint64_t, uint32_t, uint32_t, uint32_t, uint32_t, const void*) {
  return SANITIZER_PATCH_SUCCESS;
}
RL_CB rl_barrier(void*, uint64_t, uint32_t, uint32_t, uint32_t) { return SANITIZER_PATCH_SUCCESS; }
RL_CB rl_syncwarp(void*, uint64_t, uint32_t) { return SANITIZER_PATCH_SUCCESS; }
RL_CB rl_cuda_barrier(void*, uint64_t, void*, uint32_t, uint32_t) { return SANITIZER_PATCH_SUCCESS; }
RL_CB rl_block_exit(void*, uint64_t) { return SANITIZER_PATCH_SUCCESS; }
RL_CB rl_smem_size(void*, uint64_t, uint32_t) { return SANITIZER_PATCH_SUCCESS; }
RL_CB rl_bulk_g2s(void*, uint64_t, uint64_t, uint32_t, uint32_t, uint32_t, uint32_t) { return SANITIZER_PATCH_SUCCESS; }
RL_CB rl_bulk_s2g(void*, uint64_t, uint64_t, uint32_t, uint32_t) { return SANITIZER_PATCH_SUCCESS; }
