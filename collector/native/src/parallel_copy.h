// A memcpy shared by a few threads, for the engine queue's copy of each full record buffer (queued_sink.cpp), and
// the same threads unpacking packed records as the engine reads them (reuselens/packed_records.h, unpack_for_engine).
// One core copied the GPU-written pinned buffer at 3.5-4.7 GB/s on the H200 host, below the rate at which the
// GPU fills it, so the GPU waited for that copy (docs/collector.md, Overhead); several cores together are not
// limited by one core's outstanding misses.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "reuselens/packed_records.h"
#include "support.h"

namespace rlc {

class ParallelCopy {
 public:
  // `threads` cores copy a large block: the caller and threads - 1 helpers (0 and 1 mean the caller alone).
  explicit ParallelCopy(unsigned threads) {
    for (unsigned i = 1; i < threads; ++i) {
      helpers_.emplace_back([this, i] {
        char name[16];
        std::snprintf(name, sizeof name, "rl-copy-%u", i);
        name_this_thread(name);
        help(i);
      });
    }
  }
  ~ParallelCopy() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    go_.notify_all();
    for (auto& t : helpers_) t.join();
  }
  ParallelCopy(const ParallelCopy&) = delete;
  ParallelCopy& operator=(const ParallelCopy&) = delete;

  unsigned threads() const { return (unsigned)helpers_.size() + 1; }

  // One caller at a time. Parts are at least kMinPart bytes, so a small block is one plain memcpy.
  void copy(void* dst, const void* src, uint64_t bytes) {
    if (bytes == 0) return;  // memcpy may not be given the null pointer of an empty buffer, even for 0 bytes
    const unsigned parts = (unsigned)std::min<uint64_t>(threads(), std::max<uint64_t>(1, bytes / kMinPart));
    if (parts == 1) {
      std::memcpy(dst, src, bytes);
      return;
    }
    run(parts, static_cast<char*>(dst), static_cast<const char*>(src), bytes, nullptr);
  }

  // One caller at a time: the `n` packed records starting at starts[0..n) (reuselens/packed_records.h) unpacked
  // into dst[0..n) as the engine reads them (unpack_for_engine), the threads taking a share of the records each.
  void unpack(reuselens::RlRecord* dst, const reuselens::RlSlot* const* starts, uint64_t n) {
    const unsigned parts = (unsigned)std::min<uint64_t>(threads(), std::max<uint64_t>(1, n / kMinRecords));
    if (parts == 1) {
      for (uint64_t i = 0; i < n; ++i) reuselens::unpack_for_engine(starts[i], dst + i);
      return;
    }
    run(parts, reinterpret_cast<char*>(dst), nullptr, n, starts);
  }

 private:
  static constexpr uint64_t kMinPart = 64 << 10;
  static constexpr uint64_t kMinRecords = 256;  // an unpacking's share: at least 72 KiB written

  void run(unsigned parts, char* dst, const char* src, uint64_t bytes, const reuselens::RlSlot* const* starts) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      dst_ = dst;
      src_ = src;
      starts_ = starts;
      bytes_ = bytes;
      parts_ = parts;
      pending_ = parts - 1;
      ++job_;
    }
    go_.notify_all();
    do_part(0);
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [&] { return pending_ == 0; });
  }

  void do_part(unsigned k) const {
    if (starts_ != nullptr)
      unpack_part(k);
    else
      copy_part(k);
  }

  // Unpacking: bytes_ counts records; part k unpacks its share of them.
  void unpack_part(unsigned k) const {
    const uint64_t share = bytes_ / parts_ + (bytes_ % parts_ != 0);
    const uint64_t from = std::min(bytes_, k * share), to = std::min(bytes_, from + share);
    auto* out = reinterpret_cast<reuselens::RlRecord*>(dst_);
    for (uint64_t i = from; i < to; ++i) reuselens::unpack_for_engine(starts_[i], out + i);
  }

  // Part k of the current job; parts start on 4 KiB boundaries of the block. The share is rounded up twice (to
  // whole bytes, then to whole pages), so parts_ shares always cover the block: rounding the share down first
  // dropped the last bytes % parts bytes whenever bytes / parts was itself a whole number of pages. The last
  // parts may then be short or empty.
  void copy_part(unsigned k) const {
    const uint64_t share = bytes_ / parts_ + (bytes_ % parts_ != 0);
    const uint64_t step = (share + 4095) & ~uint64_t(4095);
    const uint64_t from = std::min(bytes_, k * step), to = std::min(bytes_, from + step);
    if (to > from) std::memcpy(dst_ + from, src_ + from, to - from);
  }

  void help(unsigned index) {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      go_.wait(lock, [&] { return stopping_ || job_ != seen; });
      if (stopping_) return;
      seen = job_;
      if (index >= parts_) continue;  // a block too small to need this helper
      lock.unlock();
      do_part(index);  // the job's fields do not change until every part is done
      lock.lock();
      if (--pending_ == 0) done_.notify_one();
    }
  }

  std::mutex mu_;
  std::condition_variable go_, done_;
  std::vector<std::thread> helpers_;
  uint64_t job_ = 0;
  char* dst_ = nullptr;
  const char* src_ = nullptr;
  const reuselens::RlSlot* const* starts_ = nullptr;  // an unpacking's records; null for a copy
  uint64_t bytes_ = 0;                                // a copy's bytes, an unpacking's records
  unsigned parts_ = 1, pending_ = 0;
  bool stopping_ = false;
};

}  // namespace rlc
