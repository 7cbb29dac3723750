#include "kernel_filter.h"

#include <fstream>

#include "support.h"

namespace rlc {

void KernelFilter::load(const Config& config, std::vector<std::string>* errors) {
  range_first_ = config.range_first;
  range_end_ = config.range_end;
  if (!config.regex_text.empty()) {
    try {
      regex_ = std::regex(config.regex_text, std::regex::ECMAScript);
      has_regex_ = true;
    } catch (const std::regex_error& e) {
      errors->push_back("invalid kernel regex '" + config.regex_text + "': " + e.what());
    }
  }
  if (!config.names_file.empty()) {
    std::ifstream in(config.names_file);
    if (!in) errors->push_back("cannot read kernel list " + config.names_file);
    std::string line;
    while (std::getline(in, line)) {
      size_t a = line.find_first_not_of(" \t\r");
      size_t b = line.find_last_not_of(" \t\r");
      if (a == std::string::npos || line[a] == '#') continue;
      names_.insert(line.substr(a, b - a + 1));
    }
  }
}

bool KernelFilter::matches_name(const std::string& mangled) const {
  if (!has_regex_ && names_.empty()) return true;
  std::string dm = demangle(mangled);
  bool by_name = false;
  if (has_regex_ && (std::regex_search(mangled, regex_) || std::regex_search(dm, regex_))) by_name = true;
  if (!names_.empty()) {
    std::string base = dm.substr(0, dm.find('('));
    if (names_.count(mangled) || names_.count(dm) || names_.count(base)) by_name = true;
  }
  return by_name;
}

bool KernelFilter::select(const std::string& mangled) {
  if (!matches_name(mangled)) return false;
  uint64_t k = matched_count_++;
  return k >= range_first_ && k < range_end_;
}

}  // namespace rlc
