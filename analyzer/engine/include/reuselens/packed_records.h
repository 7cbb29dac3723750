// Packed records: how the device patch writes records into the collector's buffers, and how the collector hands
// them on (the engine queue, Engine::consume_packed). Never in a trace file: the trace sink unpacks them.
// docs/trace-format.md, "Packed records", is the prose description; this header is the only definition.
//
// A packed stream is a sequence of 32-byte slots. A record takes 1, 2 or 9 of them; its first slot is the first
// 32 bytes of its RlRecord (type .. block), with the form in the upper bits of the type byte:
//   FULL           9 slots: the RlRecord itself (an array of RlRecord is a packed stream of full records);
//   NO_ADDRESSES   1 slot: every addr[] is 0 (barriers, block exits);
//   STRIDED        2 slots: the second an RlStrided; lane i of active_mask has address
//                  base + stride * (i % group) + group_stride * (i / group), the other lanes 0;
//   PADDING        1 slot, nothing: where a record would have crossed the end of a buffer.
// Every form reproduces its RlRecord exactly (unsigned 64-bit arithmetic, the same on both sides), so the trace,
// the engine's input and every count are what full records would give.
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "reuselens/trace_format.h"

#ifdef __cplusplus
namespace reuselens {
#endif

#define RL_SLOT_BYTES 32u
#define RL_FULL_SLOTS 9u  // sizeof(RlRecord) / RL_SLOT_BYTES
#define RL_FORM_SHIFT 5u  // the form's bits in the type byte (types are 1..4)
#define RL_TYPE_MASK 0x1Fu

enum RlPackedForm { RL_FORM_FULL = 0, RL_FORM_NO_ADDRESSES = 1, RL_FORM_STRIDED = 2, RL_FORM_PADDING = 3 };

struct RlSlot {
  uint64_t w[4];
};

// The second slot of a STRIDED record. group is 1..32 (32: one stride over the whole warp; a broadcast has
// stride 0).
struct RlStrided {
  uint64_t base;
  uint64_t stride;
  uint64_t group_stride;
  uint32_t group;
  uint32_t reserved;
};

#ifdef __cplusplus
static_assert(sizeof(RlSlot) == RL_SLOT_BYTES, "slot layout is part of the buffer protocol");
static_assert(sizeof(RlStrided) == RL_SLOT_BYTES, "a strided payload is one slot");
static_assert(sizeof(RlRecord) == RL_FULL_SLOTS * RL_SLOT_BYTES, "a full record is nine slots");

inline unsigned packed_form(const RlSlot& first) { return (unsigned)((first.w[0] & 0xFFu) >> RL_FORM_SHIFT); }

// Slots the record starting at `first` takes; 0 for a form this build does not know.
inline unsigned packed_slots(const RlSlot& first) {
  switch (packed_form(first)) {
    case RL_FORM_FULL:
      return RL_FULL_SLOTS;
    case RL_FORM_NO_ADDRESSES:
    case RL_FORM_PADDING:
      return 1;
    case RL_FORM_STRIDED:
      return 2;
  }
  return 0;
}

// The record at `first` (a well-formed one, packed_record_slots, not PADDING) as a full record.
inline void unpack_record(const RlSlot* first, RlRecord* out) {
  const unsigned form = packed_form(*first);
  if (form == RL_FORM_FULL) {
    memcpy(out, first, sizeof(RlRecord));
    return;
  }
  memcpy(out, first, RL_SLOT_BYTES);
  out->type = (uint8_t)(out->type & RL_TYPE_MASK);
  if (form != RL_FORM_STRIDED) {
    memset(out->addr, 0, sizeof out->addr);
    return;
  }
  RlStrided s;
  memcpy(&s, first + 1, sizeof s);
  const uint32_t group = s.group;  // 1..32: packed_record_slots checks it
  const uint64_t st = s.stride;
  uint64_t* a = out->addr;
  // Sums, not a product per lane (products took 31-59 ns a record on the development machine, sums 11-16). One
  // induction variable: GCC 12.2's loop vectorizer, at -O2 and -O3, gave four interleaved ones (v0..v3, each
  // stepping by 4 strides) lanes 2 and 3 equal to lanes 0 and 1 (tests/engine/test_packed_records.py builds the
  // forms' brute-force check at every level).
  if (group == RL_WARP_SIZE) {  // one stride over the warp, the commonest form
    uint64_t v = s.base;
    for (uint32_t j = 0; j < RL_WARP_SIZE; ++j, v += st) a[j] = v;
  } else if (group >= 4) {  // the first group lane by lane, then each lane from the one a group before it
    uint64_t v = s.base;
    for (uint32_t j = 0; j < group; ++j, v += st) a[j] = v;
    for (uint32_t j = group; j < RL_WARP_SIZE; ++j) a[j] = a[j - group] + s.group_stride;
  } else {
    uint64_t row = s.base, v = row;
    for (uint32_t i = 0, in_row = 0; i < RL_WARP_SIZE; ++i) {
      a[i] = v;
      if (++in_row == group) {
        in_row = 0;
        row += s.group_stride;
        v = row;
      } else {
        v += st;
      }
    }
  }
  const uint32_t mask = out->active_mask;
  if (mask != ~0u) {
    for (uint32_t i = 0; i < RL_WARP_SIZE; ++i) a[i] &= 0 - (uint64_t)((mask >> i) & 1u);  // 0 outside the mask
  }
}

// The record at `first` (as unpack_record takes it) as the online engine reads it (the engine queue's copy threads,
// Engine::consume_packed), without the bytes it never reads: unpack_record writes 288 bytes a record, the drain's
// largest cost on a record-heavy run. A barrier or block exit gets its header alone: the engine reads no address of
// one. A global record without a companion, two or more lanes active, whose lanes the strided form gives one stride
// over the warp (not negative, no wrap-around) gets the header and one or two addresses, flagged (trace_format.h):
// RL_FLAG_ONE_ADDRESS for at most 4 bytes per lane at stride 0 (SHOC BFS's per-vertex loads, 97% of its records),
// its first active lane's address; RL_FLAG_ONE_STRIDE for the others (a coalesced access, a column walk: most global
// records of most kernels), its first and last active lanes'. The header's line and at most one more instead of four
// and a half. Every other record as unpack_record gives it. Never for a trace file.
inline void unpack_for_engine(const RlSlot* first, RlRecord* out) {
  const unsigned form = packed_form(*first);
  const uint64_t head = first->w[0];  // type | form, space, access, flags, size, warp (little-endian)
  const unsigned type = (unsigned)(head & RL_TYPE_MASK);
  // The header made whole before it is stored: a flag or'ed into `out` after the header's store waited for the line
  // to come from memory, one record at a time (into a ring beyond the caches, a broadcast took 27 ns instead of 11 on
  // the development machine).
  RlSlot header = *first;
  header.w[0] = head & ~(uint64_t)(0xFFu & ~RL_TYPE_MASK);  // the form's bits cleared
  if (form == RL_FORM_STRIDED) {
    const RlSlot& form_slot = first[1];  // RlStrided: base, stride, group_stride, group
    const uint32_t mask = (uint32_t)(first->w[1] >> 32), size = (uint32_t)(head >> 32 & 0xFFFFu);
    const uint64_t stride = form_slot.w[1];
    if (type == RL_REC_MEM && (head >> 8 & 0xFFu) == RL_SPACE_GLOBAL && !(head >> 24 & RL_FLAG_VALUES) &&
        (mask & (mask - 1)) != 0 && (uint32_t)form_slot.w[3] == RL_WARP_SIZE && size >= 1) {
      const unsigned lo = (unsigned)__builtin_ctz(mask), hi = 31u - (unsigned)__builtin_clz(mask);
      const uint64_t a_lo = form_slot.w[0] + stride * lo;
      uint64_t flag = 0;
      if (stride == 0 && size <= 4) {
        flag = RL_FLAG_ONE_ADDRESS;
      } else if (size - 1 <= UINT64_MAX - a_lo && stride <= (UINT64_MAX - a_lo - (size - 1)) / (hi - lo)) {
        flag = RL_FLAG_ONE_STRIDE;  // (the stride is read back from the two addresses: no wrap-around allowed)
      }
      if (flag) {
        header.w[0] |= flag << 24;  // the flags byte
        memcpy(out, &header, RL_SLOT_BYTES);
        out->addr[lo] = a_lo;
        if (flag == RL_FLAG_ONE_STRIDE) out->addr[hi] = a_lo + stride * (hi - lo);
        return;
      }
    }
  } else if (form == RL_FORM_NO_ADDRESSES && (type == RL_REC_BARRIER || type == RL_REC_BLOCK_EXIT)) {
    memcpy(out, &header, RL_SLOT_BYTES);
    return;
  }
  unpack_record(first, out);
}

// Slots the record at `at` takes, of the `left` slots from it to the stream's end; 0 when the record is malformed:
// it runs past the end, has a form this build does not know, or a strided group outside 1..32.
inline size_t packed_record_slots(const RlSlot* at, size_t left) {
  const unsigned n = left > 0 ? packed_slots(*at) : 0;
  if (n == 0 || left < n) return 0;
  if (packed_form(*at) == RL_FORM_STRIDED) {
    const uint32_t group = (uint32_t)at[1].w[3];
    if (group < 1 || group > RL_WARP_SIZE) return 0;
  }
  return n;
}

// Walks a packed stream: next() gives each record's first slot (PADDING skipped) until the end, or null; a
// malformed record (packed_record_slots) stops the walk with malformed() true.
//
// The walk asks for the stream's lines kAheadBytes before it reads them. Each record's place depends on the one
// before it, and the hardware prefetcher does not keep ahead of a walk over memory the GPU has just written: on
// the GPU host one thread walked a 16 MiB stream the GPU wrote into mapped pinned memory at 10.3 GB/s, and at 17.5
// asking 2 KiB ahead (4 and 8 KiB: 17.4-18.6), and the drain thread's PC resolution (collector/native/src/
// pc_ranges.cpp) took 1.31 s instead of 2.34 s over cuda-samples mergeSort's launches, 3.67 instead of 7.25 over
// sortingNetworks' (benchmarks/results/h100-2026-12-05-s36: call 1's pinned_walk.cu, call 2).
class PackedCursor {
 public:
  PackedCursor(const RlSlot* slots, size_t count)
      : begin_(slots), at_(slots), end_(slots + count), stream_bytes_(count * RL_SLOT_BYTES) {}
  const RlSlot* next() {
    while (at_ < end_) {
      const size_t here = (size_t)(at_ - begin_) * RL_SLOT_BYTES;
      const size_t want = stream_bytes_ - here > kAheadBytes ? here + kAheadBytes : stream_bytes_;
      for (; ahead_ < want; ahead_ += 64) __builtin_prefetch(reinterpret_cast<const char*>(begin_) + ahead_, 1);
      const size_t n = packed_record_slots(at_, (size_t)(end_ - at_));
      if (n == 0) {
        malformed_ = true;
        at_ = end_;
        return nullptr;
      }
      const RlSlot* r = at_;
      at_ += n;
      if (packed_form(*r) != RL_FORM_PADDING) return r;
    }
    return nullptr;
  }
  bool malformed() const { return malformed_; }

 private:
  static constexpr size_t kAheadBytes = 2048;
  const RlSlot* begin_;
  const RlSlot* at_;
  const RlSlot* end_;
  size_t stream_bytes_;
  size_t ahead_ = 0;  // bytes from begin_ to the first line not asked for yet
  bool malformed_ = false;
};
}  // namespace reuselens
#endif
