// Which launches are instrumented: the kernel name filter (regex and/or names file) and the launch range,
// counted over the launches that pass the name filter (docs/collector.md).
#pragma once

#include <cstdint>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "config.h"

namespace rlc {

class KernelFilter {
 public:
  // Compiles the regex and reads the names file; a problem with either is appended to *errors.
  void load(const Config& config, std::vector<std::string>* errors);
  // Counts a launch that passes the name filter; true when it also falls in the launch range.
  bool select(const std::string& mangled);

 private:
  bool matches_name(const std::string& mangled) const;

  std::regex regex_;
  bool has_regex_ = false;
  std::set<std::string> names_;
  uint64_t range_first_ = 0, range_end_ = UINT64_MAX;
  uint64_t matched_count_ = 0;  // launches passing the name filter
};

}  // namespace rlc
