#include "kernel_filter.h"

#include <cctype>
#include <fstream>

#include "support.h"

namespace rlc {

namespace {

constexpr int kRegexFlags = REG_EXTENDED | REG_NOSUB;
// Past this many distinct kernel names the filter stops remembering answers (memory stays bounded).
constexpr size_t kMaxDecidedNames = 65536;

// The index just past the bracket expression opened at text[open], or text.size() when it is not closed
// (regcomp then reports it). Inside brackets a backslash is an ordinary character.
size_t bracket_end(const std::string& text, size_t open) {
  size_t i = open + 1;
  if (i < text.size() && text[i] == '^') ++i;
  if (i < text.size() && text[i] == ']') ++i;  // a leading ']' is a member, not the end
  while (i < text.size() && text[i] != ']') {
    char kind = i + 1 < text.size() && text[i] == '[' ? text[i + 1] : 0;
    if (kind == ':' || kind == '=' || kind == '.') {  // [:alpha:], [=a=], [.-.] may hold a ']'
      size_t close = text.find(std::string(1, kind) + "]", i + 2);
      if (close == std::string::npos) return text.size();
      i = close + 2;
    } else {
      ++i;
    }
  }
  return i < text.size() ? i + 1 : text.size();
}

}  // namespace

std::string kernel_regex_problem(const std::string& text) {
  for (size_t i = 0; i < text.size();) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) return "non-ASCII characters are not supported (kernel names are ASCII)";
    if (c == '[') {
      i = bracket_end(text, i);
      continue;
    }
    if (c == '\\' && i + 1 < text.size()) {
      char e = text[i + 1];
      if (std::isdigit(static_cast<unsigned char>(e)))
        return std::string("back-reference \\") + e + " is not supported";
      if (std::isalpha(static_cast<unsigned char>(e)) && std::string("wWsSbB").find(e) == std::string::npos)
        return std::string("\\") + e + " is not POSIX extended syntax (write a bracket expression such as [0-9])";
      i += 2;
      continue;
    }
    ++i;
  }
  regex_t compiled;
  int rc = regcomp(&compiled, text.c_str(), kRegexFlags);
  if (rc == 0) {
    regfree(&compiled);
    return "";
  }
  char message[256];
  regerror(rc, &compiled, message, sizeof message);
  return message;
}

KernelFilter::~KernelFilter() {
  if (has_regex_) regfree(&regex_);
}

void KernelFilter::load(const Config& config, std::vector<std::string>* errors) {
  range_first_ = config.range_first;
  range_end_ = config.range_end;
  if (has_regex_) regfree(&regex_);
  has_regex_ = false;
  decided_.clear();
  if (!config.regex_text.empty()) {
    std::string problem = kernel_regex_problem(config.regex_text);
    if (problem.empty() && regcomp(&regex_, config.regex_text.c_str(), kRegexFlags) == 0) {
      has_regex_ = true;
    } else {
      errors->push_back("invalid kernel regex '" + config.regex_text +
                        "': " + (problem.empty() ? "regcomp failed" : problem));
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

bool KernelFilter::regex_matches(const std::string& name) const {
  return regexec(&regex_, name.c_str(), 0, nullptr, 0) == 0;
}

bool KernelFilter::matches_name(const std::string& mangled) const {
  if (!has_regex_ && names_.empty()) return true;
  std::string dm = demangle(mangled);
  bool by_name = false;
  if (has_regex_ && (regex_matches(mangled) || regex_matches(dm))) by_name = true;
  if (!names_.empty()) {
    std::string base = dm.substr(0, dm.find('('));
    if (names_.count(mangled) || names_.count(dm) || names_.count(base)) by_name = true;
  }
  return by_name;
}

bool KernelFilter::select(const std::string& mangled) {
  bool passes;
  auto known = decided_.find(mangled);
  if (known != decided_.end()) {
    passes = known->second;
  } else {
    passes = matches_name(mangled);
    if (decided_.size() < kMaxDecidedNames) decided_.emplace(mangled, passes);
  }
  if (!passes) return false;
  uint64_t k = matched_count_++;
  return k >= range_first_ && k < range_end_;
}

}  // namespace rlc
