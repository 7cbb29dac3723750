// Launches of one kernel with one configuration, aggregated together: one entry of the result's "kernels".
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "stats.h"

namespace reuselens {
namespace detail {

struct GroupKey {
  uint32_t kernel;
  uint32_t grid[3], block[3], dyn;
  bool operator<(const GroupKey& o) const { return std::memcmp(this, &o, sizeof(GroupKey)) < 0; }
};

struct Group {
  GroupKey key;
  std::vector<uint64_t> launches, partial;
  uint64_t records = 0;
  Accumulator acc;
};

}  // namespace detail
}  // namespace reuselens
