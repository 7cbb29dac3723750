// State shared by the device patch (patch.cu) and the tool library (device_buffers.cpp, drain.cpp): the
// callback userdata.
//
// Transfer protocol (lossless multi-buffering, docs/collector.md):
//  * Records go straight into pinned host memory (zero-copy over the bus); `nbuf` buffers of `capacity`
//    32-byte slots each, a record taking 1, 2 or 9 consecutive slots (reuselens/packed_records.h; 18 for a record
//    and its value companion). A 64-bit ticket t = atomicAdd(head, n) names a record's first slot: generation
//    g = t / capacity, buffer b = g % nbuf, slot t % capacity. A record never spans two buffers: slots that
//    would cross a buffer's end are padding.
//  * Buffer b may hold generation g once the host has drained generation g - nbuf: the host publishes
//    host_allowed[b] (pinned memory, initially b) and the writer spins (with __nanosleep) until
//    host_allowed[b] >= g. The GPU waits, nothing is dropped. While writers wait, one of them at a time
//    (poller[b]) reads host_allowed[b] over the bus and copies it to allowed_cache[b] (device memory), which
//    the others watch: thousands of waiting warps reading host memory would crowd out the record writes
//    that complete the generation the host waits for.
//  * After writing, the leader fences at system scope and adds the record's slots to committed[b] (device
//    memory, monotonic). The writer that completes generation g sets host_ready[b] = g + 1.
//  * The host drain thread consumes generation g when host_ready[b] == g + 1, then sets
//    host_allowed[b] = g + nbuf. At kernel end the host reads `head` and drains the last, partial generation,
//    while the app goes on (drain.h).
//  * Generations are numbered on through a context's launches (arm_device_state): a launch's tickets start at the
//    first generation after the last launch's (head = g0 * capacity, committed[b] as if every generation before g0
//    were complete), so host_allowed keeps it off the buffer of a last generation still being drained. The
//    numbering starts again at 0, the flags reset, for a context's first launch and after a fault.
//  * A generation's slots are a packed stream: its records in the order their tickets were taken.
#pragma once

#include <stdint.h>

#define RL_MAX_BUFFERS 8
#define RL_UNRESOLVED_FUNCTION 0xFFFFFFFFu

struct RlDeviceState {
  uint32_t enabled;         // 0: callbacks return at once (launch not selected)
  uint32_t nbuf;            // buffers in the ring, 2..RL_MAX_BUFFERS
  uint64_t capacity;        // slots per buffer
  void* buffers;            // RlSlot[nbuf * capacity], pinned host memory (device-visible)
  uint64_t* host_allowed;   // pinned host memory, [nbuf]
  uint64_t* host_ready;     // pinned host memory, [nbuf]
  unsigned long long head;  // tickets handed out
  unsigned long long committed[RL_MAX_BUFFERS];
  unsigned long long allowed_cache[RL_MAX_BUFFERS];
  uint32_t poller[RL_MAX_BUFFERS];  // 1 while a waiting writer reads host_allowed[b]
  uint32_t smem_size;               // largest SET_SHARED_MEMORY_SIZE seen (bytes per block)
  uint32_t values_on;  // value patch only: this launch records values (launch sampling, Config::values_every)
  uint32_t packed;     // 1: records in their packed forms (the default); 0: all full (REUSELENS_PACKED_RECORDS=0)
  uint32_t pad;
  unsigned long long waits;  // tickets that had to wait for the host to hand their buffer back
  unsigned long long polls;  // reads of host_allowed made while waiting
};

// Object-level mode (docs/memory.md, "Object-level mode"): no records; the object patch (object_patch.cu)
// looks each global access up in a table of the live allocations and marks, per allocation, the kinds of access
// and the slices (reuselens/object_touches.h) the launch touched. The host reads the marks back after the
// kernel. Like RlDeviceState, the state starts with `enabled`, so one zeroed block serves as the disabled state
// of both modes.
//
// With element maps (REUSELENS_OBJECT_ELEMENTS=1, docs/memory.md "Element maps"), an entry also points at its
// object's map in device memory, kept for the object's whole life: 64 counters of lane-granule accesses, one per
// slice, as the engine's shadow counts them (shadow.h, RegionShadow::count_accesses), then a bitmap of touched
// granules, one bit per 2^map_shift granules (0: exact, each 4-byte granule; more where the exact map would take
// more than its share of the free device memory).
struct RlObjectEntry {
  uint64_t first_granule;  // the allocation's first and last 4-byte granule (address / 4), as the engine's shadow
  uint64_t last_granule;
  uint32_t slice_shift;     // object_slice_shift(size)
  uint32_t map_shift;       // granules per bit of the touched bitmap, log2
  unsigned long long* map;  // device memory: kObjectSlices counters, then the bitmap (uint32_t words); null: none
};

struct RlObjectMark {
  unsigned int access;  // RL_ACCESS_READ | RL_ACCESS_WRITE bits
  unsigned int pad;
  unsigned long long slices;  // bit k: slice k touched
};

struct RlObjectState {
  uint32_t enabled;
  uint32_t count;                // entries in `objects`, sorted by address, disjoint
  const RlObjectEntry* objects;  // device memory
  RlObjectMark* marks;           // device memory, one per entry, zeroed before each launch
};
