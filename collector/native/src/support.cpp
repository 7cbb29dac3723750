#include "support.h"

#include <cxxabi.h>

#include <chrono>
#include <cstdlib>
#include <ctime>

namespace rlc {

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

std::string getenv_str(const char* name) {
  const char* v = getenv(name);
  return v ? std::string(v) : std::string();
}

std::string demangle(const std::string& name) {
  int status = 0;
  char* d = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status != 0 || d == nullptr) return name;
  std::string out(d);
  free(d);
  return out;
}

std::string utc_now() {
  time_t t = time(nullptr);
  struct tm tmv;
  gmtime_r(&t, &tmv);
  char b[32];
  strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", &tmv);
  return b;
}

}  // namespace rlc
