// Which granules the record being replayed has already touched (label warp_same_inst, paper section 3.1).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace reuselens {
namespace detail {

// Granules already touched by earlier lanes of the record being processed: such a lane's most recent prior
// access is the same dynamic instruction issue (label warp_same_inst, section 3.1).
class SameIssueTable {
 public:
  void begin(size_t expected) {
    size_t want = 64;
    while (want < 2 * expected) want <<= 1;
    if (want > keys_.size()) {
      keys_.assign(want, 0);
      stamps_.assign(want, 0);
      stamp_ = 0;
    }
    if (++stamp_ == 0) {
      std::fill(stamps_.begin(), stamps_.end(), 0);
      stamp_ = 1;
    }
  }
  // True when `g` was seen earlier in this record; records it otherwise.
  bool seen(uint64_t g) {
    size_t mask = keys_.size() - 1;
    size_t i = size_t((g * 0x9e3779b97f4a7c15ull) >> 20) & mask;
    while (stamps_[i] == stamp_) {
      if (keys_[i] == g) return true;
      i = (i + 1) & mask;
    }
    stamps_[i] = stamp_;
    keys_[i] = g;
    return false;
  }

 private:
  std::vector<uint64_t> keys_;
  std::vector<uint32_t> stamps_;
  uint32_t stamp_ = 0;
};

}  // namespace detail
}  // namespace reuselens
