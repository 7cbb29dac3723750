// Small helpers the collector's files share: the clock, the environment, demangled names, UTC time.
#pragma once

#include <string>

namespace rlc {
double now_s();                                 // steady clock, seconds
std::string getenv_str(const char* name);       // "" when unset
std::string demangle(const std::string& name);  // the name itself when it is not a mangled C++ name
std::string utc_now();                          // ISO 8601, seconds
}  // namespace rlc
