// The 32-bit words of shared memory that some lanes of a record touch, kept as the lanes' word intervals rather
// than word by word: an access may be as large as the record's 16-bit size field (bulk copies), and listing and
// sorting 32 x 16,385 words made one record take tens of seconds. Merging at most 32 intervals gives the
// distinct words and the busiest bank (docs/engine.md, "Shared memory") in time independent of the access size.
#pragma once

#include <algorithm>
#include <cstdint>

#include "batch.h"

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

// The common shared access: every footprint of the record lies within kWords words from a multiple of 32 (a tile
// row, lanes permuted inside a warp's words as in a sorting network, 8- and 16-byte vectors). One bit per word,
// so the distinct words and the busiest bank come without sorting the lanes' intervals (the sort and the two
// merges were most of the distribution step on shared-memory kernels). Offsets are relative to that multiple of
// 32, so bit k of the window is bank k % 32. kQuarters 64-bit words: WordWindow (256 words) is the usual one;
// WideWordWindow (512) takes what the usual one misses by a little, a padded tile's rows (cuBLAS's SGEMM stores its
// A fragments to eight rows 36 words apart: 256 words from the first lane, 257-287 from a multiple of 32), which
// otherwise took the general pass's sort: a quarter of that kernel's shared records (session 26).
template <unsigned kQuarters>
class WordWindowOf {
  static_assert(kQuarters == 4 || kQuarters == 8, "busiest_bank counts up to 8 words a bank (4 quarters) or 16 (8)");

 public:
  static constexpr uint64_t kWords = 64 * kQuarters;

  void clear() {
    for (uint64_t& b : bits_) b = 0;
  }
  // One word, as an offset below kWords. Branch-free with constant indices, so the window stays in registers
  // (a store and reload per lane through an indexed word made a dependency chain through memory).
  void add(uint64_t offset) {
    const uint64_t bit = 1ull << (offset & 63), quarter = offset >> 6;
    for (unsigned i = 0; i < kQuarters; ++i) bits_[i] |= quarter == i ? bit : 0;
  }
  // The words [offset, offset + n), all below kWords: one mask when they lie in one quarter (a vector access
  // of 8 or 16 bytes: one operation instead of one per word).
  void add_span(uint64_t offset, uint64_t n) {
    const uint64_t shift = offset & 63, quarter = offset >> 6;
    if (shift + n > 64) {
      for (uint64_t w = offset; w < offset + n; ++w) add(w);
      return;
    }
    const uint64_t bits = (n == 64 ? ~0ull : (1ull << n) - 1) << shift;
    for (unsigned i = 0; i < kQuarters; ++i) bits_[i] |= quarter == i ? bits : 0;
  }
  void include(const WordWindowOf& o) {
    for (unsigned i = 0; i < kQuarters; ++i) bits_[i] |= o.bits_[i];
  }
  uint64_t words() const {
    uint64_t n = 0;
    for (uint64_t b : bits_) n += b ? popcount64(b) : 0;
    return n;
  }
  // The largest number of words in one bank. The 32-bit slices of the window (eight, or sixteen wide) are added
  // bank-wise into a counter per bank held as bit planes (c0 the lowest; four planes count to 8, five to 16);
  // the maximum is then read from the planes top down, keeping the banks that reach it.
  uint64_t busiest_bank() const {
    uint32_t c0 = 0, c1 = 0, c2 = 0, c3 = 0, c4 = 0;
    for (uint64_t b : bits_) {
      if (!b) continue;
      for (uint32_t x : {uint32_t(b), uint32_t(b >> 32)}) {
        const uint32_t carry0 = c0 & x;
        c0 ^= x;
        const uint32_t carry1 = c1 & carry0;
        c1 ^= carry0;
        if constexpr (kQuarters == 4) {  // at most 8 words a bank: c3 is set only by the eighth
          c3 |= c2 & carry1;
          c2 ^= carry1;
        } else {
          const uint32_t carry2 = c2 & carry1;
          c2 ^= carry1;
          c4 |= c3 & carry2;
          c3 ^= carry2;
        }
      }
    }
    uint32_t banks = ~0u;
    uint64_t best = 0;
    const uint32_t planes[5] = {c4, c3, c2, c1, c0};
    for (unsigned i = 0; i < 5; ++i) {
      if (planes[i] & banks) {
        banks &= planes[i];
        best += 16u >> i;
      }
    }
    return best;
  }

 private:
  uint64_t bits_[kQuarters] = {};
};
using WordWindow = WordWindowOf<4>;
using WideWordWindow = WordWindowOf<8>;

}  // namespace detail
}  // namespace reuselens
