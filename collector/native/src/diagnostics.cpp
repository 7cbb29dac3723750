#include "diagnostics.h"

#include <cstdarg>

#include "support.h"

namespace rlc {

void Diagnostics::open_log(const std::string& path) { log_ = fopen(path.c_str(), "a"); }

void Diagnostics::close_log() {
  if (log_) fclose(log_);
  log_ = nullptr;
}

void Diagnostics::log(const char* fmt, ...) {
  if (!log_) return;
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  fprintf(log_, "[%9.3f] %s\n", now_s() - start_s, buf);
  fflush(log_);
}

void Diagnostics::log_lines(const std::string& prefix, const std::string& text) {
  size_t from = 0;
  while (from < text.size()) {
    size_t to = text.find('\n', from);
    if (to == std::string::npos) to = text.size();
    log("%s%s", prefix.c_str(), text.substr(from, to - from).c_str());
    from = to + 1;
  }
}

void Diagnostics::error(const std::string& msg) {
  if (errors.size() < 1000) errors.push_back(msg);
  log("error: %s", msg.c_str());
}

bool Diagnostics::check(SanitizerResult r, const char* what, bool fatal_to_run) {
  if (r == SANITIZER_SUCCESS) return true;
  const char* s = nullptr;
  sanitizerGetResultString(r, &s);
  error(std::string(what) + " failed: " + (s ? s : "unknown error") + " (" + std::to_string((int)r) + ")");
  if (fatal_to_run && !fault) {
    fault = true;
    fault_reason = std::string(what) + " failed";
  }
  return false;
}

}  // namespace rlc
