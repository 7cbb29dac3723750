// What the run reports about itself: collector.log (timestamped lines), the errors listed in run.json and
// the fault that makes the run partial.
#pragma once

#include <sanitizer.h>

#include <cstdio>
#include <string>
#include <vector>

namespace rlc {

class Diagnostics {
 public:
  double start_s = 0;               // collector.log times are relative to this
  std::vector<std::string> errors;  // run.json "errors" (at most 1000)
  bool fault = false;               // the run is partial
  std::string fault_reason;

  void open_log(const std::string& path);  // appends
  void close_log();
  bool log_open() const { return log_ != nullptr; }
  void log(const char* fmt, ...);
  // One collector.log line per line of `text` (lines separated by '\n'), each after `prefix`: a sink's notes may
  // hold many (one per launch the engine finished), and one line holds at most 2 KiB.
  void log_lines(const std::string& prefix, const std::string& text);
  void error(const std::string& msg);
  // False (with an error) unless r is SANITIZER_SUCCESS; fatal_to_run also marks the run faulted.
  bool check(SanitizerResult r, const char* what, bool fatal_to_run = false);

 private:
  FILE* log_ = nullptr;
};

}  // namespace rlc
