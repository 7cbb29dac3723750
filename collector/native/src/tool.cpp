// ReuseLens collector tool library: loaded into the profiled application with LD_PRELOAD (and
// CUDA_INJECTION64_PATH), subscribes to the Compute Sanitizer API, saves every CUBIN, patches memory
// instructions with the device patch (patch.cu), drains warp records losslessly and writes the run
// directory (docs/run-directory.md). Configuration comes from REUSELENS_* variables set by
// collector/launcher.py (config.cpp); docs/collector.md lists them.
//
// This file: start-up (configuration, subscription), claiming the run directory, run.json writes, exit.
#include "tool.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "device_info.h"
#include "json.h"
#include "launch_api.h"
#include "run_json.h"
#include "support.h"

namespace rlc {

Tool& tool() {
  static Tool* t = new Tool();  // never destroyed: callbacks may arrive during process teardown
  return *t;
}

void Tool::init() {
  diag_.start_s = now_s();
  cfg_ = read_config();
  if (cfg_.run_dir.empty()) {
    fprintf(stderr, "reuselens collector: REUSELENS_RUN_DIR is not set; not profiling (use `reuselens profile`)\n");
    return;
  }
  std::vector<std::string> config_errors;
  filter_.load(cfg_, &config_errors);
  SanitizerResult r = SANITIZER_SUCCESS;
  const char* failed = subscribe(&r);
  if (!failed) enable_launch_api_callbacks(sub_, &config_errors);
  if (failed || !config_errors.empty()) report_config_errors(config_errors, r, failed);
  if (failed) return;
  atexit([] { tool().at_exit(); });
}

// Subscribe now so that module loads are seen; the run directory is claimed on first CUDA use. Returns the
// call that failed (its result in *r), or nullptr.
const char* Tool::subscribe(SanitizerResult* r) {
  *r = sanitizerSubscribe(
      &sub_,
      [](void*, Sanitizer_CallbackDomain d, Sanitizer_CallbackId c, const void* data) { tool().callback(d, c, data); },
      nullptr);
  const char* failed = *r != SANITIZER_SUCCESS ? "sanitizerSubscribe" : nullptr;
  for (auto d : {SANITIZER_CB_DOMAIN_RESOURCE, SANITIZER_CB_DOMAIN_LAUNCH, SANITIZER_CB_DOMAIN_MEMCPY,
                 SANITIZER_CB_DOMAIN_MEMSET}) {
    if (failed) break;
    *r = sanitizerEnableDomain(1, sub_, d);
    if (*r != SANITIZER_SUCCESS) failed = "sanitizerEnableDomain";
  }
  // CUDA graphs' nodes (on_graph_node). Not fatal when refused: the run goes on, and the launches it sees say
  // what it saw.
  if (!failed) graphs_enabled_ = sanitizerEnableDomain(1, sub_, SANITIZER_CB_DOMAIN_GRAPHS) == SANITIZER_SUCCESS;
  return failed;
}

// Claims the run directory so that a start-up failure is visible in it.
void Tool::report_config_errors(const std::vector<std::string>& config_errors, SanitizerResult r, const char* failed) {
  if (!claim()) return;
  for (auto& e : config_errors) error(e);
  if (failed) {
    check(r, failed, true);
  } else {
    diag_.fault = true;
    diag_.fault_reason = config_errors[0];
  }
  write_run_json(false);
}

// The first process of the run that uses CUDA owns the run directory; others (helpers the app forks or
// execs, which inherit LD_PRELOAD) stay passive.
bool Tool::claim() {
  if (claimed_tried_) return enabled_;
  claimed_tried_ = true;
  if (!take_run_dir()) return false;
  enabled_ = true;
  mkdir((cfg_.run_dir + "/modules").c_str(), 0755);
  diag_.open_log(cfg_.run_dir + "/collector.log");
  log_start();
  if (access(cfg_.patch_path.c_str(), R_OK) != 0) {
    error("device patch " + cfg_.patch_path + " not found; rebuild the collector with nvcc available");
    diag_.fault = true;
    diag_.fault_reason = "device patch missing";
  }
  open_sinks();
  drainer_.start();
  run_.driver = nvidia_driver_version();
  write_run_json(false);
  return true;
}

// The lock file .collector.pid, created by the first process only.
bool Tool::take_run_dir() {
  std::string lock = cfg_.run_dir + "/.collector.pid";
  int fd = open(lock.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    FILE* lf = fopen((cfg_.run_dir + "/collector.log").c_str(), "a");
    if (lf) {
      fprintf(lf, "process %d also uses CUDA; only the first CUDA process of the command is profiled\n", (int)getpid());
      fclose(lf);
    }
    return false;
  }
  std::string pid = std::to_string(getpid()) + "\n";
  if (write(fd, pid.data(), pid.size()) < 0) {
  }
  close(fd);
  return true;
}

void Tool::log_start() {
  diag_.log("reuselens collector %s, pid %d, patch %s, buffers %u x %llu bytes, traces %s", kToolVersion, (int)getpid(),
            cfg_.patch_path.c_str(), cfg_.nbuf, (unsigned long long)cfg_.buffer_bytes,
            cfg_.write_traces ? "on" : "off");
  // The launcher sets SANITIZER_DISABLE_PARALLEL_LAUNCHES=1 (docs/collector.md, "Multi-stream applications");
  // without it an app with user streams can block forever in the first patching. Say which mode this run had.
  const std::string serial = getenv_str("SANITIZER_DISABLE_PARALLEL_LAUNCHES");
  diag_.log("patching %s; Sanitizer parallel launches %s, CUDA_MODULE_LOADING=%s; CUDA graph nodes %s",
            cfg_.lazy_patch ? "at the first instrumented launch" : "at MODULE_LOADED",
            serial == "1" ? "disabled" : "enabled (multi-stream apps may hang)",
            getenv_str("CUDA_MODULE_LOADING").empty() ? "(default)" : getenv_str("CUDA_MODULE_LOADING").c_str(),
            graphs_enabled_ ? "seen" : "not seen (the Sanitizer refused its graphs domain)");
}

// Trace files when asked for, and the online analysis engine when the build has it.
void Tool::open_sinks() {
  if (cfg_.object_level) {  // no records: the launches' touches are written at exit (object_launches.cpp)
    diag_.log("object-level mode: allocations' touches per launch, no access trace");
    return;
  }
  if (cfg_.write_traces) sinks_.push_back(std::make_unique<TraceFileSink>(cfg_.run_dir));
  auto e = make_engine_sink();
  if (!e) return;
  run_.engine = true;
  uint64_t limit = engine_queue_bytes();
  unsigned copy_threads = queue_copy_threads();
  // Packed records are unpacked by the queue's copy threads unless REUSELENS_QUEUE_UNPACK=0 (then by the engine's
  // workers, docs/collector.md "Packed records").
  const bool queue_unpacks = cfg_.packed && getenv_str("REUSELENS_QUEUE_UNPACK") != "0";
  sinks_.push_back(limit ? make_queued_sink(std::move(e), limit, copy_threads, queue_unpacks) : std::move(e));
  if (limit)
    diag_.log("online analysis behind a queue of %llu bytes, %u copy threads", (unsigned long long)limit, copy_threads);
  else
    diag_.log("online analysis in the drain thread (no queue)");
}

void Tool::maybe_write_run_json() {
  double t = now_s();
  if (t - last_write_ >= 0.25) write_run_json(false);
}

void Tool::write_run_json(bool final_write) {
  if (!enabled_) return;
  last_write_ = now_s();
  std::string err;
  if (!write_file_atomic(cfg_.run_dir + "/run.json", run_json_text(cfg_, run_, diag_, final_write), &err)) {
    if (diag_.log_open()) diag_.log("error: %s", err.c_str());
  }
}

void Tool::finish_sinks() {
  for (auto& s : sinks_) {
    std::string err;
    const double t0 = now_s();
    if (!s->finish(cfg_.run_dir, &err)) error(std::string(s->name()) + ": " + err);
    const std::string& note = s->finish_note;
    const size_t first_end = std::min(note.find('\n'), note.size());
    diag_.log("exit: %s finished in %.3f s%s%s", s->name(), now_s() - t0, note.empty() ? "" : ": ",
              note.substr(0, first_end).c_str());
    if (first_end < note.size()) diag_.log_lines(std::string("exit: ") + s->name() + ": ", note.substr(first_end + 1));
  }
}

void Tool::at_exit() {
  std::unique_lock<std::recursive_mutex> g(mu_);
  if (!enabled_ || exited_) return;
  DrainJob* open_job = drainer_.current();
  if (open_job != nullptr && !open_job->finalizing) {
    diag_.log("exit: finishing the instrumented launch still open");
    finish_job(open_job, g);
  }
  // A launch another thread is finishing (in its LAUNCH_END, the tool lock released while its kernel ends): its
  // end reaches the drain thread once that thread has the lock again, and stop() waits for every launch's end.
  while ((open_job = drainer_.current()) != nullptr && open_job->finalizing) launch_cv_.wait(g);
  settle_ended_launch(true);
  if (object_launch_.active) diag_.log("exit: finishing the object-level launch still open");
  finish_object_launch(g);
  if (cfg_.object_level)
    diag_.log(
        "exit: object-level: %llu launches; their LAUNCH_BEGIN callbacks %.3f s (the state's set-up %.3f s), "
        "waits for the kernels and their marks %.3f s",
        (unsigned long long)object_times_.launches, object_times_.begin_s, object_times_.setup_s, object_times_.wait_s);
  if (cfg_.object_elements) collect_all_element_maps();
  exited_ = true;
  drainer_.stop();
  finish_sinks();
  if (cfg_.object_level) write_object_touches();
  if (run_.instrumented > 0 && !cfg_.object_level)
    diag_.log("exit: launch ends waited %.3f s for their kernels and %.3f s for their last records' drain",
              run_.launch_sync_s, run_.launch_drain_wait_s);
  diag_.log("exit: %llu launches, %llu instrumented, %llu records", (unsigned long long)run_.launch_count,
            (unsigned long long)run_.instrumented, (unsigned long long)run_.records_total);
  if (run_.graph_launches)
    diag_.log("exit: %llu CUDA graph launches, %llu kernel nodes launched (not instrumented)",
              (unsigned long long)run_.graph_launches, (unsigned long long)run_.graph_kernel_nodes);
  write_run_json(true);
  diag_.close_log();
}

namespace {
std::once_flag g_init_once;
}  // namespace

}  // namespace rlc

// Entry points: the static initialiser (LD_PRELOAD) and InitializeInjection (CUDA_INJECTION64_PATH);
// whichever comes first initialises once.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  std::call_once(rlc::g_init_once, [] { rlc::tool().init(); });
  return 1;
}

namespace {
__attribute__((constructor)) void reuselens_collector_ctor() { InitializeInjection(); }
}  // namespace
