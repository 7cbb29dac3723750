#include "support.h"

#include <cxxabi.h>
#include <pthread.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <string>

namespace rlc {

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

std::string getenv_str(const char* name) {
  const char* v = getenv(name);
  return v ? std::string(v) : std::string();
}

double values_approx_from_env() {
  constexpr double kDefault = 0.01;
  const std::string text = getenv_str("REUSELENS_VALUES_APPROX");
  if (text.empty()) return kDefault;
  char* end = nullptr;
  const double share = strtod(text.c_str(), &end);
  return end && *end == '\0' && share >= 0 && share < 1e300 ? share : kDefault;
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

void name_this_thread(const char* name) { pthread_setname_np(pthread_self(), name); }

}  // namespace rlc
