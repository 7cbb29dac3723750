// ParallelCopy (collector/native/src/parallel_copy.h) must copy every byte of every block, for any size and
// helper count: the sizes below include those where the per-part share is a whole number of 4 KiB pages but
// does not divide the block (the tail that was once dropped), sizes just around kMinPart multiples, and odd
// ones. Guard bytes after the destination must stay untouched. Prints "ok" and exits 0, or says what failed.
// Built plain and under ThreadSanitizer and ASan/UBSan by tests/collector/test_parallel_copy.py.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "parallel_copy.h"

namespace {

constexpr uint64_t kPart = 64 << 10;  // ParallelCopy::kMinPart
constexpr uint64_t kGuard = 64;
constexpr unsigned char kUnwritten = 0xA5;

std::vector<uint64_t> sizes_for(unsigned threads) {
  std::vector<uint64_t> sizes = {0, 1, 4095, 4096, kPart - 1, kPart, kPart + 1, 2 * kPart - 1, 2 * kPart + 3};
  for (uint64_t parts : {2u, 3u, 4u, 5u, 8u, 16u, 34u}) {
    if (parts > threads) break;
    for (uint64_t pages : {16ull, 17ull}) {  // a share of whole pages, at least kMinPart
      for (uint64_t tail : {uint64_t(1), parts / 2, parts - 1}) {
        if (tail > 0) sizes.push_back(pages * 4096 * parts + tail);
      }
    }
    sizes.push_back(parts * kPart + 288 * 7);  // whole trace records, as the collector copies them
  }
  return sizes;
}

bool check(rlc::ParallelCopy& copier, uint64_t bytes, unsigned threads) {
  std::vector<unsigned char> src(bytes), dst(bytes + kGuard, kUnwritten);
  for (uint64_t i = 0; i < bytes; ++i) src[i] = static_cast<unsigned char>((i * 131 + i / 4096 + 7) & 0xFF);
  copier.copy(dst.data(), src.data(), bytes);
  if (bytes > 0 && std::memcmp(dst.data(), src.data(), bytes) != 0) {
    uint64_t i = 0;
    while (dst[i] == src[i]) ++i;
    std::printf("threads %u, %llu bytes: byte %llu not copied (%llu bytes before the end)\n", threads,
                (unsigned long long)bytes, (unsigned long long)i, (unsigned long long)(bytes - i));
    return false;
  }
  for (uint64_t i = bytes; i < bytes + kGuard; ++i) {
    if (dst[i] != kUnwritten) {
      std::printf("threads %u, %llu bytes: wrote past the end\n", threads, (unsigned long long)bytes);
      return false;
    }
  }
  return true;
}

}  // namespace

int main() {
  for (unsigned threads : {1u, 2u, 3u, 4u, 5u, 8u, 16u, 34u}) {
    rlc::ParallelCopy copier(threads);
    for (uint64_t bytes : sizes_for(threads)) {
      if (!check(copier, bytes, threads)) return 1;
    }
  }
  std::printf("ok\n");
  return 0;
}
