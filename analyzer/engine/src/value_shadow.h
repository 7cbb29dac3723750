// Value shadow of value mode (docs/engine.md, "Value redundancy"): per 4-byte granule, the value the granule's
// last load returned, for the temporal redundancy of LoadSpy (seeds/001, section 3: a load is redundant when it
// returns what the previous load of the same location returned). Stores do not update it: a store that changed
// the value makes the next load differ from it, a silent store does not.
//
// Entry (one u64): bit 63 set = a load was seen; bits 0-31 the granule's 4 bytes (for a 16-byte access, 32 bits
// of the lanes' value hash, docs/trace-format.md "Value companions"). 0 = no load seen.
//
// Sparse pages of 512 entries keyed like PagedShadow; one per worker for the global granules it owns (owners
// are fixed per chunk, so a granule is always seen by the same worker) and one per block for shared and local
// memory, dropped with the block. Charged to the engine's Budget.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <unordered_map>

#include "shadow.h"

namespace reuselens {
namespace detail {

constexpr uint64_t kValueSeen = 1ull << 63;

class ValueShadow {
 public:
  static constexpr uint64_t kEntries = 512;  // 4 KiB pages
  explicit ValueShadow(Budget* budget) : budget_(budget) {}
  ValueShadow(ValueShadow&& o) noexcept
      : budget_(o.budget_), pages_(std::move(o.pages_)), last_key_(o.last_key_), last_page_(o.last_page_) {
    o.pages_.clear();
    o.last_page_ = nullptr;
  }
  ValueShadow(const ValueShadow&) = delete;
  ~ValueShadow() { clear(); }

  // Entry of granule `index`; `space_key` (high bits, disjoint from index / 512) separates e.g. threads.
  uint64_t* entry(uint64_t space_key, uint64_t index) {
    const uint64_t key = space_key | (index / kEntries);
    if (key != last_key_ || !last_page_) {
      last_page_ = page(key);
      last_key_ = key;
    }
    return last_page_ + index % kEntries;
  }
  void clear() {
    for (auto& kv : pages_) std::free(kv.second);
    if (budget_) budget_->give(pages_.size() * kEntries * sizeof(uint64_t));
    pages_.clear();
    last_page_ = nullptr;
  }

 private:
  uint64_t* page(uint64_t key) {
    auto it = pages_.find(key);
    if (it != pages_.end()) return it->second;
    budget_->take(kEntries * sizeof(uint64_t));
    auto* p = static_cast<uint64_t*>(std::calloc(kEntries, sizeof(uint64_t)));
    if (!p) throw EngineError("out of memory for value shadow pages");
    pages_.emplace(key, p);
    return p;
  }
  Budget* budget_;
  std::unordered_map<uint64_t, uint64_t*> pages_;
  uint64_t last_key_ = ~0ull;
  uint64_t* last_page_ = nullptr;
};

// The 4 bytes of granule k (0-based) of a lane's access, from its companion value (docs/trace-format.md): the
// value's bytes for accesses of up to 8 bytes, alternate halves of the hash for 16-byte ones.
inline uint32_t granule_value(uint64_t value, uint64_t k) { return uint32_t(value >> (32 * (k & 1))); }

}  // namespace detail
}  // namespace reuselens
