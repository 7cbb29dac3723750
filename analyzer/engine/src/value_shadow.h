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
// global granules it owns outside allocations (owners are fixed per chunk, so a granule is always seen by the same
// worker) and one per block for shared and local memory, dropped with the block. Charged to the engine's Budget.
#pragma once

#include <cstdint>

#include "shadow.h"

namespace reuselens {
namespace detail {

constexpr uint64_t kValueSeen = 1ull << 63;

using ValueShadow = SparsePages<uint64_t, 512>;  // 4 KiB pages

// The 4 bytes of granule k (0-based) of a lane's access, from its companion value (docs/trace-format.md): the
// value's bytes for accesses of up to 8 bytes, alternate halves of the hash for 16-byte ones.
inline uint32_t granule_value(uint64_t value, uint64_t k) { return uint32_t(value >> (32 * (k & 1))); }

}  // namespace detail
}  // namespace reuselens
