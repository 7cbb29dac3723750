// A global record's lane addresses, whatever the engine queue left unwritten (trace_format.h: RL_FLAG_ONE_ADDRESS,
// RL_FLAG_ONE_STRIDE; packed_records.h, unpack_for_engine).
#pragma once

#include <cstdint>

#include "reuselens/trace_format.h"

namespace reuselens {
namespace detail {

constexpr uint8_t kHandedOverFlags = RL_FLAG_ONE_ADDRESS | RL_FLAG_ONE_STRIDE;

// The stride of a record handed over with RL_FLAG_ONE_STRIDE: exact, since its span does not wrap around.
inline uint64_t handed_over_stride(const RlRecord& r) {
  const unsigned lo = unsigned(__builtin_ctz(r.active_mask)), hi = 31u - unsigned(__builtin_clz(r.active_mask));
  return (r.addr[hi] - r.addr[lo]) / (hi - lo);
}

// The addresses of r's active lanes, indexed by lane: r.addr itself for a whole record; for one the queue handed
// over by one or two of its addresses, `scratch` filled in from the first active lane's (the slots of the inactive
// lanes below it left unset). For the paths that visit every lane; the closed forms read the written slots alone.
inline const uint64_t* lane_addresses(const RlRecord& r, uint64_t (&scratch)[RL_WARP_SIZE]) {
  if (!(r.flags & kHandedOverFlags)) return r.addr;
  const unsigned first = unsigned(__builtin_ctz(r.active_mask));
  const uint64_t step = (r.flags & RL_FLAG_ONE_STRIDE) ? handed_over_stride(r) : 0;
  uint64_t a = r.addr[first];
  for (unsigned lane = first; lane < RL_WARP_SIZE; ++lane, a += step) scratch[lane] = a;
  return scratch;
}

}  // namespace detail
}  // namespace reuselens
