// Launches of one kernel aggregated together: one entry of the result's "kernels". By default every launch of
// a kernel joins one entry whatever its grid (a kernel whose grid follows the data would otherwise repeat its
// graph and findings once per grid size); EngineConfig::split_configurations keeps one entry per launch
// configuration instead. Either way the entry lists its configurations, each with its launches.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "stats.h"

namespace reuselens {
namespace detail {

struct Configuration {
  uint32_t grid[3], block[3], dyn;
  bool operator<(const Configuration& o) const { return std::memcmp(this, &o, sizeof(Configuration)) < 0; }
  bool operator==(const Configuration& o) const { return std::memcmp(this, &o, sizeof(Configuration)) == 0; }
};

// The entry a launch joins: its kernel, and its configuration when configurations are split (else zeros).
struct GroupKey {
  uint32_t kernel;
  Configuration config;
  bool operator<(const GroupKey& o) const { return std::memcmp(this, &o, sizeof(GroupKey)) < 0; }
};

struct ConfigurationLaunches {
  Configuration config;
  std::vector<uint64_t> launches;
  uint64_t records = 0;
};

struct Group {
  GroupKey key;
  std::vector<uint64_t> launches, partial;
  std::vector<ConfigurationLaunches> configurations;  // in order of first launch
  uint64_t records = 0;
  Accumulator acc;
};

}  // namespace detail
}  // namespace reuselens
