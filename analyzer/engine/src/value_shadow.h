// Value shadow of value mode (docs/engine.md, "Value redundancy"): per 4-byte granule, the value the granule's
// last load returned, for the temporal redundancy of LoadSpy (seeds/001, section 3: a load is redundant when it
// returns what the previous load of the same location returned). Stores do not update it: a store that changed
// the value makes the next load differ from it, a silent store does not.
//
// Entry (one u64): bit 63 set = a load was seen; bits 0-31 the granule's 4 bytes (for a 16-byte access, 32 bits
// of the lanes' value hash, docs/trace-format.md "Value companions"). 0 = no load seen.
//
// Inside an allocation the entries lie beside its shadow entries (RegionShadow::value_slot, direct-mapped).
// Elsewhere: sparse pages of 512 entries (shadow.h, SparsePages) keyed like PagedShadow; one per worker for the
// global granules it owns outside allocations (those keep their chunk's owner in every batch, so a granule is always
// seen by the same worker) and one per block for shared and local memory, dropped with the block. Charged to the
// engine's Budget.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "shadow.h"

namespace reuselens {
namespace detail {

constexpr uint64_t kValueSeen = 1ull << 63;

using ValueShadow = SparsePages<uint64_t, 512>;  // 4 KiB pages

// Lane `lane`'s value in a companion: a uniform one (RL_COMPANION_UNIFORM) holds its one value in addr[0] only.
inline uint64_t lane_value(const RlRecord& values, unsigned lane) {
  return values.addr[(values.flags & RL_COMPANION_UNIFORM) ? 0 : lane];
}

// The 4 bytes of granule k (0-based) of a lane's access, from its companion value (docs/trace-format.md): the
// value's bytes for accesses of up to 8 bytes, alternate halves of the hash for 16-byte ones.
inline uint32_t granule_value(uint64_t value, uint64_t k) { return uint32_t(value >> (32 * (k & 1))); }

// LoadSpy's approximate equality (seeds/001 section 3: "within a threshold of difference"): |a - b| at most
// `share` of the larger magnitude, both finite. The engine cannot know whether a load is floating point; it counts
// every 4- and 8-byte load that way and the analysis keeps the counts of the PCs whose SASS uses the value as a
// float or a double (docs/engine.md, "Value redundancy").
inline bool within_share(double a, double b, double share) {
  return std::isfinite(a) && std::isfinite(b) && std::fabs(a - b) <= share * std::max(std::fabs(a), std::fabs(b));
}
// Two 4-byte granules as floats.
inline bool approx_float(uint32_t a, uint32_t b, double share) {
  float x, y;
  std::memcpy(&x, &a, 4);
  std::memcpy(&y, &b, 4);
  return within_share(x, y, share);
}
// Two doubles from their high words alone (sign, exponent, 20 mantissa bits: a relative resolution of 2^-20, far
// below any useful threshold), so that each of a double's two granules decides the same without the other.
inline bool approx_double_high(uint32_t a_high, uint32_t b_high, double share) {
  const uint64_t a = uint64_t(a_high) << 32, b = uint64_t(b_high) << 32;
  double x, y;
  std::memcpy(&x, &a, 8);
  std::memcpy(&y, &b, 8);
  return within_share(x, y, share);
}

}  // namespace detail
}  // namespace reuselens
