// ReuseLens device patch: Compute Sanitizer instruction callbacks that write one trace record per
// warp-level instruction instance (docs/trace-format.md). Built with
//   nvcc --fatbin --keep-device-functions -Xptxas --compile-as-tools-patch
// A record is written packed when the launch's state says so (by default; reuselens/packed_records.h):
// the warp finds the cheapest exact form of its lanes' addresses (none, one stride, two strides over groups of
// lanes, else every lane's); otherwise, and in value mode, in the full form. The leader lane (lowest active lane)
// reserves its slots and writes the header, and in the full form every active lane writes its own address.
// Protocol: device_state.h.
#include <sanitizer_patching.h>

#include "device_state.h"
#include "patch_lanes.cuh"
#include "reuselens/packed_records.h"
#include "reuselens/trace_format.h"

using reuselens::RlRecord;
using reuselens::RlSlot;

namespace {

__device__ __forceinline__ uint64_t flat_block() {
  return (uint64_t)blockIdx.x + (uint64_t)blockIdx.y * gridDim.x + (uint64_t)blockIdx.z * gridDim.x * gridDim.y;
}

__device__ __forceinline__ uint32_t warp_in_block() {
  uint32_t t = threadIdx.x + threadIdx.y * blockDim.x + threadIdx.z * blockDim.x * blockDim.y;
  return t / 32;
}

// Leader only: wait until the buffer of generation `gen` may be written.
__device__ __forceinline__ void wait_for_buffer(RlDeviceState* s, unsigned long long gen) {
  const uint32_t b = (uint32_t)(gen % s->nbuf);
  volatile unsigned long long* cache = &s->allowed_cache[b];
  if (*cache < gen) {
    atomicAdd(&s->waits, 1ull);
    unsigned ns = 128;
    while (*cache < gen) {
      // One waiting writer at a time asks the host (device_state.h); the others watch its device-memory copy.
      if (atomicCAS(&s->poller[b], 0u, 1u) == 0u) {
        const unsigned long long a = *(volatile uint64_t*)(s->host_allowed + b);
        atomicMax(&s->allowed_cache[b], a);
        atomicAdd(&s->polls, 1ull);
        atomicExch(&s->poller[b], 0u);
        if (a >= gen) break;
      }
      __nanosleep(ns);
      if (ns < 4096) ns *= 2;
    }
  }
}

__device__ __forceinline__ RlSlot* slot_at(RlDeviceState* s, unsigned long long t) {
  const unsigned long long gen = t / s->capacity;
  const uint64_t b = gen % s->nbuf;
  return reinterpret_cast<RlSlot*>(s->buffers) + b * s->capacity + (t % s->capacity);
}

// A record's fence, the leader's before its commit: orders the writes before it (and, fences being cumulative, the
// lanes' writes it observed through the warp barrier) before the commit after it, for every observer including the
// host. A release alone where the target decodes it: fence.acq_rel.sys (every record's fence until session 50)
// compiles on sm_80-sm_120 to MEMBAR.ALL.SYS followed by CCTL.IVALL, its acquire half, which empties the SM's L1
// data cache: every record threw away the L1 lines of every warp on its SM, and the app's next loads went to L2
// (docs/collector.md, "Transfer"). fence.release.sys is the same barrier without CCTL.IVALL on sm_90, sm_100 and
// sm_120 (nvdisasm of CUDA 13.0); on sm_80-sm_89 ptxas emits an instruction that nvdisasm cannot decode, so those
// keep the acquire-release fence, as does an nvcc older than 12.8 (the release form needs PTX ISA 8.6).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && defined(__CUDACC_VER_MAJOR__) && \
    (__CUDACC_VER_MAJOR__ > 12 || (__CUDACC_VER_MAJOR__ == 12 && __CUDACC_VER_MINOR__ >= 8))
__device__ __forceinline__ void release_fence_system() { asm volatile("fence.release.sys;" ::: "memory"); }
#else
__device__ __forceinline__ void release_fence_system() { asm volatile("fence.acq_rel.sys;" ::: "memory"); }
#endif
// The writer completing a generation: acquires every committer's records (their release fences, through the
// counter) and releases them to the host with its ready flag. Once per generation.
__device__ __forceinline__ void acquire_release_fence_system() { asm volatile("fence.acq_rel.sys;" ::: "memory"); }

// Leader only, after its release fence: count the record; the writer completing a generation hands the buffer to
// the host.
__device__ __forceinline__ void commit(RlDeviceState* s, unsigned long long t, unsigned n = 1) {
  const unsigned long long gen = t / s->capacity;
  const uint32_t b = (uint32_t)(gen % s->nbuf);
  const unsigned long long use = gen / s->nbuf;  // how many times buffer b was filled before
  unsigned long long done = atomicAdd(&s->committed[b], (unsigned long long)n) + n;
  if (done == (use + 1ull) * s->capacity) {
    acquire_release_fence_system();
    *(volatile uint64_t*)(s->host_ready + b) = gen + 1ull;
    __threadfence_system();
  }
}

// Leader only: `n` consecutive slots in one buffer (a packed record, or a full record and its value companion,
// docs/trace-format.md "Value companions"). Slots that would straddle a buffer's end become padding (one slot
// each, committed like any record) and the record takes the next ones: a record never spans two buffers, and a
// companion is always right after its record.
__device__ __forceinline__ unsigned long long take_ticket(RlDeviceState* s, unsigned n) {
  for (;;) {
    const unsigned long long t = atomicAdd(&s->head, (unsigned long long)n);
    wait_for_buffer(s, t / s->capacity);
    if (n == 1 || t % s->capacity + n <= s->capacity) return t;
    for (unsigned long long u = t; u < t + n; ++u) {
      if (u % s->capacity == 0) wait_for_buffer(s, u / s->capacity);
      uint64_t* w = slot_at(s, u)->w;
      w[0] = (uint64_t)reuselens::RL_FORM_PADDING << RL_FORM_SHIFT;
      w[1] = w[2] = w[3] = 0;
      release_fence_system();
      commit(s, u);
    }
  }
}

__device__ __forceinline__ uint64_t header_word(uint8_t type, uint8_t space, uint8_t access, uint8_t flags,
                                                uint16_t size, uint16_t warp, uint32_t form = reuselens::RL_FORM_FULL) {
  return ((uint64_t)type | ((uint64_t)form << RL_FORM_SHIFT)) | ((uint64_t)space << 8) | ((uint64_t)access << 16) |
         ((uint64_t)flags << 24) | ((uint64_t)size << 32) | ((uint64_t)warp << 48);
}

// How a record's addresses are written (packed_records.h): `form`, and for STRIDED its payload.
struct AddressForm {
  uint32_t form = reuselens::RL_FORM_FULL;
  uint64_t base = 0, stride = 0, group_stride = 0;
  uint32_t group = RL_WARP_SIZE;
};

// Every lane of `mask` calls this with its own `addr`; `recorded` (within mask) are the lanes the record keeps. The
// cheapest form that gives each recorded lane its address exactly, the same in every lane: no addresses (none
// recorded, or with_addr false), one stride over the lanes (coalesced, broadcast, a single lane), for a full warp
// two strides (a stride within groups of 2-16 lanes, another between groups: tile rows, fragments), else FULL.
__device__ __forceinline__ AddressForm address_form(uint32_t mask, uint32_t recorded, uint32_t lane, uint64_t addr,
                                                    bool with_addr) {
  AddressForm f;
  if (!with_addr || recorded == 0) {
    f.form = reuselens::RL_FORM_NO_ADDRESSES;
    return f;
  }
  const bool mine = (recorded >> lane) & 1u;
  const uint32_t first = __ffs(recorded) - 1, rest = recorded & (recorded - 1);
  const uint64_t a0 = __shfl_sync(mask, addr, first);
  bool whole = true;  // the stride divides the first two lanes' distance
  if (rest != 0) {
    const uint32_t step = (__ffs(rest) - 1) - first;
    const uint64_t diff = __shfl_sync(mask, addr, __ffs(rest) - 1) - a0;
    f.stride = step == 1 ? diff : diff / step;
    whole = step == 1 || f.stride * step == diff;
  }
  f.base = a0 - f.stride * first;
  if (whole && __all_sync(mask, !mine || addr == f.base + f.stride * lane)) {
    f.form = reuselens::RL_FORM_STRIDED;
    return f;
  }
  if (recorded != ~0u) return f;
  // A full warp: the group is the first lane whose step from the lane before differs from lane 1's.
  const uint64_t prev = __shfl_up_sync(mask, addr, 1);
  const uint64_t inner = __shfl_sync(mask, addr - prev, 1);
  const uint32_t breaks = __ballot_sync(mask, lane > 0 && addr - prev != inner);
  const uint32_t group = breaks ? __ffs(breaks) - 1 : RL_WARP_SIZE;
  if (group < 2 || group > 16 || (group & (group - 1)) != 0) return f;
  const uint32_t shift = __ffs(group) - 1;
  const uint64_t outer = __shfl_sync(mask, addr, group) - a0;
  if (__all_sync(mask, addr == a0 + inner * (lane & (group - 1)) + outer * (lane >> shift))) {
    f.form = reuselens::RL_FORM_STRIDED;
    f.base = a0;
    f.stride = inner;
    f.group_stride = outer;
    f.group = group;
  }
  return f;
}

__device__ __forceinline__ unsigned form_slots(uint32_t form) {
  return form == reuselens::RL_FORM_FULL ? RL_FULL_SLOTS : form == reuselens::RL_FORM_STRIDED ? 2u : 1u;
}

// Leader only: the header slot of a record and, for STRIDED, its payload slot.
__device__ __forceinline__ void write_packed_header(RlSlot* r, uint64_t header, uint32_t recorded, uint64_t pc,
                                                    const AddressForm& f) {
  r->w[0] = header;
  r->w[1] = (uint64_t)RL_UNRESOLVED_FUNCTION | ((uint64_t)recorded << 32);
  r->w[2] = pc;  // absolute; the host turns it into (function_id, section offset)
  r->w[3] = flat_block();
  if (f.form == reuselens::RL_FORM_STRIDED) {
    r[1].w[0] = f.base;
    r[1].w[1] = f.stride;
    r[1].w[2] = f.group_stride;
    r[1].w[3] = f.group;
  }
}

// A lane's value in value mode (docs/trace-format.md, "Value companions"): `known` false when the trace gets none
// (atomics, ldmatrix rows, bulk copies, sizes above 16 bytes).
struct LaneValue {
  uint64_t bits = 0;
  bool known = false;
  bool silent = false;  // a store of the value the location already held
};

// One record for the converged lanes executing this instruction; `addr` is this lane's address.
// lane_limit_mask: lanes that may be recorded (ldmatrix: lanes supplying a row address).
// with_addr false (BARRIER, BLOCK_EXIT): the record keeps the executing lanes' mask, all addresses 0.
// In value mode (RL_VALUES) a MEM record is followed by its value companion: the slot after it holds each
// recorded lane's `value`.
__device__ __forceinline__ void emit(void* userdata, uint64_t pc, uint64_t addr, uint32_t size, uint8_t type,
                                     uint8_t space, uint8_t access, uint8_t flags, uint32_t lane_limit_mask,
                                     bool with_addr = true, LaneValue value = LaneValue()) {
  RlDeviceState* s = static_cast<RlDeviceState*>(userdata);
  if (s == nullptr || s->enabled == 0) return;
  const uint32_t mask = __activemask();
  const uint32_t lane = lane_id();
  const uint32_t leader = __ffs(mask) - 1;
  const uint32_t recorded = mask & lane_limit_mask;
#ifdef RL_VALUES
  const unsigned slots = type == reuselens::RL_REC_MEM && s->values_on ? 2u : 1u;
  if (slots == 2) flags |= reuselens::RL_FLAG_VALUES;
#else
  const unsigned slots = 1;
  (void)value;
#endif
  // Value mode writes full records, each with its companion right after it (the engine pairs them by position).
  AddressForm f;
  if (s->packed && slots == 1) f = address_form(mask, recorded, lane, addr, with_addr);
  const unsigned record_slots = form_slots(f.form);
  unsigned long long t = 0;
  if (lane == leader) t = take_ticket(s, record_slots * slots);
  t = __shfl_sync(mask, t, leader);
  RlSlot* first_slot = slot_at(s, t);
  if (lane == leader)
    write_packed_header(first_slot,
                        header_word(type, space, access, flags, (uint16_t)size, (uint16_t)warp_in_block(), f.form),
                        recorded, pc, f);
  if (f.form == reuselens::RL_FORM_FULL) {
    RlRecord* r = reinterpret_cast<RlRecord*>(first_slot);
    if (lane == leader) {
      uint32_t idle = with_addr ? ~recorded : ~0u;
      while (idle) {
        const int i = __ffs(idle) - 1;
        idle &= idle - 1;
        r->addr[i] = 0;
      }
    }
    if (with_addr && ((recorded >> lane) & 1u)) r->addr[lane] = addr;
  }
#ifdef RL_VALUES
  if (slots == 2) {
    RlRecord* r = reinterpret_cast<RlRecord*>(first_slot);
    // The companion: lanes with a value, the silent stores among them (in `pc`), each lane's value; its function
    // id is 0, so the host's PC resolution passes it by.
    const uint32_t valued = __ballot_sync(mask, value.known) & recorded;
    const uint32_t silent = __ballot_sync(mask, value.known && value.silent) & recorded;
    const bool mine = (valued >> lane) & 1u;
    // One value for every valued lane (a broadcast, a flag, zeros): the companion says so and holds it once.
    const uint64_t first = valued ? __shfl_sync(mask, value.bits, __ffs(valued) - 1) : 0;
    const bool uniform = valued != 0 && __all_sync(mask, !mine || value.bits == first);
    RlRecord* v = r + 1;
    if (lane == leader) {
      uint64_t* w = reinterpret_cast<uint64_t*>(v);
      w[0] = header_word(reuselens::RL_REC_VALUES, space, access, uniform ? reuselens::RL_COMPANION_UNIFORM : 0,
                         (uint16_t)size, (uint16_t)warp_in_block());
      w[1] = (uint64_t)valued << 32;
      w[2] = silent;
      w[3] = flat_block();
      if (uniform) {
        v->addr[0] = first;
      } else {
        uint32_t idle = ~valued;
        while (idle) {
          const int i = __ffs(idle) - 1;
          idle &= idle - 1;
          v->addr[i] = 0;
        }
      }
    }
    if (mine && !uniform) v->addr[lane] = value.bits;
  }
#endif
  // The lanes' writes reach the leader through the warp barrier, and the leader's release fence orders all of
  // them (fences are cumulative) before its commit; the committer that completes the buffer acquires through the
  // same counter before it raises host_ready. One release per record instead of a sequentially consistent
  // fence in every lane (issue 14: sortingNetworks' launches 43.2 -> 36.0 s on the H200).
  __syncwarp(mask);
  if (lane == leader) {
    release_fence_system();
    commit(s, t, record_slots * slots);
  }
}

#ifdef RL_VALUES
// The `size` bytes at generic address `p` as one companion value: zero-extended up to 8 bytes, a 64-bit hash of
// 16 (0 only for 16 zero bytes, as far as a hash can promise); unknown for other sizes.
__device__ __forceinline__ LaneValue value_at(const void* p, uint32_t size) {
  LaneValue v;
  v.known = true;
  switch (size) {
    case 1:
      v.bits = *static_cast<const volatile uint8_t*>(p);
      break;
    case 2:
      v.bits = *static_cast<const volatile uint16_t*>(p);
      break;
    case 4:
      v.bits = *static_cast<const volatile uint32_t*>(p);
      break;
    case 8:
      v.bits = *static_cast<const volatile uint64_t*>(p);
      break;
    case 16: {
      const uint64_t lo = static_cast<const volatile uint64_t*>(p)[0], hi = static_cast<const volatile uint64_t*>(p)[1];
      const uint64_t m = hi * 0x9E3779B97F4A7C15ull;
      v.bits = lo ^ ((m << 32) | (m >> 32));
      break;
    }
    default:
      v.known = false;
  }
  return v;
}

// Where the instruction's data is, as a generic address: global addresses are generic already; shared and local
// ones are offsets in their window.
__device__ __forceinline__ const void* generic(uint8_t space, uint64_t addr) {
  if (space == reuselens::RL_SPACE_SHARED) return __cvta_shared_to_generic((size_t)addr);
  if (space == reuselens::RL_SPACE_LOCAL) return __cvta_local_to_generic((size_t)addr);
  return reinterpret_cast<const void*>(addr);
}

// The value of one lane's access, read before the instruction runs: a load's is what it will load, a store's
// what it will write (`data`, from the Sanitizer), and silent when the location holds it already. Atomics
// (read and write) get none: the Sanitizer gives no operand for them.
__device__ __forceinline__ LaneValue access_value(uint8_t space, uint64_t addr, uint32_t size, uint32_t flags,
                                                  const void* data) {
  const bool read = flags & reuselens::RL_ACCESS_READ, write = flags & reuselens::RL_ACCESS_WRITE;
  if (read == write) return LaneValue();
  const void* p = generic(space, addr);
  if (read) return value_at(p, size);
  if (data == nullptr) return LaneValue();
  LaneValue stored = value_at(data, size);
  stored.silent = stored.known && value_at(p, size).bits == stored.bits;
  return stored;
}
// A launch outside the sampled ones (Config::values_every) reads no value and writes no companion.
#define RL_VALUE(s, space, addr, size, flags, data) \
  ((s)->values_on ? access_value(space, addr, size, flags, data) : LaneValue())
// The shared half of a zero-fill cp.async (rl_memcpy_async): it writes `size` zero bytes, whose value is 0 in every
// size (value_at's hash of 16 zero bytes is 0 too), silent when the destination holds zeros already.
__device__ __forceinline__ LaneValue zero_fill_value(const RlDeviceState* s, uint32_t dst, uint32_t size) {
  if (!s->values_on) return LaneValue();
  LaneValue zero = value_at(generic(reuselens::RL_SPACE_SHARED, dst), size);
  zero.silent = zero.known && zero.bits == 0;
  zero.bits = 0;
  return zero;
}
#else
#define RL_VALUE(s, space, addr, size, flags, data) LaneValue()
__device__ __forceinline__ LaneValue zero_fill_value(const RlDeviceState*, uint32_t, uint32_t) { return LaneValue(); }
#endif

}  // namespace

#define RL_CB extern "C" __device__ __noinline__ SanitizerPatchResult

// One memory access of `space`; in value mode with the lane's value (RL_VALUE).
__device__ __forceinline__ void emit_access(void* ud, uint64_t pc, uint64_t addr, uint32_t size, uint32_t flags,
                                            uint8_t space, const void* data) {
  RlDeviceState* s = static_cast<RlDeviceState*>(ud);
  if (s == nullptr || s->enabled == 0) return;  // before the value's read: an unselected launch pays nothing more
  emit(ud, pc, addr, size, reuselens::RL_REC_MEM, space, (uint8_t)flags, 0, ~0u, true,
       RL_VALUE(s, space, addr, size, flags, data));
}

RL_CB rl_global(void* ud, uint64_t pc, void* ptr, uint32_t size, uint32_t flags, const void* data) {
  emit_access(ud, pc, (uint64_t)ptr, size, flags, reuselens::RL_SPACE_GLOBAL, data);
  return SANITIZER_PATCH_SUCCESS;
}

RL_CB rl_shared(void* ud, uint64_t pc, void* ptr, uint32_t size, uint32_t flags, const void* data) {
  emit_access(ud, pc, (uint64_t)ptr, size, flags, reuselens::RL_SPACE_SHARED, data);
  return SANITIZER_PATCH_SUCCESS;
}

RL_CB rl_local(void* ud, uint64_t pc, void* ptr, uint32_t size, uint32_t flags, const void* data) {
  emit_access(ud, pc, (uint64_t)ptr, size, flags, reuselens::RL_SPACE_LOCAL, data);
  return SANITIZER_PATCH_SUCCESS;
}

// cp.async (LDGSTS): a global read at pc and a shared write at pc + 1, both flagged ASYNC_COPY. In value mode both
// halves carry the copied value, read from the source; the shared half's is silent when the destination holds it
// already.
// A lane with a null source is a zero fill: cuBLAS's and CUTLASS's tile loads pass a null source with src-size 0 for
// the rows and columns past a matrix's edge (69% of the cp.async lanes of a 32x32-tile SGEMM of a PyTorch MLP on the
// H200), and global address 0 can never be read without a fault. Such a lane reads nothing: the global half leaves
// it out (the record stays, one per executed instruction), its shared half writes zeros, and in value mode nothing is
// read through the null pointer.
RL_CB rl_memcpy_async(void* ud, uint64_t pc, void* src, uint32_t dst, uint32_t size) {
  RlDeviceState* s = static_cast<RlDeviceState*>(ud);
  if (s == nullptr || s->enabled == 0) return SANITIZER_PATCH_SUCCESS;
  const bool reads = src != nullptr;
  const uint32_t readers = __ballot_sync(__activemask(), reads);
  LaneValue copied, written;
  if (reads) {
    copied = RL_VALUE(s, reuselens::RL_SPACE_GLOBAL, (uint64_t)src, size, reuselens::RL_ACCESS_READ, nullptr);
    written = RL_VALUE(s, reuselens::RL_SPACE_SHARED, (uint64_t)dst, size, reuselens::RL_ACCESS_WRITE, src);
  } else {
    written = zero_fill_value(s, dst, size);
  }
  emit(ud, pc, (uint64_t)src, size, reuselens::RL_REC_MEM, reuselens::RL_SPACE_GLOBAL, reuselens::RL_ACCESS_READ,
       reuselens::RL_FLAG_ASYNC_COPY, readers, true, copied);
  emit(ud, pc + 1, (uint64_t)dst, size, reuselens::RL_REC_MEM, reuselens::RL_SPACE_SHARED, reuselens::RL_ACCESS_WRITE,
       reuselens::RL_FLAG_ASYNC_COPY, ~0u, true, written);
  return SANITIZER_PATCH_SUCCESS;
}

// ldmatrix / stmatrix: `count` matrices of 8 rows x 16 bytes; lane i supplies the row address of row
// i % 8 of matrix i / 8, so lanes >= 8 * count carry no address.
RL_CB rl_matrix(void* ud, uint64_t pc, uint32_t address, uint32_t size, uint32_t flags, uint32_t count, const void*) {
  const uint32_t lanes = count >= 4 ? ~0u : ((1u << (8u * count)) - 1u);
  emit(ud, pc, (uint64_t)address, size, reuselens::RL_REC_MEM, reuselens::RL_SPACE_SHARED, (uint8_t)flags,
       reuselens::RL_FLAG_MATRIX, lanes);
  return SANITIZER_PATCH_SUCCESS;
}

RL_CB rl_barrier(void* ud, uint64_t pc, uint32_t, uint32_t, uint32_t) {
  emit(ud, pc, 0, 0, reuselens::RL_REC_BARRIER, reuselens::RL_BARRIER_BLOCK, 0, 0, ~0u, false);
  return SANITIZER_PATCH_SUCCESS;
}

RL_CB rl_syncwarp(void* ud, uint64_t pc, uint32_t) {
  emit(ud, pc, 0, 0, reuselens::RL_REC_BARRIER, reuselens::RL_BARRIER_WARP, 0, 0, ~0u, false);
  return SANITIZER_PATCH_SUCCESS;
}

RL_CB rl_cuda_barrier(void* ud, uint64_t pc, void*, uint32_t, uint32_t) {
  emit(ud, pc, 0, 0, reuselens::RL_REC_BARRIER, reuselens::RL_BARRIER_MBARRIER, 0, 0, ~0u, false);
  return SANITIZER_PATCH_SUCCESS;
}

RL_CB rl_block_exit(void* ud, uint64_t pc) {
  emit(ud, pc, 0, 0, reuselens::RL_REC_BLOCK_EXIT, 0, 0, 0, ~0u, false);
  return SANITIZER_PATCH_SUCCESS;
}

RL_CB rl_smem_size(void* ud, uint64_t, uint32_t size) {
  RlDeviceState* s = static_cast<RlDeviceState*>(ud);
  if (s != nullptr && s->enabled) atomicMax(&s->smem_size, size);
  return SANITIZER_PATCH_SUCCESS;
}

// Bulk copies (cp.async.bulk, sm_90+): one thread issues `n` 16-byte blocks. Recorded as records of up
// to 32 "lanes", lane i standing for the i-th 16-byte block, size 16, flag ASYNC_COPY; global half at pc,
// shared half at pc + 1 (docs/collector.md).
__device__ __forceinline__ void emit_bulk(void* ud, uint64_t pc, uint64_t gaddr, uint32_t saddr, uint32_t blocks,
                                          bool to_shared) {
  RlDeviceState* s = static_cast<RlDeviceState*>(ud);
  if (s == nullptr || s->enabled == 0) return;
  // Every active lane sees the same operands; the lowest one records the copy once.
  if (lane_id() != (uint32_t)(__ffs(__activemask()) - 1)) return;
  const uint16_t warp = (uint16_t)warp_in_block();
  for (uint32_t first = 0; first < blocks; first += 32) {
    const uint32_t n = blocks - first < 32 ? blocks - first : 32;
    const uint32_t m = n == 32 ? ~0u : ((1u << n) - 1u);
    for (int half = 0; half < 2; ++half) {
      const bool global = half == 0;
      const uint8_t access = global == to_shared ? reuselens::RL_ACCESS_READ : reuselens::RL_ACCESS_WRITE;
      // The blocks are one stride of 16 bytes: the strided form holds them exactly.
      AddressForm f;
      f.form = s->packed ? reuselens::RL_FORM_STRIDED : reuselens::RL_FORM_FULL;
      f.base = (global ? gaddr : (uint64_t)saddr) + 16ull * first;
      f.stride = 16;
      const unsigned long long t = take_ticket(s, form_slots(f.form));
      RlSlot* r = slot_at(s, t);
      write_packed_header(
          r,
          header_word(reuselens::RL_REC_MEM, global ? reuselens::RL_SPACE_GLOBAL : reuselens::RL_SPACE_SHARED, access,
                      reuselens::RL_FLAG_ASYNC_COPY | reuselens::RL_FLAG_BULK, 16, warp, f.form),
          m, global ? pc : pc + 1, f);
      if (f.form == reuselens::RL_FORM_FULL) {
        RlRecord* full = reinterpret_cast<RlRecord*>(r);
        for (uint32_t i = 0; i < 32; ++i) full->addr[i] = i < n ? f.base + 16ull * i : 0;
      }
      release_fence_system();
      commit(s, t, form_slots(f.form));
    }
  }
}

RL_CB rl_bulk_g2s(void* ud, uint64_t pc, uint64_t src, uint32_t dst, uint32_t, uint32_t data, uint32_t) {
  emit_bulk(ud, pc, src, dst, data & 0xFFFFu, true);
  return SANITIZER_PATCH_SUCCESS;
}

RL_CB rl_bulk_s2g(void* ud, uint64_t pc, uint64_t dst, uint32_t src, uint32_t blocks) {
  emit_bulk(ud, pc, dst, src, blocks, false);
  return SANITIZER_PATCH_SUCCESS;
}
