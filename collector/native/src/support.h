// Small helpers the collector's files share: the clock, the environment, demangled names, UTC time.
#pragma once

#include <string>

namespace rlc {
double now_s();                            // steady clock, seconds
std::string getenv_str(const char* name);  // "" when unset
// REUSELENS_VALUES_APPROX (value mode): the share within which two float loads count as approximately equal
// (docs/engine.md, "Value redundancy"); 0.01 when unset, as LoadSpy's 1%; 0 turns it off. The CLI checks the
// value; a malformed one here (a share below 0, not finite, not a number) falls back to the default.
double values_approx_from_env();
std::string demangle(const std::string& name);  // the name itself when it is not a mangled C++ name
std::string utc_now();                          // ISO 8601, seconds
// The calling thread's name (at most 15 characters: rl-drain, rl-copy-N, rl-engine-0) in top -H, perf and
// /proc/PID/task/TID/comm, where benchmarks/thread_times.py tells the collector's threads apart. Best effort.
void name_this_thread(const char* name);
}  // namespace rlc
