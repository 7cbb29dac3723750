// The engine's measuring switches (docs/collector.md, "Environment of the tool library"): each is on unless its
// environment variable is "0", read once per process by the caller's static.
#pragma once

#include <cstdlib>
#include <cstring>

namespace reuselens {
namespace detail {

inline bool switched_on(const char* variable) {
  const char* v = std::getenv(variable);
  return v == nullptr || std::strcmp(v, "0") != 0;
}

}  // namespace detail
}  // namespace reuselens
