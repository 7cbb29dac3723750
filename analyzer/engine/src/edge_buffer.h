// A worker's small cache of edge counts in front of its Accumulator's hash maps (paper section 3.2.1).
#pragma once

#include <cstddef>
#include <cstdint>

#include "stats.h"

namespace reuselens {
namespace detail {

// Edge counts folded before they reach the hash map: consecutive records (the warps of one PC) mostly hit the
// same few edges. Kept across records; flushed when full and at the end of every phase.
class EdgeBuffer {
 public:
  struct Slot {
    EdgeKey key;
    EdgeStats stats;
    uint32_t barrier;  // the barrier its synced accesses credit (docs/engine.md, "Barriers")
  };
  Slot& slot(const EdgeKey& k, uint32_t barrier, Accumulator& acc) {
    if (last_ < n_ && slots_[last_].key == k && slots_[last_].barrier == barrier) return slots_[last_];
    for (size_t i = 0; i < n_; ++i) {
      if (slots_[i].key == k && slots_[i].barrier == barrier) return slots_[last_ = i];
    }
    if (n_ == kSlots) flush(acc);
    slots_[n_] = Slot{k, EdgeStats(), barrier};
    last_ = n_;
    return slots_[n_++];
  }
  void flush(Accumulator& acc) {
    for (size_t i = 0; i < n_; ++i) {
      const Slot& s = slots_[i];
      acc.edges[s.key].merge(s.stats);
      if (s.stats.synced) {
        SpanStats& span = acc.barriers[s.barrier].spans[s.key];
        span.accesses += s.stats.synced;
        span.bytes += s.stats.synced_bytes;
      }
    }
    n_ = 0;
  }

 private:
  static constexpr size_t kSlots = 16;
  Slot slots_[kSlots];
  size_t n_ = 0, last_ = 0;
};

}  // namespace detail
}  // namespace reuselens
