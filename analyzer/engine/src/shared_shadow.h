// Shadow of one running block's shared memory (docs/engine.md, "Shadow memory"): one 8-byte entry per 4-byte word,
// in one flat array indexed by the word's offset in the shared window.
//
// Why not the 16-byte paged entries of global memory: a shared entry needs no generation (a block's shared memory
// lives within one launch and its state is dropped at the block's exit) and no block index (the array belongs to
// one block), so it fits 64 bits; and real shared-memory kernels keep hundreds of blocks resident, records of
// which arrive interleaved, so the per-record cost is the cache misses on those blocks' shadow. Half the bytes,
// no page lookup, and lanes that walk consecutive words walk consecutive entries (issue 14).
//
// Entry layout (one little-endian u64; 0 means "never touched", node ids start at 1):
//
//   bits  0-27  node    engine-wide node id of the last access's PC
//   bits 28-37  tid     thread index in the block (warp * 32 + lane)
//   bit  38     write   the last access wrote
//   bits 39-50  wsync   that warp's count of block+warp barriers executed, mod 2^12
//   bits 51-63  bsync   that warp's count of block barriers executed, mod 2^13
//
// Worked example: lane 3 of warp 2 stores at node 12 after one __syncthreads:
//   12 | 67 << 28 | 1 << 38 | 1 << 39 | 1 << 51.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

#include "shadow.h"

namespace reuselens {
namespace detail {

inline uint64_t pack_shared(uint64_t node, uint64_t tid, bool write, uint64_t wsync, uint64_t bsync) {
  return node | tid << 28 | uint64_t(write) << 38 | (wsync & kWsyncMask) << 39 | (bsync & kBsyncMask) << 51;
}
inline uint32_t s_node(uint64_t e) { return uint32_t(e & kNodeMask); }
inline uint32_t s_tid(uint64_t e) { return uint32_t(e >> 28 & 0x3ff); }
inline bool s_write(uint64_t e) { return (e >> 38) & 1; }
inline uint32_t s_wsync(uint64_t e) { return uint32_t(e >> 39 & kWsyncMask); }
inline uint32_t s_bsync(uint64_t e) { return uint32_t(e >> 51); }

class SharedShadow {
 public:
  // Words of shared window a flat array covers at most: 1 MiB of offsets, beyond any GPU's 228 KiB per block.
  // Offsets past it (a malformed trace) still get entries, one by one in a map, so nothing is lost.
  static constexpr uint64_t kMaxFlatWords = 1ull << 18;
  static constexpr uint64_t kFarEntryBytes = 32;  // what a map node costs, charged to the budget

  explicit SharedShadow(Budget* budget) : budget_(budget) {}
  SharedShadow(const SharedShadow&) = delete;
  SharedShadow& operator=(const SharedShadow&) = delete;
  ~SharedShadow() {
    std::free(words_);
    budget_->give(count_ * sizeof(uint64_t) + far_.size() * kFarEntryBytes);
  }

  // Entry of word `g`. `hint`: how many words the launch's blocks needed so far; a new block's array starts at
  // that size, so blocks after the first rarely grow, and the hint grows with any block that needs more.
  uint64_t* entry(uint64_t g, uint64_t& hint) {
    if (g < count_) return words_ + g;
    if (g >= kMaxFlatWords) return far(g);
    grow(g, hint);
    return words_ + g;
  }
  // Entry of word `g` if it exists; makes and charges nothing (a prefetch target).
  const uint64_t* peek(uint64_t g) const { return g < count_ ? words_ + g : nullptr; }

 private:
  void grow(uint64_t g, uint64_t& hint) {
    uint64_t want = std::max<uint64_t>(hint, 256);
    while (want <= g) want <<= 1;
    want = std::min(want, kMaxFlatWords);
    budget_->take((want - count_) * sizeof(uint64_t));
    auto* p = static_cast<uint64_t*>(std::realloc(words_, want * sizeof(uint64_t)));
    if (!p) throw EngineError("out of memory for shared-memory shadow");
    std::memset(p + count_, 0, (want - count_) * sizeof(uint64_t));
    words_ = p;
    count_ = want;
    hint = std::max(hint, want);
  }
  uint64_t* far(uint64_t g) {
    auto it = far_.find(g);
    if (it != far_.end()) return &it->second;
    budget_->take(kFarEntryBytes);
    return &far_.emplace(g, 0).first->second;  // node-based map: the address stays valid as the map grows
  }

  Budget* budget_;
  uint64_t* words_ = nullptr;
  uint64_t count_ = 0;
  std::unordered_map<uint64_t, uint64_t> far_;
};

}  // namespace detail
}  // namespace reuselens
