// A worker's small cache of edge counts in front of its Accumulator's hash maps (paper section 3.2.1).
#pragma once

#include <cstddef>
#include <cstdint>

#include "stats.h"

namespace reuselens {
namespace detail {

// Edge counts folded before they reach the hash map. A loop body's records cycle through many more edges than a
// handful: a cuBLAS SGEMM tile loop (sm80_xmma_gemm, recorded on the H200) runs about 30 PCs of shared fragments
// and asynchronous copies, each with its few edges, and a 16-slot list flushed whole when full missed 64% of its
// lookups, every miss an unordered_map visit. So the slots are a table indexed by the key's hash, and a conflicting
// key spills only the slot it takes. Every count is a sum, so when a slot reaches the map does not change the
// totals. Two ways per set (a key takes either slot of its set; a new key evicts the one used less recently): one
// launch of the PyTorch loop's 32x32-tile SGEMM (recorded on the H200, session 26) credits 600-800 distinct edges
// and barriers, and one direct-mapped slot per key hash spilled 367,794 of its 1,443,328 lookups with 256 slots,
// 46,532 with 2,048, while two ways of 1,024 sets spilled 12,994; two ways of 512 sets took its blocks step from
// 166 to 144 ms at one worker, with the same results. Spilled when a key takes its slot and at the end of the
// launch (flush), not after every batch's steps: at 12 workers a batch gives each worker a couple of thousand
// records, and spilling the whole table after each would cost about as many map visits as it saves.
class EdgeBuffer {
 public:
  struct Slot {
    EdgeKey key;
    EdgeStats stats;
    uint32_t barrier;  // the barrier its synced accesses credit (docs/engine.md, "Barriers")
  };
  Slot& slot(const EdgeKey& k, uint32_t barrier, Accumulator& acc) {
    if (last_ != nullptr && last_->key == k && last_->barrier == barrier) return *last_;
    const size_t set = (EdgeKeyHash()(k) + barrier * 0x9e3779b9u) & (kSets - 1), i = 2 * set;
    for (size_t j = i; j < i + 2; ++j) {
      if (used_[j] && slots_[j].key == k && slots_[j].barrier == barrier) {
        newer_[set] = uint8_t(j - i);
        return *(last_ = &slots_[j]);
      }
    }
    size_t j = !used_[i] ? i : !used_[i + 1] ? i + 1 : i + (1 - newer_[set]);  // an empty way, else the older
    Slot& s = slots_[j];
    if (used_[j]) {
      spill(s, acc);
    } else {
      used_[j] = true;
      filled_[n_++] = uint16_t(j);
    }
    newer_[set] = uint8_t(j - i);
    s = Slot{k, EdgeStats(), barrier};
    return *(last_ = &s);
  }
  void flush(Accumulator& acc) {
    for (size_t x = 0; x < n_; ++x) {
      spill(slots_[filled_[x]], acc);
      used_[filled_[x]] = false;
    }
    n_ = 0;
    last_ = nullptr;
  }

 private:
  static void spill(const Slot& s, Accumulator& acc) {
    acc.edges[s.key].merge(s.stats);
    if (s.stats.synced) {
      SpanStats& span = acc.barriers[s.barrier].spans[s.key];
      span.accesses += s.stats.synced;
      span.bytes += s.stats.synced_bytes;
    }
  }
  static constexpr size_t kSets = 512, kSlots = 2 * kSets;  // kSets: a power of two
  Slot slots_[kSlots];
  bool used_[kSlots] = {};
  uint8_t newer_[kSets] = {};  // per set: the way used last
  uint16_t filled_[kSlots];    // the used slots, so that the launch's flush visits only those
  size_t n_ = 0;
  Slot* last_ = nullptr;
};

}  // namespace detail
}  // namespace reuselens
