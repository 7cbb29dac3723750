// Shadow memory of the engine: one 16-byte entry per tracked 4-byte granule (docs/engine.md, "Shadow memory").
//
// Entry layout (two little-endian u64 words; an all-zero entry means "never touched"):
//
//   w0  bits  0-23  gen     launch generation (1..2^24-1) of the last access; 0 = empty
//       bits 24-51  node    engine-wide node id of the last access's PC (1..2^28-1)
//       bits 52-63  wsync   that warp's count of block+warp barriers executed, mod 2^12
//   w1  bits  0-39  block   flat block index of the last access (engine rejects indices >= 2^40)
//       bits 40-49  tid     thread index in the block (warp * 32 + lane)
//       bit  50     write   the last access wrote (stores and atomics)
//       bits 51-63  bsync   that warp's count of block barriers executed, mod 2^13
//
// Worked example: lane 3 of warp 2 in block 7 stores at node 12 in generation 5, after one __syncthreads:
//   w0 = 5 | 12 << 24 | 1 << 52;  w1 = 7 | 67 << 40 | 1 << 50 | 1 << 51.
//
// Where the entries live: global memory inside a known allocation -> RegionShadow (direct mapped, mmap
// MAP_NORESERVE, demand paged); any other global address, shared memory (per block) and local memory (per
// thread) -> PagedShadow (a sparse table of 4 KiB pages). Both charge committed pages to a Budget.
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "reuselens/engine.h"
#include "reuselens/object_touches.h"
#include "switches.h"

namespace reuselens {
namespace detail {

struct Entry {
  uint64_t w0;
  uint64_t w1;
};
static_assert(sizeof(Entry) == 16, "shadow entry is 128 bits");

constexpr unsigned kGenBits = 24, kNodeBits = 28, kWsyncBits = 12, kBlockBits = 40, kBsyncBits = 13;
constexpr uint64_t kGenMask = (1ull << kGenBits) - 1;
constexpr uint64_t kNodeMask = (1ull << kNodeBits) - 1;
constexpr uint64_t kWsyncMask = (1ull << kWsyncBits) - 1;
constexpr uint64_t kBlockMask = (1ull << kBlockBits) - 1;
constexpr uint64_t kBsyncMask = (1ull << kBsyncBits) - 1;
constexpr uint64_t kMaxBlock = 1ull << kBlockBits;
constexpr uint64_t kMaxNode = 1ull << kNodeBits;
constexpr uint64_t kMaxGen = 1ull << kGenBits;

inline uint64_t pack_w0(uint64_t gen, uint64_t node, uint64_t wsync) {
  return gen | node << 24 | (wsync & kWsyncMask) << 52;
}
inline uint64_t pack_w1(uint64_t block, uint64_t tid, bool write, uint64_t bsync) {
  return block | tid << 40 | uint64_t(write) << 50 | (bsync & kBsyncMask) << 51;
}
inline uint32_t e_gen(const Entry& e) { return uint32_t(e.w0 & kGenMask); }
inline uint32_t e_node(const Entry& e) { return uint32_t(e.w0 >> 24 & kNodeMask); }
inline uint32_t e_wsync(const Entry& e) { return uint32_t(e.w0 >> 52); }
inline uint64_t e_block(const Entry& e) { return e.w1 & kBlockMask; }
inline uint32_t e_tid(const Entry& e) { return uint32_t(e.w1 >> 40 & 0x3ff); }
inline bool e_write(const Entry& e) { return (e.w1 >> 50) & 1; }
inline uint32_t e_bsync(const Entry& e) { return uint32_t(e.w1 >> 51); }

constexpr size_t kPageEntries = 256;  // 4 KiB of shadow = 1 KiB of tracked memory
constexpr size_t kPageBytes = kPageEntries * sizeof(Entry);
constexpr uint64_t kPopulatePages = 16;      // RegionShadow::populate_ahead: 64 KiB of shadow per call
constexpr uint64_t kHugeBytes = 2ull << 20;  // a transparent huge page (x86-64 PMD)
constexpr uint64_t kHugePages = kHugeBytes / kPageBytes;

// Committed shadow bytes, shared by all workers; exceeding the limit is a user-visible error.
class Budget {
 public:
  explicit Budget(uint64_t limit) : limit_(limit) {}
  void take(uint64_t bytes) {
    uint64_t now = used_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
    uint64_t peak = peak_.load(std::memory_order_relaxed);
    while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
    if (now > limit_) {
      throw EngineError("shadow memory budget of " + std::to_string(limit_ >> 20) +
                        " MiB exceeded; raise the shadow budget or profile fewer kernels/launches");
    }
  }
  void give(uint64_t bytes) { used_.fetch_sub(bytes, std::memory_order_relaxed); }
  // Memory the kernel holds for the shadow beyond the charged pages (a block made whole ahead of its touches):
  // granted only while charged + held stays within the limit; never reported, never an error.
  bool hold(uint64_t bytes) {
    const uint64_t now = held_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
    if (used() + now <= limit_) return true;
    held_.fetch_sub(bytes, std::memory_order_relaxed);
    return false;
  }
  void release(uint64_t bytes) { held_.fetch_sub(bytes, std::memory_order_relaxed); }
  uint64_t used() const { return used_.load(std::memory_order_relaxed); }
  uint64_t peak() const { return peak_.load(std::memory_order_relaxed); }

 private:
  uint64_t limit_;
  std::atomic<uint64_t> used_{0};
  std::atomic<uint64_t> peak_{0};
  std::atomic<uint64_t> held_{0};
};

// Sparse table: page key -> a page of kEntries entries of T (zeroed when made). Used by one worker at a time
// (never shared); every page is charged to the Budget. PagedShadow is the one of shadow entries; value mode's
// value shadow (value_shadow.h) is another.
template <class T, size_t kEntries>
class SparsePages {
 public:
  explicit SparsePages(Budget* budget) : budget_(budget) {}
  SparsePages(SparsePages&& o) noexcept
      : budget_(o.budget_), pages_(std::move(o.pages_)), last_key_(o.last_key_), last_page_(o.last_page_) {
    o.pages_.clear();
    o.last_page_ = nullptr;
  }
  SparsePages(const SparsePages&) = delete;
  ~SparsePages() { clear(); }

  // Entry for granule `index`; `space_key` (high bits, disjoint from index / kEntries) separates e.g. threads.
  T* entry(uint64_t space_key, uint64_t index) {
    uint64_t key = space_key | (index / kEntries);
    if (key != last_key_ || !last_page_) {
      last_page_ = page(key);
      last_key_ = key;
    }
    return last_page_ + index % kEntries;
  }
  void clear() {
    for (auto& kv : pages_) std::free(kv.second);
    if (budget_) budget_->give(pages_.size() * kEntries * sizeof(T));
    pages_.clear();
    last_page_ = nullptr;
  }

 private:
  T* page(uint64_t key) {
    auto it = pages_.find(key);
    if (it != pages_.end()) return it->second;
    budget_->take(kEntries * sizeof(T));
    auto* p = static_cast<T*>(std::calloc(kEntries, sizeof(T)));
    if (!p) throw EngineError("out of memory for shadow pages");
    pages_.emplace(key, p);
    return p;
  }
  Budget* budget_;
  std::unordered_map<uint64_t, T*> pages_;
  uint64_t last_key_ = ~0ull;
  T* last_page_ = nullptr;
};
// Sparse shadow: page key -> 4 KiB page of entries.
using PagedShadow = SparsePages<Entry, kPageEntries>;

// Direct-mapped shadow of one device allocation, indexed by absolute granule (address / 4): entry i covers the
// granule first_ + i. The mapping is reserved with MAP_NORESERVE and committed by the kernel on first touch; a
// bitmap of touched shadow pages (atomic: pages of one region may be owned by different workers) charges the
// budget once per page.
//
// An allocation larger than kMaxDirectBytes, or one whose shadow cannot be reserved, gets no mapping: it is
// still known (overlap checks, frees) but contains no granule, so its accesses go to the sparse fallback like
// any address outside an allocation. Labels never depend on allocations (docs/engine.md), so this only costs
// lookup speed. The caller guarantees that the allocation does not run past the end of the address space.
class RegionShadow {
 public:
  // 1 TiB of device memory (4 TiB of reserved shadow, a 128 MiB touched-page bitmap): beyond any GPU's memory
  // today, and far below the size at which the shadow's byte count would overflow.
  static constexpr uint64_t kMaxDirectBytes = 1ull << 40;

  // values: value mode, whose value shadow of the region's granules (value_shadow.h) lies beside the entries.
  RegionShadow(uint64_t base, uint64_t size, Budget* budget, unsigned workers = 1, bool values = false)
      : base_(base), size_(size), first_(base >> 2), budget_(budget), workers_(workers) {
    slice_accesses_.reset(new uint64_t[size_t(workers_) * kRowWords]());
    if (size == 0 || size > kMaxDirectBytes) return;
    count_ = ((base + (size - 1)) >> 2) - first_ + 1;  // base + size - 1 cannot wrap (caller's guarantee)
    bytes_ = (count_ * sizeof(Entry) + kPageBytes - 1) / kPageBytes * kPageBytes;
    // Reserved 2 MiB-aligned, so that a huge-page-sized block of shadow is one PMD (see advise_next_block).
    const uint64_t reserve = bytes_ + kHugeBytes;
    void* p = mmap(nullptr, reserve, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {  // address space limited (ulimit -v): the sparse fallback tracks this allocation
      count_ = bytes_ = 0;
      return;
    }
    const uintptr_t raw = reinterpret_cast<uintptr_t>(p);
    const uintptr_t aligned = (raw + kHugeBytes - 1) & ~uintptr_t(kHugeBytes - 1);
    if (aligned > raw) munmap(p, aligned - raw);
    if (raw + reserve > aligned + bytes_)
      munmap(reinterpret_cast<void*>(aligned + bytes_), raw + reserve - aligned - bytes_);
    shadow_ = reinterpret_cast<Entry*>(aligned);
    if (values) {  // 8 bytes per granule, committed as touched; charged with the entries' pages (entry())
      void* v = mmap(nullptr, count_ * sizeof(uint64_t), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (v != MAP_FAILED) values_ = static_cast<uint64_t*>(v);
    }
    if (!values && segments_enabled()) {  // one flag byte per segment (see summarized()); committed as touched
      segments_ = segment_of(first_ + count_ - 1) + 1;
      void* f = mmap(nullptr, segments_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (f != MAP_FAILED) summarized_ = static_cast<uint8_t*>(f);
    }
    touched_ = std::vector<std::atomic<uint64_t>>((bytes_ / kPageBytes + 63) / 64);
    advised_.assign(bytes_ / kHugeBytes, false);
    blocks_ = bytes_ / kHugeBytes;
    dense_.reset(new std::atomic<uint8_t>[blocks_ + 1]());
  }
  RegionShadow(const RegionShadow&) = delete;
  ~RegionShadow() {
    if (shadow_) munmap(shadow_, bytes_);
    if (values_) munmap(values_, count_ * sizeof(uint64_t));
    if (summarized_) munmap(summarized_, segments_);
    budget_->give(committed_.load());
    budget_->release(held_.load());
  }
  // Which kinds of access (RL_ACCESS_READ / RL_ACCESS_WRITE bits) the open launch made to the allocation: the
  // object-level memory analysis (docs/memory.md) needs which objects each kernel read and wrote. Written by any
  // worker; the load first keeps the line shared once the bits are set.
  void mark_access(uint8_t access) {
    const uint8_t bits = access & (RL_ACCESS_READ | RL_ACCESS_WRITE);
    if ((access_.load(std::memory_order_relaxed) & bits) != bits) access_.fetch_or(bits, std::memory_order_relaxed);
  }
  uint8_t take_access() { return access_.exchange(0, std::memory_order_relaxed); }

  // Intra-object figures (docs/memory.md, "Intra-object patterns"): the object cut into at most kSlices slices
  // of a power-of-two size (at least one shadow page's data, 1 KiB, so a page lies in one slice); per slice the
  // lane-granule accesses so far (one row per worker: no sharing), and which slices the open launch touched.
  static constexpr unsigned kSlices = kObjectSlices;  // reuselens/object_touches.h, shared with the device patch
  // A worker's row: the slices' access counts, then its count of first touches, then value mode's load
  // lane-granules with a value and those that found their granule's last loaded value (kValueLoads, kSameValue),
  // padded to whole cache lines so that workers never write the same line.
  static constexpr unsigned kRowWords = 72;
  static constexpr unsigned kValueLoads = kSlices + 1, kSameValue = kSlices + 2;
  uint64_t slice_bytes() const { return 1ull << slice_shift_; }
  unsigned slice_of(uint64_t granule) const { return object_slice_of(first_, granule, slice_shift_); }
  // What the object-level analysis learns from `accesses` lane-granule accesses of kind `access` at `granule`
  // (all in one slice): which kinds the launch made (mark_access) and the slice's counts.
  void note_accesses(uint8_t access, uint64_t granule, unsigned worker, uint64_t accesses) {
    mark_access(access);
    count_accesses(granule, worker, accesses);
  }
  void count_accesses(uint64_t granule, unsigned worker, uint64_t accesses) {
    const unsigned slice = slice_of(granule);
    slice_accesses_[size_t(worker) * kRowWords + slice] += accesses;
    const uint64_t bit = 1ull << slice;
    if (!(launch_slices_.load(std::memory_order_relaxed) & bit))
      launch_slices_.fetch_or(bit, std::memory_order_relaxed);
  }
  uint64_t take_launch_slices() { return launch_slices_.exchange(0, std::memory_order_relaxed); }
  uint64_t slice_accesses(unsigned slice) const {
    uint64_t n = 0;
    for (unsigned w = 0; w < workers_; ++w) n += slice_accesses_[size_t(w) * kRowWords + slice];
    return n;
  }
  // A granule's first access since the shadow was mapped (or reset): its entry was empty.
  void count_first_touch(unsigned worker) { ++slice_accesses_[size_t(worker) * kRowWords + kSlices]; }
  // Value mode (docs/engine.md, "Value redundancy"): a load lane-granule of the object with a value, and whether it
  // found its granule's last loaded value again; the object's temporal redundancy, summed over workers.
  void count_value_loads(unsigned worker, uint64_t loads, uint64_t same) {
    uint64_t* row = &slice_accesses_[size_t(worker) * kRowWords];
    row[kValueLoads] += loads;
    row[kSameValue] += same;
  }
  uint64_t row_sum(unsigned word) const {
    uint64_t n = 0;
    for (unsigned w = 0; w < workers_; ++w) n += slice_accesses_[size_t(w) * kRowWords + word];
    return n;
  }
  // Bytes of the object some access touched: its granules' first touches, counted as they happen (a walk of the
  // shadow at each free cost tens of milliseconds per large tensor). Forgotten at a generation wrap-around (reset).
  uint64_t touched_bytes() const {
    uint64_t granules = 0;
    for (unsigned w = 0; w < workers_; ++w) granules += slice_accesses_[size_t(w) * kRowWords + kSlices];
    return std::min(size_, granules * 4);
  }
  uint64_t base() const { return base_; }
  uint64_t size() const { return size_; }
  bool contains_granule(uint64_t g) const { return g - first_ < count_; }
  uint64_t first_granule() const { return first_; }
  uint64_t granule_count() const { return count_; }
  // Granule range [lo, hi) of the shadow page holding granule g (clipped to the region): callers cache it so
  // later granules of the page skip the region lookup and the touched-page bitmap.
  void page_span(uint64_t g, uint64_t& lo, uint64_t& hi) const {
    uint64_t p = (g - first_) / kPageEntries;
    lo = first_ + p * kPageEntries;
    hi = std::min(lo + kPageEntries, first_ + count_);
  }
  // Where granule's entry lives, without committing or charging its page (a prefetch target).
  const Entry* slot(uint64_t granule) const { return shadow_ + (granule - first_); }
  // Value mode: granule's value-shadow entry (value_shadow.h), or null where the region has none (no value mode,
  // or its mapping failed: the worker's sparse table serves). Only for a granule whose entry() was asked for,
  // which charged its page.
  uint64_t* value_slot(uint64_t granule) const { return values_ ? values_ + (granule - first_) : nullptr; }
  // Every lane of the global replay asks for its entry, so the test of its page is kept inline, and a page's first
  // touch (charging, advice) is out of line. The caller owns the granule's chunk (no other worker reads or writes
  // its entry), and the first touch writes it before the replay reads it (an atomic or of 0: the value stays): the
  // replay reads an entry before writing it, and a page first read maps the zero page, whose write then faults
  // again to copy it, or, in a block advised for huge pages, the huge zero page, which the write splits into 4 KiB
  // pages. One fault instead of two (the whole process of a cold gather over 1 GiB of shadow: 152 K faults -> 122 K).
  // Volatile, so that no compiler turns the or of 0 into a load (Clang's combiner would).
  Entry* entry(uint64_t granule) {
    const uint64_t i = granule - first_, page = i / kPageEntries;
    if (!(touched_[page / 64].load(std::memory_order_relaxed) >> (page % 64) & 1)) touch_page(page, i);
    return shadow_ + i;
  }
  [[gnu::noinline]] void touch_page(uint64_t page, uint64_t i) {
    const uint64_t bit = 1ull << (page % 64);
    if (touched_[page / 64].fetch_or(bit) & bit) return;  // another worker touched it first
    __atomic_fetch_or(static_cast<volatile uint64_t*>(&shadow_[i].w0), uint64_t(0), __ATOMIC_RELAXED);
    const uint64_t charge = values_ ? kPageBytes + kPageEntries * sizeof(uint64_t) : kPageBytes;
    committed_ += charge;
    budget_->take(charge);
    if (page % kPopulatePages == 0 && page > 0 && touched(page - 1)) populate_ahead(page);
    if (page % kHugePages == kHugePages / 2 && huge_pages_enabled()) advise_ahead(page / kHugePages);
    if (huge_pages_enabled()) note_scattered_touch(page / kHugePages);
  }
  // Dense first touch (at least 3/4 of the first half of a 2 MiB block of shadow touched when its middle page
  // is): the blocks ahead are asked to come as transparent huge pages. One fault instead of 512 — first-touch
  // faults of one region serialise in the kernel, and with 16 workers they were most of a cold launch's time.
  // The advice covers one block, and each time the stream reaches the end of what was advised, as many blocks
  // again as the stream has run so far (doubling, at most kMaxAdviceBlocks): every madvise call stalls all
  // faulting threads of the process (it changes the mapping), so a long stream makes a handful of calls, not
  // one per 2 MiB. Sparse patterns keep 4 KiB pages (see note_scattered_touch); a dense stream may hold,
  // beyond the pages charged, up to the advised span ahead of it (no longer than the stream behind it).
  // Best effort: without THP the advice does nothing. REUSELENS_SHADOW_THP=0 turns it off (to measure what it
  // buys: benchmarks/engine.py).
  static constexpr uint64_t kMaxAdviceBlocks = 64;  // 128 MiB of shadow per call at most
  static bool huge_pages_enabled() {
    static const bool enabled = switched_on("REUSELENS_SHADOW_THP");
    return enabled;
  }
  void advise_ahead(uint64_t block) {
#ifdef MADV_HUGEPAGE
    uint64_t first = block * kHugePages, dense = 0;
    for (uint64_t w = first / 64; w < (first + kHugePages / 2) / 64; ++w)
      dense += uint64_t(__builtin_popcountll(touched_[w].load(std::memory_order_relaxed)));
    if (dense * 4 < kHugePages / 2 * 3) return;
    std::lock_guard<std::mutex> lock(advice_mu_);  // once per 2 MiB block at most: no contention to speak of
    const uint64_t next = block + 1, blocks = bytes_ / kHugeBytes;
    if (next >= blocks || advised_[next]) return;
    // Workers touch the middle pages of a stream's blocks slightly out of order, so the stream behind `next`
    // is counted in advised blocks rather than remembered as one span.
    uint64_t behind = 0;
    while (behind < kMaxAdviceBlocks && behind < next && advised_[next - 1 - behind]) ++behind;
    uint64_t n = std::max<uint64_t>(1, behind);
    while (n > 1 && (next + n > blocks || advised_[next + n - 1])) --n;
    madvise(reinterpret_cast<char*>(shadow_) + next * kHugeBytes, n * kHugeBytes, MADV_HUGEPAGE);
    for (uint64_t b = next; b < next + n; ++b) advised_[b] = true;
#else
    (void)block;
#endif
  }
  // Scattered first touches (a gather, a column walk): once kScatteredPages pages of a 2 MiB block of shadow are
  // touched, the rest of the block will most likely follow, one page fault each (about 4 us apiece in a VM, most
  // of a cold gather's time) and one TLB entry each (a gather over 1 GiB of shadow missed the TLB on every lane).
  // The block is collapsed into a huge page at once (MADV_COLLAPSE, Linux 6.1), or where the kernel cannot, its
  // pages are populated in one call. Pages stay charged as they are touched, so reported figures do not change;
  // what the kernel holds beyond them is taken from the budget's headroom (Budget::hold), never past the limit.
  static constexpr uint64_t kScatteredPages = 32;
  void note_scattered_touch(uint64_t block) {
    if (block >= blocks_ || dense_[block].load(std::memory_order_relaxed)) return;
    uint64_t count = 0;
    for (uint64_t w = block * kHugePages / 64; w < (block + 1) * kHugePages / 64; ++w)
      count += uint64_t(__builtin_popcountll(touched_[w].load(std::memory_order_relaxed)));
    if (count < kScatteredPages || dense_[block].exchange(1)) return;
    {
      std::lock_guard<std::mutex> lock(advice_mu_);  // once per block
      if (advised_[block]) return;                   // a stream's block: huge from its first fault already
    }
    const uint64_t extra = (kHugePages - std::min(count, kHugePages)) * kPageBytes;
    if (!budget_->hold(extra)) return;
    held_ += extra;
    char* p = reinterpret_cast<char*>(shadow_) + block * kHugeBytes;
    constexpr int kMadvCollapse = 25;  // MADV_COLLAPSE: in the kernel's headers, not in older glibc's
    if (madvise(p, kHugeBytes, kMadvCollapse) == 0) return;
#ifdef MADV_POPULATE_WRITE
    madvise(p, kHugeBytes, MADV_POPULATE_WRITE);
#endif
  }
  // Streaming access (first touch of a group of kPopulatePages shadow pages while the page before the group is
  // in use): ask the kernel for the whole group in one call instead of one page fault each (page faults were a third of
  // the single-worker time on a streaming trace). Only pages that are actually touched are charged to the budget (as
  // before), so the engine's figures do not change; the kernel may hold up to kPopulatePages - 1 untouched zero pages
  // per stream beyond them. Sparse (non-consecutive) patterns never populate. Best effort: kernels before
  // 5.14 reject the advice and nothing happens.
  void populate_ahead(uint64_t page) {
#ifdef MADV_POPULATE_WRITE
    uint64_t pages = bytes_ / kPageBytes;
    uint64_t n = std::min<uint64_t>(kPopulatePages, pages - page);
    if (n > 1) madvise(reinterpret_cast<char*>(shadow_) + page * kPageBytes, n * kPageBytes, MADV_POPULATE_WRITE);
#else
    (void)page;
#endif
  }
  bool touched(uint64_t page) const { return touched_[page / 64].load(std::memory_order_relaxed) >> (page % 64) & 1; }

  // Coalesced segments (docs/engine.md, "Shadow memory"): a warp's 4-byte access of one aligned 128-byte segment,
  // lane i on granule i, writes 32 entries that differ only in the thread field, one more per granule. Where the
  // access before it did the same, the engine keeps only the segment's first entry up to date and flags the
  // segment summarized: its other entries are then stale, and entry i stands for the first with i added to the
  // thread. One segment lies in one chunk, so its flag has one owner, like its entries. An entry of a summarized
  // segment is only read after settle() wrote the segment out again: every path that reads a region's entries but
  // the segment replay itself (Engine::Impl::replay_segment) calls it. Off in value mode (the value shadow beside
  // the entries is per granule) and with REUSELENS_SHADOW_SEGMENTS=0 (to measure what it buys).
  static constexpr unsigned kSegmentShift = 5;  // 32 granules, 128 bytes of data, 512 bytes of shadow
  static bool segments_enabled() {
    static const bool enabled = switched_on("REUSELENS_SHADOW_SEGMENTS");
    return enabled;
  }
  // Whether granules g .. g + 31 (g segment-aligned) all lie in the region, with a flag to keep for them.
  bool whole_segment(uint64_t g) const { return summarized_ && g - first_ < count_ && g + 31 - first_ < count_; }
  uint64_t segment_of(uint64_t g) const { return (g >> kSegmentShift) - (first_ >> kSegmentShift); }
  uint8_t& summarized(uint64_t g) { return summarized_[segment_of(g)]; }
  bool is_summarized(uint64_t g) const { return summarized_[segment_of(g)] != 0; }
  // Any summary at all: regions that never had one (a gather's table) skip the flags altogether. Set by the
  // owner of the segment it summarises, read by that owner (other owners never read that segment's flag).
  bool any_summary() const { return any_summary_.load(std::memory_order_relaxed); }
  void summarize(uint8_t& flag) {  // flag: summarized(g) of the segment
    flag = 1;
    if (!any_summary()) any_summary_.store(true, std::memory_order_relaxed);
  }
  // Granule g's entry is what the lane loop would find: a summarized segment is written out first.
  void settle(uint64_t g) {
    if (any_summary() && g - first_ < count_) {
      uint8_t& flag = summarized(g);
      if (flag) expand(g, flag);
    }
  }
  // Entries of a segment from its first (which is always up to date), the thread one more per granule.
  void expand(uint64_t g, uint8_t& flag) {
    Entry* e = shadow_ + ((g & ~uint64_t(31)) - first_);
    const Entry head = e[0];
    for (unsigned i = 1; i < 32; ++i) e[i] = Entry{head.w0, head.w1 + (uint64_t(i) << 40)};
    flag = 0;
  }

  // Drop every entry (generation wrap-around): the pages go back to the kernel.
  void reset() {
    if (summarized_) madvise(summarized_, segments_, MADV_DONTNEED);
    any_summary_.store(false);
    if (shadow_) madvise(shadow_, bytes_, MADV_DONTNEED);
    if (values_) madvise(values_, count_ * sizeof(uint64_t), MADV_DONTNEED);
    for (auto& w : touched_) w.store(0);
    for (uint64_t b = 0; b < blocks_; ++b) dense_[b].store(0);
    for (unsigned w = 0; w < workers_; ++w) slice_accesses_[size_t(w) * kRowWords + kSlices] = 0;
    budget_->give(committed_.exchange(0));
    budget_->release(held_.exchange(0));
  }

 private:
  uint64_t base_, size_, first_, count_ = 0, bytes_ = 0, blocks_ = 0;
  Budget* budget_;
  Entry* shadow_ = nullptr;
  uint64_t* values_ = nullptr;  // value mode: the value shadow of the region's granules
  std::vector<std::atomic<uint64_t>> touched_;
  std::atomic<uint64_t> committed_{0};
  std::mutex advice_mu_;
  std::atomic<uint64_t> held_{0};                  // bytes held from the budget's headroom (note_scattered_touch)
  std::unique_ptr<std::atomic<uint8_t>[]> dense_;  // per 2 MiB block of shadow: collapsed or populated already
  std::atomic<uint8_t> access_{0};                 // mark_access
  unsigned workers_;
  unsigned slice_shift_ = object_slice_shift(size_);
  std::unique_ptr<uint64_t[]> slice_accesses_;
  std::atomic<uint64_t> launch_slices_{0};
  std::vector<bool> advised_;      // per 2 MiB block of shadow: advised MADV_HUGEPAGE (advise_ahead, advice_mu_)
  uint8_t* summarized_ = nullptr;  // per segment of 32 granules: summarized (settle); null: no segments
  uint64_t segments_ = 0;
  std::atomic<bool> any_summary_{false};
};

}  // namespace detail
}  // namespace reuselens
