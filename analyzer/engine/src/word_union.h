// The 32-bit words of shared memory that some lanes of a record touch, kept as the lanes' word intervals rather
// than word by word: an access may be as large as the record's 16-bit size field (bulk copies), and listing and
// sorting 32 x 16,385 words made one record take tens of seconds. Merging at most 32 intervals gives the
// distinct words and the busiest bank (docs/engine.md, "Shared memory") in time independent of the access size.
#pragma once

#include <algorithm>
#include <cstdint>

namespace reuselens {
namespace detail {

class WordUnion {
 public:
  static constexpr unsigned kMaxSpans = 32;  // one per lane of a warp
  static constexpr unsigned kBanks = 32;

  void clear() { n_ = 0; }
  bool empty() const { return n_ == 0; }
  // Words [first, last] of one lane; first <= last.
  void add(uint64_t first, uint64_t last) { spans_[n_++] = Span{first, last}; }

  // Sorts and merges the intervals in place and returns the number of distinct words.
  uint64_t merge() {
    if (n_ == 0) return 0;
    for (unsigned i = 1; i < n_; ++i) {  // insertion sort: 32 entries at most, usually already in order
      Span v = spans_[i];
      unsigned j = i;
      for (; j > 0 && spans_[j - 1].first > v.first; --j) spans_[j] = spans_[j - 1];
      spans_[j] = v;
    }
    unsigned out = 0;
    for (unsigned i = 1; i < n_; ++i) {
      if (spans_[i].first <= spans_[out].last) {
        spans_[out].last = std::max(spans_[out].last, spans_[i].last);
      } else {
        spans_[++out] = spans_[i];
      }
    }
    n_ = out + 1;
    uint64_t words = 0;
    for (unsigned i = 0; i < n_; ++i) words += spans_[i].last - spans_[i].first + 1;
    return words;
  }

  // After merge(): the largest number of distinct words that fall into one bank (word % 32). A run of L words
  // gives every bank L / 32 of them, and one more to the L % 32 banks from its first word's bank on.
  uint64_t busiest_bank() const {
    uint64_t every = 0;
    uint32_t extra[kBanks] = {0};
    for (unsigned i = 0; i < n_; ++i) {
      const uint64_t length = spans_[i].last - spans_[i].first + 1;
      every += length / kBanks;
      for (uint64_t k = 0; k < length % kBanks; ++k) extra[(spans_[i].first + k) % kBanks] += 1;
    }
    return every + *std::max_element(extra, extra + kBanks);
  }

 private:
  struct Span {
    uint64_t first, last;
  };
  Span spans_[kMaxSpans];
  unsigned n_ = 0;
};

}  // namespace detail
}  // namespace reuselens
