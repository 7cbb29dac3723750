// The running blocks one worker owns, by block index: an open-addressed table of (index, state) pairs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace reuselens {
namespace detail {

// Records arrive from hundreds of resident blocks interleaved (a cuBLAS SGEMM launch recorded on the H200: about
// 940 distinct blocks in every 4,096 records, one record per block in a row), so nearly every record looks its
// block up afresh. std::unordered_map's bucket array points at a node that holds the key: two dependent cache
// misses before the state's own line. Here the slot holds the index and the state's address: one line, and the
// state's lines can be asked for right after. Linear probing, deletion by shifting the cluster back (no
// tombstones: blocks come and go all launch long). States live on the heap, so their addresses stay valid as the
// table grows. Block indices are below 2^40 (Engine::Impl::plausible rejects any other record), so ~0 marks an
// empty slot.
template <class State>
class BlockTable {
 public:
  template <class... Args>
  State& get(uint64_t block, Args&&... args) {  // made (from args) when absent
    if ((size_ + 1) * 4 > slots_.size() * 3) grow();
    size_t i = home(block);
    while (slots_[i].block != kEmpty) {
      if (slots_[i].block == block) return *slots_[i].state;
      i = (i + 1) & mask_;
    }
    slots_[i] = Slot{block, new State(std::forward<Args>(args)...)};
    ++size_;
    return *slots_[i].state;
  }
  State* find(uint64_t block) const {
    if (slots_.empty()) return nullptr;
    for (size_t i = home(block);; i = (i + 1) & mask_) {
      if (slots_[i].block == block) return slots_[i].state;
      if (slots_[i].block == kEmpty) return nullptr;
    }
  }
  void erase(uint64_t block) {
    if (slots_.empty()) return;
    size_t i = home(block);
    while (slots_[i].block != block) {
      if (slots_[i].block == kEmpty) return;
      i = (i + 1) & mask_;
    }
    delete slots_[i].state;
    --size_;
    // Shift later members of the cluster back into the hole when the hole lies on their probe path.
    for (size_t j = (i + 1) & mask_; slots_[j].block != kEmpty; j = (j + 1) & mask_) {
      const size_t h = home(slots_[j].block);
      if (((j - h) & mask_) >= ((j - i) & mask_)) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i] = Slot{kEmpty, nullptr};
  }
  void clear() {
    for (Slot& s : slots_) {
      delete s.state;
      s = Slot{kEmpty, nullptr};
    }
    size_ = 0;
  }
  BlockTable() = default;
  BlockTable(const BlockTable&) = delete;
  BlockTable& operator=(const BlockTable&) = delete;
  ~BlockTable() { clear(); }

 private:
  static constexpr uint64_t kEmpty = ~0ull;
  struct Slot {
    uint64_t block;
    State* state;
  };
  size_t home(uint64_t block) const { return size_t((block * 0x9e3779b97f4a7c15ull) >> shift_); }
  void grow() {
    std::vector<Slot> old(slots_.size() ? slots_.size() * 2 : 64, Slot{kEmpty, nullptr});
    old.swap(slots_);
    mask_ = slots_.size() - 1;
    shift_ = 64u - unsigned(__builtin_ctzll(slots_.size()));
    for (const Slot& s : old) {
      if (s.block == kEmpty) continue;
      size_t i = home(s.block);
      while (slots_[i].block != kEmpty) i = (i + 1) & mask_;
      slots_[i] = s;
    }
  }
  std::vector<Slot> slots_;
  size_t mask_ = 0;
  unsigned shift_ = 64;
  size_t size_ = 0;
};

}  // namespace detail
}  // namespace reuselens
