// Phase 2 of a batch: the node distributions of paper section 3.2.2 (lanes, distinct addresses, sectors,
// shared-memory wavefronts) and the routing of every record to the workers owning its block and its granules.
#include "engine_impl.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

#include "word_union.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace reuselens {
namespace {

// The lane addresses of one record: 32 at most, usually already sorted.
void insertion_sort(uint64_t* a, size_t n) {
  for (size_t i = 1; i < n; ++i) {
    uint64_t v = a[i];
    size_t j = i;
    while (j > 0 && a[j - 1] > v) {
      a[j] = a[j - 1];
      --j;
    }
    a[j] = v;
  }
}

// Scattered lanes (a gather): when every footprint [a, a + last] lies inside one 32-byte sector and no two lanes
// share a sector, the general pass would find n distinct addresses, n sectors and no shared granule (an access's
// granules lie in the sector of its first byte when its footprint does). Checked without sorting the addresses,
// which took most of the distribution step on random gathers: a bitmap of hashed sectors, where a lane whose bit
// is already set is compared with the lanes before it (by chance, in about four of ten records of 32 scattered
// lanes, once or twice each). The bitmap, not a
// hash table, because probing a table's slots mispredicted a branch on one lane in four. Gives up (false) at the
// first lane that does not fit; `lo` and `hi` get the lowest and highest address.
bool disjoint_sectors(const uint64_t* a, size_t n, uint64_t last, uint64_t& lo, uint64_t& hi) {
  constexpr unsigned kBits = 10;  // 1024 bits for at most 32 sectors
  uint64_t seen[(1u << kBits) / 64] = {};
  lo = hi = a[0];
  for (size_t i = 0; i < n; ++i) {
    const uint64_t x = a[i], sector = x >> 5;
    if (((x + last) >> 5) != sector) return false;  // straddles a sector boundary (or wraps around)
    const unsigned h = unsigned((sector * 0x9e3779b97f4a7c15ull) >> (64 - kBits));
    const uint64_t bit = 1ull << (h & 63);
    if (seen[h >> 6] & bit) {
      for (size_t j = 0; j < i; ++j) {
        if ((a[j] >> 5) == sector) return false;
      }
    }
    seen[h >> 6] |= bit;
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  return true;
}

// Whether the active lanes' addresses follow the lane index (docs/engine.md, "Node distributions"): the k-th active
// lane at base + stride × k (a coalesced, strided or compacted access, a broadcast), or each address an affine
// function of the lane index's bits, addr(l) = addr(p) + Σ_b (bit_b(l) − bit_b(p)) × c_b (a tile's rows, a 3-D block's
// planes, an MMA fragment: any groups of 2, 4, 8 or 16 lanes on their strides, whole warps or not). c_b is read off
// the lowest active lane with bit b clear whose partner (bit b set) is active too; a lane that differs from p in a
// bit no such pair gives is not judged. Anything else is irregular: lanes whose addresses come from loaded data (a
// gather through an index array, a graph's neighbours, a slot an atomic returned), which no indexing arithmetic
// coalesces.
bool lanes_on_strides(const uint64_t* addr, uint32_t mask) {
  const unsigned first = unsigned(__builtin_ctz(mask));
  const uint32_t rest = mask & (mask - 1);
  if (rest == 0 || (rest & (rest - 1)) == 0) return true;  // one or two lanes: always on a stride
  const uint64_t stride = addr[__builtin_ctz(rest)] - addr[first];
  uint64_t expected = addr[first], broken = 0;
  for (uint32_t m = mask; m; m &= m - 1, expected += stride) broken |= addr[__builtin_ctz(m)] ^ expected;
  if (!broken) return true;
  static constexpr uint32_t kBitClear[5] = {0x55555555u, 0x33333333u, 0x0F0F0F0Fu, 0x00FF00FFu, 0x0000FFFFu};
  uint64_t coefficient[5] = {};
  unsigned known = 0;
  for (unsigned b = 0; b < 5; ++b) {
    const uint32_t pairs = mask & (mask >> (1u << b)) & kBitClear[b];
    if (!pairs) continue;
    const unsigned lane = unsigned(__builtin_ctz(pairs));
    coefficient[b] = addr[lane + (1u << b)] - addr[lane];
    known |= 1u << b;
  }
  broken = 0;
  for (uint32_t m = rest; m; m &= m - 1) {
    const unsigned lane = unsigned(__builtin_ctz(m)), differ = lane ^ first;
    if (differ & ~known) continue;
    uint64_t at = addr[first];
    for (unsigned b = 0; b < 5; ++b) {
      if (differ >> b & 1) at += (lane >> b & 1) ? coefficient[b] : 0 - coefficient[b];
    }
    broken |= addr[lane] ^ at;
  }
  return !broken;
}

// Whether the active lanes of a shared record are consecutive lanes on consecutive footprints of whole words
// (kConsecutive; the global distributions find it in their contiguity check).
bool consecutive_lanes(const RlRecord& r) {
  if (r.active_mask == 0 || !consecutive_size(r.size)) return false;
  const unsigned first = unsigned(__builtin_ctz(r.active_mask));
  const uint32_t from_first = r.active_mask >> first;
  if ((from_first & (from_first + 1)) != 0) return false;
  const unsigned n = popcount32(r.active_mask);
  const uint64_t a0 = r.addr[first];
  uint64_t broken = 0;
  for (unsigned j = 1; j < n; ++j) broken |= r.addr[first + j] ^ (a0 + uint64_t(r.size) * j);
  return broken == 0 && a0 + uint64_t(r.size) * n - 1 >= a0;  // no wrap-around
}

// A global record whose active lanes all hold one address: one footprint, its sectors (for the lanes of at most
// 4 bytes that reach here, two when it straddles a boundary), as the general pass of global_distribution counts them.
std::pair<uint64_t, uint64_t> one_address(const RlRecord& r, uint64_t addr, unsigned lanes, NodeStats& s) {
  s.addresses.add(1);
  s.sectors.add(uint32_t(std::max(((addr + r.size - 1) >> 5) + 1, addr >> 5) - (addr >> 5)));
  s.sectors_ideal.add(uint32_t((uint64_t(lanes) * r.size + 31) / 32));
  return std::make_pair(addr, addr);
}

}  // namespace

// Distributions of section 3.2.2 for a global access: distinct lane addresses, distinct 32-byte sectors of
// the lane footprints [addr, addr + size), and the ideal ceil(lanes * size / 32).
// Returns the lowest and highest lane address (for routing).
std::pair<uint64_t, uint64_t> Engine::Impl::global_distribution(const RlRecord& r, Ctx& c, NodeStats& s, uint64_t* a,
                                                                unsigned lanes) {
  // A record the engine queue handed over by one or two of its addresses (packed_records.h, unpack_for_engine): a
  // broadcast and a coalesced access (one stride of its size over lanes consecutive from the first) get what the
  // tests below find for their lanes, from those slots; any other stride, its lanes filled in for the tests.
  if (r.flags & kHandedOverFlags) {
    const unsigned lo = unsigned(__builtin_ctz(r.active_mask)), hi = 31u - unsigned(__builtin_clz(r.active_mask));
    const uint64_t a0 = r.addr[lo], an = r.addr[hi];
    if (r.flags & RL_FLAG_ONE_ADDRESS) {
      c.flags |= kSharedGranule;
      return one_address(r, a0, lanes, s);
    }
    const uint32_t from_lo = r.active_mask >> lo;
    const uint64_t stride = handed_over_stride(r);
    const bool gapless = (from_lo & (from_lo + 1)) == 0;
    if (consecutive_size(r.size) && gapless && stride == r.size) {
      c.flags |= kNoOverlap | kConsecutive;  // the contiguous case below, which no wrap-around lets through
      s.addresses.add(lanes);
      s.sectors.add(uint32_t(((an + r.size - 1) >> 5) - (a0 >> 5) + 1));
      s.sectors_ideal.add(uint32_t((uint64_t(lanes) * r.size + 31) / 32));
      return std::make_pair(a0, an);
    }
    if (gapless && lanes > 2 && stride >= 32 && stride % 32 == 0 && ((a0 + r.size - 1) >> 5) == (a0 >> 5)) {
      c.flags |= kNoOverlap;  // the column walk below: every footprint in a sector of its own
      s.addresses.add(lanes);
      s.sectors.add(lanes);
      s.sectors_ideal.add(uint32_t((uint64_t(lanes) * r.size + 31) / 32));
      return std::make_pair(a0, an);
    }
  }
  uint64_t scratch[RL_WARP_SIZE];
  const uint64_t* addr = lane_addresses(r, scratch);
  // A broadcast (every lane on one address: SHOC BFS's levels[v], a loop bound), read where it lies: copying its
  // 32 addresses first took a sixth of the routing step on benchmarks/engine.py --pattern bfs. The figures are the
  // ones the copy's pass below gives a single address.
  if (r.active_mask == 0xffffffffu && r.size <= 4 && addr[1] == addr[0]) {
    uint64_t other_address = 0;
    for (unsigned i = 1; i < 32; ++i) other_address |= addr[i] ^ addr[0];
    if (!other_address) {
      c.flags |= kSharedGranule;
      return one_address(r, addr[0], lanes, s);
    }
  }
  size_t n = 0;
  if (r.active_mask == 0xffffffffu) {
    std::memcpy(a, addr, 32 * sizeof(uint64_t));
    n = 32;
  } else {
    for (uint32_t m = r.active_mask; m; m &= m - 1) a[n++] = addr[__builtin_ctz(m)];
  }
  // No lane: the global half of a cp.async whose lanes were all zero fills (docs/trace-format.md). The instruction
  // executed, but the L1 saw no request: ncu counted 26,624 global load requests for the 65,536 LDGSTS of a cuBLAS
  // SGEMM launch whose other 38,912 were such halves (benchmarks/results/h200-2026-12-03-s18, call 3). So no
  // request enters the distributions; `executions` still counts it.
  if (n == 0) {
    c.flags |= kNoOverlap;
    return std::make_pair(uint64_t(0), uint64_t(0));
  }
  const uint64_t granules = (r.size + 3) / 4, last = uint64_t(r.size) - 1;
  if (r.size <= 4 && n > 1 && (a[1] >> 2) == (a[0] >> 2)) {  // the second lane on the first's granule: a broadcast?
    const uint64_t g = a[0] >> 2;
    uint64_t other_granule = 0, other_address = 0;
    for (size_t i = 1; i < n; ++i) {
      other_granule |= (a[i] >> 2) ^ g;
      other_address |= a[i] ^ a[0];
    }
    if (!other_granule) c.flags |= kSharedGranule;
    if (!other_address) return one_address(r, a[0], lanes, s);
  }
  // Contiguous lanes (a[i] = a[i-1] + size, whole granules, no wrap-around: the fully coalesced case): the
  // footprints are one interval, all addresses distinct and no granule shared; the general pass below gives
  // the same figures.
  if (r.size % 4 == 0 && a[0] <= a[n - 1] && a[n - 1] + last >= a[n - 1]) {
    uint64_t step = r.size, broken = 0;
    for (size_t i = 1; i < n; ++i) broken |= a[i] ^ (a[i - 1] + step);
    if (!broken) {
      c.flags |= kNoOverlap;
      const uint32_t from_first = r.active_mask >> __builtin_ctz(r.active_mask);
      if (consecutive_size(r.size) && (from_first & (from_first + 1)) == 0) c.flags |= kConsecutive;
      s.addresses.add(uint32_t(n));
      s.sectors.add(uint32_t(((a[n - 1] + last) >> 5) - (a[0] >> 5) + 1));
      s.sectors_ideal.add(uint32_t((uint64_t(lanes) * r.size + 31) / 32));
      return std::make_pair(a[0], a[n - 1]);
    }
  }
  // Lanes ascending at one stride of at least 32 bytes, each footprint inside one sector (a column walk: the i-th
  // active lane on row i of a row-major matrix): n addresses, n sectors and no shared granule (a stride of 32 bytes
  // or more puts the next footprint at least 8 granules further), as the general pass below would find one lane at a
  // time. The span from the first lane to the last one's last byte must not wrap around the address space.
  uint64_t span = 0;
  if (n > 2 && a[1] > a[0] && a[1] - a[0] >= 32 && a[2] - a[1] == a[1] - a[0] &&
      !__builtin_mul_overflow(a[1] - a[0], uint64_t(n - 1), &span) && a[0] <= UINT64_MAX - last &&
      span <= UINT64_MAX - last - a[0]) {
    const uint64_t stride = a[1] - a[0];
    uint64_t broken = 0;
    for (size_t i = 2; i < n; ++i) broken |= a[i] ^ (a[i - 1] + stride);
    for (size_t i = 0; i < n; ++i) broken |= ((a[i] + last) >> 5) ^ (a[i] >> 5);
    if (!broken) {
      c.flags |= kNoOverlap;
      s.addresses.add(uint32_t(n));
      s.sectors.add(uint32_t(n));
      s.sectors_ideal.add(uint32_t((uint64_t(lanes) * r.size + 31) / 32));
      return std::make_pair(a[0], a[n - 1]);
    }
  }
  // The cases above are on a stride; from here on a record may be a gather (node.irregular).
  if (!lanes_on_strides(addr, r.active_mask)) ++s.irregular;
  // Sorted footprints [a, a + size): the last sector of each is non-decreasing, so a footprint adds the
  // sectors after its predecessor's last one (distinct sectors of the union). The lane order is usually
  // already sorted (coalesced and strided accesses); scattered lanes in distinct sectors need no sort at all.
  size_t first_down = 1;
  while (first_down < n && a[first_down] >= a[first_down - 1]) ++first_down;
  if (first_down < n) {
    uint64_t lo, hi;
    if (disjoint_sectors(a, n, last, lo, hi)) {
      c.flags |= kNoOverlap;
      s.addresses.add(uint32_t(n));
      s.sectors.add(uint32_t(n));
      s.sectors_ideal.add(uint32_t((uint64_t(lanes) * r.size + 31) / 32));
      return std::make_pair(lo, hi);
    }
    insertion_sort(a, n);
  }
  uint64_t overlap = 0, distinct = 1, prev = a[0], prev_s1 = (prev + last) >> 5;
  uint64_t sectors = std::max(prev_s1 + 1, prev >> 5) - (prev >> 5);
  for (size_t i = 1; i < n; ++i) {
    uint64_t x = a[i];
    overlap |= uint64_t((prev >> 2) + granules > (x >> 2));
    distinct += uint64_t(x != prev);
    uint64_t s0 = std::max(x >> 5, prev_s1 + 1), s1 = (x + last) >> 5;
    sectors += std::max(s1 + 1, s0) - s0;
    prev_s1 = std::max(prev_s1, s1);
    prev = x;
  }
  if (!overlap) c.flags |= kNoOverlap;
  s.addresses.add(uint32_t(distinct));
  s.sectors.add(uint32_t(sectors));
  s.sectors_ideal.add(uint32_t((uint64_t(lanes) * r.size + 31) / 32));
  return std::make_pair(a[0], a[n - 1]);
}

namespace {

// Shared memory (section 3.2.2): distinct 32-bit words of the lane footprints; wavefronts = per lane group
// the largest number of distinct words in one bank ((word) & 31), summed over groups. Lanes are grouped by
// lane index: 32 lanes per group up to 4 bytes per lane, 128 / size lanes beyond (8 B: 16, 16 B: 8).
// The ideal is ceil(distinct words / 32) per group, summed over the same groups. `pushed` counts every lane's
// words (with repeats): equal to the distinct words, no two lanes share a granule.
struct SharedFigures {
  uint64_t distinct = 0, wave = 0, ideal = 0, pushed = 0;
};

// The commonest shapes of a shared access, in closed form: aligned 4-, 8- or 16-byte lanes whose footprints, per
// group of lanes one wavefront serves (32 up to 4 bytes, 128 / size beyond), tile one run of consecutive
// footprints, each read by one lane or several, in any lane order: a tile element every lane reads (As[ty][k]), t[tid],
// a compaction's s[rank], and a GEMM's register fragments, where lanes share footprints in small groups (cuBLAS's
// sm80_xmma SGEMM on the H200: lanes 4i..4i+3 on one 16-byte footprint of eight consecutive ones, or lane i on the
// (i mod 4)-th of four). Each group's words are then one run of at most 32 words in distinct banks, one wavefront,
// and the record's distinct words the union of the runs (at most four). One pass over the lanes, where the window
// below sets bits and counts banks per group: a lane's footprint index relative to the group's first lane is a bit
// of a 64-bit mask, the run is the mask without holes. `consecutive`: consecutive_lanes(r), from the same pass.
// False for any other shape.
bool run_group_figures(const RlRecord& r, unsigned per_group, SharedFigures& f, bool& consecutive) {
  if ((r.size != 4 && r.size != 8 && r.size != 16) || !r.active_mask) return false;
  const uint64_t size = r.size, words = size / 4;
  const unsigned size_shift = unsigned(__builtin_ctz(r.size));
  const uint32_t group_lanes = per_group >= 32 ? ~0u : (1u << per_group) - 1;
  const unsigned first = unsigned(__builtin_ctz(r.active_mask));
  const uint64_t a_first = r.addr[first];
  uint64_t lo[4], hi[4], whole = 0, rank = 0;  // whole: lanes off a_first + size * rank
  unsigned runs = 0;
  SharedFigures out;
  for (unsigned g0 = 0; g0 < 32; g0 += per_group) {
    const uint32_t lanes = r.active_mask >> g0 & group_lanes;
    if (!lanes) continue;
    const uint64_t a0 = r.addr[g0 + unsigned(__builtin_ctz(lanes))];
    if (a0 & 3) return false;
    uint64_t seen = 0, off = 0, j = 0;  // seen: bit 32 + i for the footprint i sizes from a0; off: a lane outside
    for (uint32_t m = lanes; m; m &= m - 1, ++j, ++rank) {
      const uint64_t a = r.addr[g0 + unsigned(__builtin_ctz(m))];
      const uint64_t bit = uint64_t(int64_t(a - a0) >> size_shift) + 32;  // footprints -32..31 from a0: bits 0..63
      off |= ((a - a0) & (size - 1)) | (bit >> 6);
      seen |= 1ull << (bit & 63);
      whole |= a ^ (a_first + size * rank);
    }
    if (off) return false;
    const unsigned low = unsigned(__builtin_ctzll(seen));
    const uint64_t run = seen >> low;  // footprints low - 32 .. from a0, without holes
    if (run & (run + 1)) return false;
    const uint64_t span = uint64_t(popcount64(run)) * words;         // <= j * words <= 32
    const uint64_t start = a0 - (uint64_t(32 - low) << size_shift);  // the run's first byte (low <= 32)
    if (start > a0 || start + 4 * span - 1 < start) return false;    // wrapping around past 0 or 2^64 - 1
    lo[runs] = start >> 2;
    hi[runs] = lo[runs] + span - 1;
    ++runs;
    out.pushed += j * words;
    out.wave += 1;
    out.ideal += 1;  // span <= 32 words: a group's lanes cover 128 bytes at most
  }
  for (unsigned i = 1; i < runs; ++i) {  // by start, then merged
    for (unsigned k = i; k > 0 && lo[k] < lo[k - 1]; --k) {
      std::swap(lo[k], lo[k - 1]);
      std::swap(hi[k], hi[k - 1]);
    }
  }
  uint64_t end = lo[0];  // one past the union so far
  for (unsigned i = 0; i < runs; ++i) {
    const uint64_t start = std::max(lo[i], end);
    if (hi[i] + 1 > start) out.distinct += hi[i] + 1 - start;
    end = std::max(end, hi[i] + 1);
  }
  const uint32_t from_first = r.active_mask >> first;
  consecutive = whole == 0 && (from_first & (from_first + 1)) == 0 && a_first + size * rank - 1 >= a_first;
  f = out;
  return true;
}

// Footprints inside one Window (WordWindow, the common case, or WideWordWindow) from `base`, a multiple of 32;
// first_lane_window places it so that lanes permuted within a warp's words, reversed, strided by a few words, and
// contiguous 8- and 16-byte vectors all fit. False when a footprint lies outside or wraps around past 2^64 - 1;
// the general pass below then decides. (Offsets are taken modulo 2^64, a multiple of 32, so banks survive a base
// below 0.)
template <class Window>
bool windowed_shared_figures(const RlRecord& r, unsigned per_group, uint64_t base, SharedFigures& f) {
  if (!r.active_mask) return false;
  f = SharedFigures();
  const uint64_t last = uint64_t(r.size) - 1;
  const uint32_t group_lanes = per_group >= 32 ? ~0u : (1u << per_group) - 1;
  uint64_t outside = 0;  // an offset at or beyond kWords (or a wrapped footprint) sets a bit from kWords up
  Window group, all;
  for (unsigned g0 = 0; g0 < 32; g0 += per_group) {
    const uint32_t lanes = r.active_mask >> g0 & group_lanes;
    if (!lanes) continue;
    group.clear();
    if (r.size <= 4) {
      // One word per lane unless a footprint crosses a word boundary (an unaligned access: the general loop);
      // such a footprint cannot wrap around either.
      uint64_t crossing = 0;
      for (uint32_t m = lanes; m; m &= m - 1) {
        const uint64_t a = r.addr[g0 + unsigned(__builtin_ctz(m))], w = (a >> 2) - base;
        outside |= w;
        crossing |= (a & 3) + last;
        group.add(w);
      }
      if (crossing < 4) {
        if (outside >= Window::kWords) return false;
        const uint64_t n = group.words();
        f.pushed = popcount32(lanes);
        f.wave = group.busiest_bank();
        f.ideal = (n + 31) / 32;
        f.distinct = n;
        return true;  // one group: per_group is 32 up to 4 bytes
      }
      group.clear();
    }
    for (uint32_t m = lanes; m; m &= m - 1) {
      const uint64_t a = r.addr[g0 + unsigned(__builtin_ctz(m))];
      const uint64_t w0 = (a >> 2) - base, w1 = ((a + last) >> 2) - base;
      outside |= w0 | w1 | (a + last < a ? Window::kWords : 0);  // w0 too: a footprint may start below base
      // Outside the window the figures are discarded (the general pass below decides), so nothing to add.
      if ((w0 | w1) < Window::kWords && w0 <= w1) group.add_span(w0, w1 - w0 + 1);
      f.pushed += w1 - w0 + 1;
    }
    if (outside >= Window::kWords) return false;
    const uint64_t n = group.words();
    f.wave += group.busiest_bank();
    f.ideal += (n + 31) / 32;
    if (per_group >= 32) {
      f.distinct = n;
    } else {
      all.include(group);
    }
  }
  if (per_group < 32) f.distinct = all.words();
  return true;
}

// The window's usual place: 64 words below the first lane's multiple of 32.
uint64_t first_lane_window(const RlRecord& r) {
  return r.active_mask ? ((r.addr[__builtin_ctz(r.active_mask)] >> 2) & ~uint64_t(31)) - 64 : 0;
}

// A second place, for footprints the usual one misses: from the lowest word's multiple of 32; `words`, how many
// words from there to the highest word. A padded tile's column (cuBLAS's SGEMM stores its asynchronous copies of A
// to rows 36 words apart: eight rows, four lanes each, 256 words from the first) starts below or ends beyond the
// usual window, and fits the wide one; beyond that the general pass below sorts intervals. False when a footprint
// wraps around past 2^64 - 1.
bool lowest_word_window(const RlRecord& r, uint64_t& base, uint64_t& words) {
  uint64_t lo = ~0ull, hi = 0, wraps = 0;
  for (uint32_t m = r.active_mask; m; m &= m - 1) {
    const uint64_t a = r.addr[unsigned(__builtin_ctz(m))], end = a + r.size - 1;
    lo = std::min(lo, a >> 2);
    hi = std::max(hi, end >> 2);
    wraps |= end < a;
  }
  base = lo & ~uint64_t(31);
  words = hi - base + 1;
  return !wraps;
}

// A column of a row-major tile (cuda-samples transpose's tile[threadIdx.x][j], padded or not, a matrix read down its
// columns): lanes of at most 4 bytes, each footprint inside one word, lane i at a + i * stride over the lane index
// (inactive lanes skipped) with a stride of whole words. Every lane then has a word of its own, so the distinct words
// and the pushed ones are the active lanes, one group's ideal is one wavefront, and the busiest bank holds as many
// words as lanes land on it: for a full warp gcd(stride in words, 32) (32 when the stride is a multiple of 32 words:
// every lane in one bank). Such a column spans up to 31 strides, beyond both word windows, and the general pass
// sorted its intervals: half the distribution step of a transpose. A column may wrap around past 2^64 - 1: its
// words and banks are then taken modulo 2^64 as the general pass takes them (a footprint inside one word never
// wraps itself). False for any other shape.
bool strided_word_figures(const RlRecord& r, SharedFigures& f) {
  const uint32_t mask = r.active_mask;
  if (r.size == 0 || r.size > 4 || (mask & (mask - 1)) == 0) return false;  // one lane: the passes below
  const unsigned first = unsigned(__builtin_ctz(mask)), second = unsigned(__builtin_ctz(mask & (mask - 1)));
  const uint64_t a_first = r.addr[first], step = r.addr[second] - a_first, lanes_between = second - first;
  if (step % lanes_between != 0) return false;
  const uint64_t stride = step / lanes_between;  // an ascending column; a descending one goes on to the passes below
  if (stride == 0 || (stride & 3) != 0 || stride > (uint64_t(1) << 32) || (a_first & 3) + r.size > 4) return false;
  uint64_t off = 0;
  for (uint32_t m = mask; m; m &= m - 1) {
    const unsigned lane = unsigned(__builtin_ctz(m));
    off |= r.addr[lane] ^ (a_first + uint64_t(lane - first) * stride);
  }
  if (off) return false;
  const uint64_t lanes = popcount32(mask), words = (stride >> 2) & 31;  // word stride mod banks
  uint64_t busiest;
  if (mask == ~0u) {
    busiest = words == 0 ? 32 : uint64_t(1) << __builtin_ctzll(words);  // gcd(words, 32)
  } else {
    uint8_t in_bank[32] = {};  // lanes per bank, up to a rotation of the banks (which leaves the busiest's count)
    busiest = 0;
    for (uint32_t m = mask; m; m &= m - 1)
      busiest = std::max<uint64_t>(busiest, ++in_bank[(uint64_t(__builtin_ctz(m)) * words) & 31]);
  }
  f.distinct = f.pushed = lanes;
  f.wave = busiest;
  f.ideal = 1;
  return true;
}

// Any footprints: word intervals (WordUnion), so the cost does not grow with the access size.
SharedFigures general_shared_figures(const RlRecord& r, unsigned per_group) {
  SharedFigures f;
  WordUnion group, all;
  for (unsigned g0 = 0; g0 < 32; g0 += per_group) {
    group.clear();
    for (unsigned lane = g0; lane < std::min(32u, g0 + per_group); ++lane) {
      if (!(r.active_mask >> lane & 1)) continue;
      uint64_t w0 = r.addr[lane] >> 2, w1 = (r.addr[lane] + r.size - 1) >> 2;
      if (w1 < w0) continue;  // a footprint past 2^64 - 1 wraps around: it has no words
      group.add(w0, w1);
      all.add(w0, w1);
      f.pushed += w1 - w0 + 1;
    }
    if (group.empty()) continue;
    const uint64_t n = group.merge();
    f.wave += group.busiest_bank();
    f.ideal += (n + 31) / 32;
  }
  f.distinct = all.merge();
  return f;
}

// A shared record's lane offsets from its first active lane's address a0 (0 for inactive lanes), in one branch-free
// pass; `differ`: their bits that differ from `seen`'s. False when a footprint reaches bit 31: then an offset might
// not fit in 32 signed bits (two shapes would look alike) or a footprint cross 2^32, and no shape is kept.
bool lane_offsets(const RlRecord& r, uint64_t a0, uint32_t* offset, const uint32_t* seen, uint32_t& differ) {
  uint64_t high = 0;
  differ = 0;
  for (unsigned lane = 0; lane < 32; ++lane) {
    const uint64_t a = (r.active_mask >> lane & 1) ? r.addr[lane] : a0;
    high |= a | (a + r.size - 1);
    offset[lane] = uint32_t(a - a0);
    differ |= offset[lane] ^ seen[lane];
  }
  return (high >> 31) == 0;
}

// A slot's shape after kMissesKept misses in a row is replaced at every kMissesKept-th miss only.
constexpr uint32_t kMissesKept = 8;

void keep_shape(SharedShape& seen, const RlRecord& r, uint64_t a0, const uint32_t* offset, const SharedFigures& f,
                uint8_t flags) {
  seen.mask = r.active_mask;
  seen.size = r.size;
  seen.low_bits = uint32_t(a0 & 3);
  std::memcpy(seen.offset, offset, sizeof seen.offset);
  seen.distinct = uint32_t(f.distinct);
  seen.wave = uint32_t(f.wave);
  seen.ideal = uint32_t(f.ideal);
  seen.flags = flags;
}

}  // namespace

void Engine::Impl::shared_distribution(const RlRecord& r, Ctx& c, NodeStats& s, SharedShapes& shapes) {
  const uint32_t mask = r.active_mask;
  SharedShape& seen = shapes.of(c.id);
  const uint64_t a0 = mask ? r.addr[__builtin_ctz(mask)] : 0;
  uint32_t offset[32], differ = 0;
  bool have_offsets = false, small = false;
  if (mask != 0 && seen.mask == mask && seen.size == r.size && seen.low_bits == uint32_t(a0 & 3)) {
    small = lane_offsets(r, a0, offset, seen.offset, differ);
    have_offsets = true;
    if (small && differ == 0) {
      seen.misses = 0;
      c.flags |= seen.flags;
      s.addresses.add(seen.distinct);
      s.wavefronts.add(seen.wave);
      s.wavefronts_ideal.add(seen.ideal);
      return;
    }
  }
  const unsigned per_group = r.size <= 4 ? 32u : std::max(1u, 128u / r.size);
  SharedFigures f;
  bool consecutive = false;
  if (!run_group_figures(r, per_group, f, consecutive)) {
    uint64_t base = 0, words = 0;
    if (!strided_word_figures(r, f) && !windowed_shared_figures<WordWindow>(r, per_group, first_lane_window(r), f) &&
        !(lowest_word_window(r, base, words) &&
          (words <= WordWindow::kWords       ? windowed_shared_figures<WordWindow>(r, per_group, base, f)
           : words <= WideWordWindow::kWords ? windowed_shared_figures<WideWordWindow>(r, per_group, base, f)
                                             : false))) {
      f = general_shared_figures(r, per_group);
    }
    consecutive = consecutive_lanes(r);
  }
  // lanes' granules are a subset of their footprint words: distinct footprints mean no shared granule
  const uint8_t flags = uint8_t((f.distinct == f.pushed ? kNoOverlap : 0) | (consecutive ? kConsecutive : 0));
  c.flags |= flags;
  s.addresses.add(uint32_t(f.distinct));
  s.wavefronts.add(uint32_t(f.wave));
  s.wavefronts_ideal.add(uint32_t(f.ideal));
  // A shape is kept unless its slot keeps missing (a sorting network's swaps, whose masks follow the data): then only
  // now and then, so that a PC whose shapes settle gets its slot back.
  if (mask != 0 && (++seen.misses <= kMissesKept || seen.misses % kMissesKept == 0)) {
    if (!have_offsets) small = lane_offsets(r, a0, offset, seen.offset, differ);
    if (small) keep_shape(seen, r, a0, offset, f, flags);
  }
}

namespace {
// The lanes whose owner (`owner`, one byte a lane, 0xFF for none) is `o`.
inline uint32_t lanes_of(const uint8_t* owner, unsigned o) {
#if defined(__SSE2__)
  const __m128i want = _mm_set1_epi8(char(o));
  const __m128i lo = _mm_load_si128(reinterpret_cast<const __m128i*>(owner));
  const __m128i hi = _mm_load_si128(reinterpret_cast<const __m128i*>(owner + 16));
  return uint32_t(_mm_movemask_epi8(_mm_cmpeq_epi8(lo, want))) | uint32_t(_mm_movemask_epi8(_mm_cmpeq_epi8(hi, want)))
                                                                     << 16;
#else
  uint32_t mask = 0;
  for (unsigned lane = 0; lane < RL_WARP_SIZE; ++lane) mask |= uint32_t(owner[lane] == o) << lane;
  return mask;
#endif
}
}  // namespace

// Each lane's owner is written down first, then each owner's lanes are found at once: or-ing each lane's bit into its
// owner's mask in memory made a chain of stores and reloads wherever consecutive lanes shared an owner (two workers:
// every other lane of a column walk; perf put 39% of route_global's samples on that chain). A lane's footprint goes
// to its chunks' owners, or where the batch has wide allocations (choose_wide_units), to its granules' owners.
void Engine::Impl::route_global(const RlRecord& r, uint32_t i, uint32_t slot, const WideUnits& wide, Worker& wk) {
  static_assert(kMaxWorkers <= 64, "owners are bits of a 64-bit set and fit a byte");
  const uint32_t item_index = chunk_item_index(i, r.flags);
  const uint64_t last = (r.size + 3) / 4 - 1;
  uint64_t scratch[RL_WARP_SIZE];
  const uint64_t* addr = lane_addresses(r, scratch);
  alignas(16) uint8_t owner[RL_WARP_SIZE];  // each active lane's first granule's owner
  std::memset(owner, 0xFF, sizeof owner);
  uint64_t owners = 0;            // the owners met
  uint32_t further[kMaxWorkers];  // the lanes whose footprint has more owners, by those owners
  bool spans = false;
  const auto also = [&](unsigned lane, unsigned x) {
    if (!spans) {
      std::memset(further, 0, sizeof further);
      spans = true;
    }
    further[x] |= 1u << lane;
    owners |= uint64_t(1) << x;
  };
  for (uint32_t m = r.active_mask; m; m &= m - 1) {
    const unsigned lane = unsigned(__builtin_ctz(m));
    const uint64_t g = addr[lane] >> 2;
    if (wide.count) {
      const unsigned o = wide.owner(g, W);
      owner[lane] = uint8_t(o);
      owners |= uint64_t(1) << o;
      for (uint64_t k = 1; k <= last; ++k) {
        if (const unsigned x = wide.owner(g + k, W); x != o) also(lane, x);
      }
      continue;
    }
    const uint64_t c0 = chunk_of(g), c1 = chunk_of(g + last);  // no wide allocation: no lookup per granule
    const unsigned o = owner_of(c0, W);
    owner[lane] = uint8_t(o);
    owners |= uint64_t(1) << o;
    for (uint64_t ch = c0 + 1; ch <= c1; ++ch) also(lane, owner_of(ch, W));
  }
  for (uint64_t left = owners; left; left &= left - 1) {  // owners in increasing order, as every list is its own
    const unsigned o = unsigned(__builtin_ctzll(left));
    const uint32_t mask = lanes_of(owner, o) | (spans ? further[o] : 0);
    wk.routing[route_slot].by_chunk[o].items.push_back(Item{item_index, mask, slot});
  }
}

// The allocations a batch owns by units wider than the chunk, from a sample of its records (docs/engine.md,
// "Determinism and parallelism"). With the chunk (1 KiB) as the unit, a warp whose lanes walk the rows of a matrix
// (PolyBench mvt's first kernel: lanes 16 KiB apart) hands an item to nearly every worker for every record, and an
// item costs about as much as 24 lanes' replay (benchmarks/engine.py --pattern rowwalk, two workers, warm: 48.2 ms of
// the workers' global step with items of a lane or two, 33.0 ms with one item a record), so the global step did not
// shrink with workers. A unit of 32 lane strides puts such a record on one or two owners, and the warps of other
// rows, in other units, keep the workers busy. Per allocation: the same kernel's coalesced accesses to a small vector
// (mvt's x1, 16 KiB) would all fall in one such unit, one owner. And per batch: a wide unit must not put the records
// of a whole batch on one owner (a coalesced kernel whose warps all read one row of that matrix, mvt's second
// kernel). So each allocation the sample's row walks lie in is tried in turn, with the unit its walks want (their
// median), and kept only where it leaves the sample's busiest owner a tenth less work (each owner a record meets
// costs an item plus its lanes). Results do not depend on it: a granule has one owner per batch, and one batch's
// global step ends before the next one's begins. A batch whose first 32 sampled records walk no rows costs no more
// than that look (a full sample on every batch took 2-10% of the stencil, gemm and transpose patterns at two workers).
WideUnits Engine::Impl::choose_wide_units(const RlRecord* recs, size_t n) {
  WideUnits wide;
  if (W == 1 || n == 0 || !wide_units_enabled()) return wide;
  constexpr size_t kSamples = 128;
  constexpr uint64_t kItemCost = 24;  // an owner's item, in lanes' replay
  struct Sampled {
    uint64_t granule[RL_WARP_SIZE];
    uint32_t mask;
  };
  struct Walk {
    const RegionShadow* region;
    unsigned shift;  // the unit of 32 of its lane strides
  };
  RlRecord unpacked_one;
  const auto record_at = [&](size_t i) -> const RlRecord& {
    if (!batch_packed) return recs[i];
    unpack_for_engine(batch_packed[i], &unpacked_one);
    return unpacked_one;
  };
  // Before phase 1 has checked the batch: a malformed record is left for phase 1 to name.
  const auto sampled_global = [&](const RlRecord& r) {
    return plausible(r) && r.type == RL_REC_MEM && r.space == RL_SPACE_GLOBAL && r.active_mask != 0;
  };
  size_t hint = 0;
  // Whether r's first two active lanes lie in different chunks of one allocation (of a chunk at least), and the
  // unit of 32 of its lane strides.
  const auto walk_of = [&](const RlRecord& r, const uint64_t* addr, Walk* walk) {
    if ((r.active_mask & (r.active_mask - 1)) == 0) return false;
    const unsigned a = unsigned(__builtin_ctz(r.active_mask));
    const unsigned b = unsigned(__builtin_ctz(r.active_mask & (r.active_mask - 1)));
    const uint64_t ga = addr[a] >> 2, gb = addr[b] >> 2;
    if (chunk_of(ga) == chunk_of(gb)) return false;
    const RegionShadow* reg = find_region(ga, hint);
    if (!reg || !reg->contains_granule(gb) || reg->granule_count() < (uint64_t(1) << kChunkShift)) return false;
    // value mode: a region whose value shadow could not be mapped keeps its values in its owners' own tables
    // (global_value_slot), which need the chunk's fixed owner
    if (config.values && reg->value_slot(ga) == nullptr) return false;
    const uint64_t stride = (ga > gb ? ga - gb : gb - ga) / (b - a);  // granules from one lane to the next
    unsigned shift = kChunkShift;
    while (shift < kWidestUnitShift && (uint64_t(1) << shift) < stride * RL_WARP_SIZE) ++shift;
    *walk = Walk{reg, shift};
    return shift > kChunkShift;
  };
  uint64_t scratch[RL_WARP_SIZE];
  // Most batches walk no rows: a first look at a quarter of the sample spares them the rest (in mvt's first kernel a
  // record in four walks, so 32 records all miss it about once in 10^4 batches).
  const size_t samples = std::min(n, kSamples), first_look = std::min(n, kSamples / 4);
  bool any = false;
  for (size_t k = 0; k < first_look && !any; ++k) {
    const RlRecord& r = record_at(k * n / first_look);
    Walk walk;
    any = sampled_global(r) && walk_of(r, lane_addresses(r, scratch), &walk);
  }
  if (!any) return wide;
  Sampled sampled[kSamples];
  Walk walks[kSamples];
  size_t taken = 0, walked = 0;
  for (size_t k = 0; k < samples; ++k) {
    const RlRecord& r = record_at(k * n / samples);
    if (!sampled_global(r)) continue;
    const uint64_t* addr = lane_addresses(r, scratch);
    Sampled& x = sampled[taken++];
    x.mask = r.active_mask;
    for (uint32_t m = r.active_mask; m; m &= m - 1) x.granule[__builtin_ctz(m)] = addr[__builtin_ctz(m)] >> 2;
    if (walk_of(r, addr, &walks[walked])) ++walked;
  }
  // The sample's busiest owner's work under `units`: per record, an item and its lanes for each owner met.
  const auto busiest = [&](const WideUnits& units) {
    uint64_t load[kMaxWorkers] = {};
    for (size_t k = 0; k < taken; ++k) {
      uint8_t lanes[kMaxWorkers] = {};
      uint64_t met = 0;
      for (uint32_t m = sampled[k].mask; m; m &= m - 1) {
        const unsigned o = units.owner(sampled[k].granule[__builtin_ctz(m)], W);
        met |= uint64_t(1) << o;
        ++lanes[o];
      }
      for (uint64_t left = met; left; left &= left - 1) {
        const unsigned o = unsigned(__builtin_ctzll(left));
        load[o] += kItemCost + lanes[o];
      }
    }
    return *std::max_element(load, load + W);
  };
  uint64_t best = busiest(wide);
  // Allocations in the order their first walk was sampled; each one's unit the median its walks want.
  for (size_t k = 0; k < walked && wide.count < WideUnits::kMax; ++k) {
    const RegionShadow* reg = walks[k].region;
    bool seen = false;
    for (size_t j = 0; j < k && !seen; ++j) seen = walks[j].region == reg;
    if (seen) continue;
    unsigned wanted[kSamples];
    size_t count = 0;
    for (size_t j = k; j < walked; ++j) {
      if (walks[j].region == reg) wanted[count++] = walks[j].shift;
    }
    std::nth_element(wanted, wanted + count / 2, wanted + count);
    WideUnits trial = wide;
    trial.lo[trial.count] = reg->first_granule();
    trial.hi[trial.count] = reg->first_granule() + reg->granule_count() - 1;
    trial.shift[trial.count++] = wanted[count / 2];
    const uint64_t load = busiest(trial);
    if (10 * load < 9 * best) {
      wide = trial;
      best = load;
    }
  }
  return wide;
}

void Engine::Impl::phase2_piece(const RlRecord* recs, size_t n, size_t piece, unsigned w, Worker& wk) {
  constexpr size_t kAhead = 4;  // value mode: a companion is a record of its own, elsewhere in memory
  for (size_t i = piece * kPiece, hi = std::min(n, i + kPiece); i < hi; ++i) {
    if (batch_values && i + kAhead < hi) {
      if (const RlRecord* v = values_of(recs[i + kAhead])) {
        const char* p = reinterpret_cast<const char*>(v);
        for (size_t line = 0; line < sizeof(RlRecord); line += 64) __builtin_prefetch(p + line);
      }
    }
    distribute_and_route(recs[i], i, wk);
  }
  if (W > 1) {
    Worker::Routing& routing = wk.routing[route_slot];
    for (auto& v : routing.by_block) v.ends.push_back(uint32_t(v.items.size()));
    for (auto& v : routing.by_chunk) v.ends.push_back(uint32_t(v.items.size()));
    batch_slots[route_slot].piece_map[piece] = PieceRef{w, routing.pieces_routed++};
  }
}
void Engine::Impl::finish_routing(Worker& wk) {
  for (auto& v : wk.routing[route_slot].by_block) v.sync.resize(v.items.size());
}
void Engine::Impl::distribute_and_route(const RlRecord& r, size_t i, Worker& wk) {
  Ctx& c = route_ctx()[i];
  uint32_t slot = 0;  // position in the block owner's list: where phase 3 leaves the counters
  if (W > 1) {
    auto& to_owner = wk.routing[route_slot].by_block[block_owner(r.block)].items;
    slot = uint32_t(to_owner.size());
    const bool replayed_in_phase3 = r.type == RL_REC_MEM && r.space != RL_SPACE_GLOBAL;  // shared, local
    to_owner.push_back(uint32_t(i) | (replayed_in_phase3 ? kLanesWanted : 0));
  }
  if (r.type != RL_REC_MEM) return;
  unsigned lanes = unsigned(popcount32(r.active_mask));
  NodeStats& s = *wk.stats_for(c.id);
  s.executions += 1;
  s.bytes += uint64_t(lanes) * r.size;
  s.lanes.add(lanes);
  const RlRecord* values = values_of(r);
  if (values) value_distribution(r, *values, s.values);
  if (r.space == RL_SPACE_GLOBAL) {
    auto span = global_distribution(r, c, s, wk.scratch.data(), lanes);
    // Value mode: a broadcast load compares its followers' values in closed form (count_followers) only when its
    // lanes all have a value or none has; partly valued, its lanes take the lane loop.
    const uint32_t valued = values ? values->active_mask & r.active_mask : 0;
    const bool mixed = values && !(r.access & RL_ACCESS_WRITE) && valued != 0 && valued != r.active_mask;
    if (mixed) c.flags &= uint8_t(~kSharedGranule);
    // A broadcast's granule has one owner, which all warps reading that scalar meet (a matrix-vector product's
    // vector element, a loop bound): its share of the record is the first lane alone, the rest is counted here.
    if (c.flags & kSharedGranule) count_followers(r, c, wk);
    const WideUnits& wide = batch_slots[route_slot].wide;  // none with one worker
    const uint64_t g_lo = span.first >> 2, g_hi = (span.second >> 2) + (r.size + 3) / 4 - 1;
    // The common coalesced case: one shadow page, and one owner, who gets the whole record. A record routed lane by
    // lane must not carry the flag: its owners get parts of its mask, and the one-chunk paths of the replay read
    // the mask's first and last lanes' slots, which a record handed over by its addresses has not written.
    if (wide.one_owner_in_chunk(g_lo, g_hi)) c.flags |= kOneChunk;
    if (W == 1) {
      // phase 4 walks the batch itself
    } else if ((c.flags & kOneChunk) && lanes) {  // no per-lane routing
      wk.routing[route_slot].by_chunk[wide.owner(g_lo, W)].items.push_back(
          Item{chunk_item_index(uint32_t(i), r.flags), r.active_mask, slot});
    } else if (lanes) {
      route_global(r, uint32_t(i), slot, wide, wk);
    }
  } else if (r.space == RL_SPACE_SHARED) {
    shared_distribution(r, c, s, wk.shared_shapes);
  }
}

// Value mode, per execution (docs/engine.md, "Value redundancy"): which lanes' values the companion holds, how
// many were 0, which global stores were silent (the companion's pc: the lanes whose store wrote the value already
// there; shared and local stores are counted in the block step, against what the block itself left there),
// whether the lanes agreed on one value, and spatial redundancy (LoadSpy, seeds/001 section 3): a lane that
// accessed the element right after its lower neighbour's and found the same value.
void Engine::Impl::value_distribution(const RlRecord& r, const RlRecord& v, ValueCounts& s) {
  const uint32_t mask = v.active_mask & r.active_mask;
  if (!mask) return;
  const unsigned n = unsigned(popcount32(mask));
  s.lanes += n;
  if (r.space == RL_SPACE_GLOBAL && (r.access & RL_ACCESS_WRITE) && !(r.access & RL_ACCESS_READ))
    s.silent += unsigned(popcount32(uint32_t(v.pc) & mask));
  // Lane masks from flat loops over all 32 lanes (vectorised), then counted over the valued lanes: lane j's bit of
  // `next` says it accessed the element after lane j - 1's and found the same value.
  uint32_t zero = 0, equal = 0, next = 0;
  if (v.flags & RL_COMPANION_UNIFORM) {  // one value in every valued lane (trace-format.md, "Compact form")
    zero = v.addr[0] == 0 ? ~0u : 0u;
    equal = ~0u;
    for (unsigned lane = 1; lane < 32; ++lane) next |= uint32_t(r.addr[lane - 1] + r.size == r.addr[lane]) << lane;
  } else {
    const uint64_t first = v.addr[__builtin_ctz(mask)];
    for (unsigned lane = 0; lane < 32; ++lane) {
      zero |= uint32_t(v.addr[lane] == 0) << lane;
      equal |= uint32_t(v.addr[lane] == first) << lane;
    }
    for (unsigned lane = 1; lane < 32; ++lane)
      next |= uint32_t((r.addr[lane - 1] + r.size == r.addr[lane]) & (v.addr[lane - 1] == v.addr[lane])) << lane;
  }
  s.zero += unsigned(popcount32(zero & mask));
  s.uniform += n >= 2 && (equal & mask) == mask;
  s.spatial += unsigned(popcount32(next & mask & (mask << 1)));
}
}  // namespace reuselens
