// Which launches are instrumented: the kernel name filter (regex and/or names file) and the launch range,
// counted over the launches that pass the name filter (docs/collector.md).
#pragma once

#include <regex.h>

#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "config.h"

namespace rlc {

// Why `text` is not a kernel filter regex, or "" when it is one. The syntax is POSIX extended (regcomp with
// REG_EXTENDED) without what would make it differ from what users expect or from the launcher's check:
// escapes of letters or digits other than \w \W \s \S \b \B (so no back-references, no \d) and non-ASCII
// characters are refused. collector/kernel_regex.py applies the same rules before a run.
std::string kernel_regex_problem(const std::string& text);

class KernelFilter {
 public:
  KernelFilter() = default;
  KernelFilter(const KernelFilter&) = delete;  // owns a compiled regex_t
  KernelFilter& operator=(const KernelFilter&) = delete;
  ~KernelFilter();

  // Compiles the regex and reads the names file; a problem with either is appended to *errors.
  void load(const Config& config, std::vector<std::string>* errors);
  // Counts a launch that passes the name filter; true when it also falls in the launch range. Not
  // thread-safe (the tool calls it under its lock).
  bool select(const std::string& mangled);
  // Whether the name filter (regex, names file) passes `mangled`, counting nothing: a launch range cannot be
  // judged ahead of the launches.
  bool matches_name(const std::string& mangled) const;

 private:
  bool regex_matches(const std::string& name) const;

  // glibc's regexec simulates the automaton without recursion: a 30,000-character template name cannot
  // overflow the stack the way std::regex's backtracking did.
  regex_t regex_{};
  bool has_regex_ = false;
  std::set<std::string> names_;
  uint64_t range_first_ = 0, range_end_ = UINT64_MAX;
  uint64_t matched_count_ = 0;  // launches passing the name filter
  // The name filter's answer per mangled name: an app launches the same kernels over and over, and demangling
  // and matching a long template name on every launch costs more than the launch itself.
  std::unordered_map<std::string, bool> decided_;
};

}  // namespace rlc
