// ReuseLens collector tool library: loaded into the profiled application with LD_PRELOAD (and
// CUDA_INJECTION64_PATH), subscribes to the Compute Sanitizer API, saves every CUBIN, patches memory
// instructions with the device patch (patch.cu), drains warp records losslessly and writes the run
// directory (docs/run-directory.md). Configuration comes from REUSELENS_* variables set by
// collector/launcher.py; docs/collector.md lists them.
#include <cxxabi.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <sanitizer.h>
#include <generated_cuda_meta.h>
#include <generated_cuda_runtime_api_meta.h>

#include "cubin.h"
#include "device_state.h"
#include "json.h"
#include "reuselens/trace_format.h"
#include "sha256.h"
#include "sinks.h"

using reuselens::RlRecord;

namespace rlc {
namespace {

constexpr const char* kToolVersion = "0.1.0";
constexpr uint64_t kDefaultBufferBytes = 16ull << 20;    // per buffer
constexpr uint64_t kMinBufferRecords = 16;               // smallest buffer accepted (forces many flushes)
constexpr size_t kMaxLaunchEntries = 100000;             // run.json lists at most this many launches

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

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

// Dynamic shared memory of the launch being made on this thread: read from the launch API call's
// parameters (ENTER), used by the LAUNCH_BEGIN nested inside it, cleared at EXIT. -1 = unknown.
thread_local int64_t t_pending_smem = -1;

std::string utc_now() {
  time_t t = time(nullptr);
  struct tm tmv;
  gmtime_r(&t, &tmv);
  char b[32];
  strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", &tmv);
  return b;
}

struct FunctionEntry {
  uint32_t id;
  std::string module;   // sha256
  std::string name;
  uint64_t value;       // offset in its section
  uint64_t size;
  uint32_t section;
  bool kernel;          // launched at least once
  bool global;
};

struct ModuleEntry {
  std::string sha;
  uint32_t sm = 0;
  CUcontext ctx = nullptr;
  bool patched = false;
  bool patch_failed = false;
  std::vector<uint32_t> functions;              // ids
  std::map<std::string, uint32_t> by_name;
  std::map<uint32_t, uint64_t> section_base;    // ELF section -> absolute address, once known
  std::map<std::string, uint64_t> static_shared;
};

struct Range {
  uint64_t start, end;
  uint32_t fid;
  uint64_t value;
};

struct ContextState {
  bool ready = false;
  bool patches_loaded = false;
  RlDeviceState* d_state = nullptr;      // device memory
  RlDeviceState* d_disabled = nullptr;   // device memory, enabled = 0
  RlDeviceState* h_stage = nullptr;      // pinned host staging for copies
  RlRecord* buffers = nullptr;           // pinned host
  uint64_t* host_allowed = nullptr;      // pinned host
  uint64_t* host_ready = nullptr;        // pinned host
  uint64_t capacity = 0;
  uint32_t nbuf = 2;
};

struct LaunchEntry {
  uint64_t id;
  uint32_t function_id;
  std::string kernel, module;
  uint32_t grid[3], block[3], cluster[3];
  uint64_t stream;
  bool instrumented;
  uint64_t records = 0;
  bool has_trace = false;
  std::string status;  // complete | faulted | incomplete
  uint32_t smem = 0;
  int64_t dynamic_smem = -1;
  bool has_static_smem = false;
  uint64_t static_smem = 0;
  double seconds = 0;
  uint64_t flushes = 0;
};

struct AllocEntry {
  uint64_t address, size;
  std::string kind;
  uint64_t allocated_before_launch;
  bool freed = false;
  uint64_t freed_after_launch = 0;
};

// The launch whose records are being drained.
struct DrainJob {
  ContextState* cs = nullptr;
  Sanitizer_LaunchHandle launch = nullptr;
  CUfunction function = nullptr;
  CUstream stream = nullptr;
  Sanitizer_StreamHandle hstream = nullptr;
  bool finalizing = false;  // a thread is waiting for this launch's kernel and records
  size_t entry = 0;        // index in launches_
  uint64_t next_gen = 0;
  uint64_t drained = 0;
  uint64_t flushes = 0;
  bool ended = false;      // kernel finished (or faulted)
  bool faulted = false;
  uint64_t total = 0;      // tickets handed out, valid when ended && !faulted
  bool done = false;       // drain thread finished with this job
  uint64_t unresolved = 0;
  double resolve_s = 0, sinks_s = 0;  // drain-thread time in PC resolution / in the sinks (the engine queue's copy)
};

class Tool {
 public:
  void init();
  void callback(Sanitizer_CallbackDomain domain, Sanitizer_CallbackId cbid, const void* data);
  void at_exit();

 private:
  // helpers
  void log(const char* fmt, ...);
  void error(const std::string& msg);
  bool check(SanitizerResult r, const char* what, bool fatal_to_run = false);
  bool claim();
  void write_run_json(bool final_write);
  void maybe_write_run_json();
  std::string run_json_text(bool final_write);
  void on_context_created(CUcontext ctx, CUdevice dev);
  void on_module_loaded(const Sanitizer_ResourceModuleData* md);
  void on_launch_begin(const Sanitizer_LaunchData* ld);
  void on_launch_end(const Sanitizer_LaunchData* ld);
  void finish_job(DrainJob* job, std::unique_lock<std::recursive_mutex>& g);
  bool debug_ = false;
  bool lazy_patch_ = true;
  bool select_launch(const std::string& mangled);
  bool patch_module(CUmodule mod, ModuleEntry& me);
  void resolve_module(CUmodule mod, ModuleEntry& me);
  void rebuild_ranges();
  void drain_loop();
  void drain_generation(DrainJob& job, uint64_t gen, uint64_t count);
  void resolve_records(RlRecord* r, size_t n, DrainJob& job);

  bool enabled_ = false;     // configuration valid and this process owns the run directory
  bool claimed_tried_ = false;
  std::string run_dir_;
  std::string patch_path_;
  std::string header_json_;  // members given by the launcher (command, cwd, start_time)
  std::string regex_text_, names_file_;
  std::regex regex_;
  bool has_regex_ = false;
  std::set<std::string> names_;
  uint64_t range_first_ = 0, range_end_ = UINT64_MAX;
  bool range_end_set_ = false;
  bool write_traces_ = false;
  uint64_t buffer_bytes_ = kDefaultBufferBytes;
  uint32_t nbuf_ = 2;

  Sanitizer_SubscriberHandle sub_ = nullptr;
  std::recursive_mutex mu_;  // all tool state below; also serialises the patching API
  std::condition_variable_any launch_cv_;  // an instrumented launch waits for the previous one
  FILE* log_ = nullptr;
  std::vector<std::string> errors_;
  std::string gpu_name_, gpu_arch_, driver_;
  std::map<CUcontext, ContextState> contexts_;
  std::map<CUmodule, ModuleEntry> modules_;
  std::vector<std::pair<std::string, uint32_t>> module_list_;  // sha, sm (run.json order)
  std::set<std::string> saved_modules_;
  std::vector<FunctionEntry> functions_;
  std::vector<Range> ranges_;
  std::vector<LaunchEntry> launches_;
  std::vector<AllocEntry> allocs_;
  std::unordered_map<uint64_t, size_t> live_allocs_;
  std::set<uint64_t> own_allocs_;
  uint64_t launch_count_ = 0;     // every launch seen
  uint64_t matched_count_ = 0;    // launches passing the name filter
  uint64_t instrumented_ = 0;
  uint64_t records_total_ = 0;
  uint64_t unresolved_total_ = 0;
  bool fault_ = false;
  std::string fault_reason_;
  double last_write_ = 0;
  double start_s_ = 0;
  bool in_tool_alloc_ = false;
  std::vector<std::unique_ptr<RecordSink>> sinks_;
  bool engine_ = false;

  // drain thread
  std::thread drain_thread_;
  std::mutex dmu_;
  std::condition_variable dcv_;
  DrainJob* job_ = nullptr;
  bool stop_ = false;
  bool exited_ = false;
};

Tool& tool() {
  static Tool* t = new Tool();  // never destroyed: callbacks may arrive during process teardown
  return *t;
}

void Tool::log(const char* fmt, ...) {
  if (!log_) return;
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  fprintf(log_, "[%9.3f] %s\n", now_s() - start_s_, buf);
  fflush(log_);
}

void Tool::error(const std::string& msg) {
  if (errors_.size() < 1000) errors_.push_back(msg);
  log("error: %s", msg.c_str());
}

bool Tool::check(SanitizerResult r, const char* what, bool fatal_to_run) {
  if (r == SANITIZER_SUCCESS) return true;
  const char* s = nullptr;
  sanitizerGetResultString(r, &s);
  error(std::string(what) + " failed: " + (s ? s : "unknown error") + " (" + std::to_string((int)r) + ")");
  if (fatal_to_run && !fault_) {
    fault_ = true;
    fault_reason_ = std::string(what) + " failed";
  }
  return false;
}

void Tool::init() {
  start_s_ = now_s();
  run_dir_ = getenv_str("REUSELENS_RUN_DIR");
  if (run_dir_.empty()) {
    fprintf(stderr, "reuselens collector: REUSELENS_RUN_DIR is not set; not profiling (use `reuselens profile`)\n");
    return;
  }
  header_json_ = getenv_str("REUSELENS_RUN_HEADER");
  regex_text_ = getenv_str("REUSELENS_KERNEL_REGEX");
  names_file_ = getenv_str("REUSELENS_KERNEL_NAMES_FILE");
  write_traces_ = getenv_str("REUSELENS_WRITE_TRACES") == "1";
  debug_ = getenv_str("REUSELENS_DEBUG") == "1";
  // Default: patch a module at the first instrumented launch of one of its kernels (the configuration all
  // recorded results were measured with). REUSELENS_EAGER_PATCH=1 patches at MODULE_LOADED instead.
  lazy_patch_ = getenv_str("REUSELENS_EAGER_PATCH") != "1";
  std::string bb = getenv_str("REUSELENS_BUFFER_BYTES");
  std::string nb = getenv_str("REUSELENS_BUFFERS");
  std::string lr = getenv_str("REUSELENS_LAUNCH_RANGE");
  patch_path_ = getenv_str("REUSELENS_PATCH");
  if (patch_path_.empty()) {
    Dl_info info;
    if (dladdr(reinterpret_cast<void*>(&tool), &info) && info.dli_fname) {
      std::string self(info.dli_fname);
      patch_path_ = self.substr(0, self.rfind('/') + 1) + "reuselens_patch.fatbin";
    }
  }
  std::vector<std::string> config_errors;
  if (!regex_text_.empty()) {
    try {
      regex_ = std::regex(regex_text_, std::regex::ECMAScript);
      has_regex_ = true;
    } catch (const std::regex_error& e) {
      config_errors.push_back("invalid kernel regex '" + regex_text_ + "': " + e.what());
    }
  }
  if (!names_file_.empty()) {
    std::ifstream in(names_file_);
    if (!in) config_errors.push_back("cannot read kernel list " + names_file_);
    std::string line;
    while (std::getline(in, line)) {
      size_t a = line.find_first_not_of(" \t\r");
      size_t b = line.find_last_not_of(" \t\r");
      if (a == std::string::npos || line[a] == '#') continue;
      names_.insert(line.substr(a, b - a + 1));
    }
  }
  if (!lr.empty()) {
    size_t c = lr.find(':');
    range_first_ = strtoull(lr.substr(0, c).c_str(), nullptr, 10);
    if (c != std::string::npos && c + 1 < lr.size()) {
      range_end_ = strtoull(lr.substr(c + 1).c_str(), nullptr, 10);
      range_end_set_ = true;
    }
  }
  if (!bb.empty()) buffer_bytes_ = strtoull(bb.c_str(), nullptr, 10);
  if (buffer_bytes_ < kMinBufferRecords * sizeof(RlRecord)) buffer_bytes_ = kMinBufferRecords * sizeof(RlRecord);
  if (!nb.empty()) nbuf_ = (uint32_t)std::clamp(atoi(nb.c_str()), 2, RL_MAX_BUFFERS);

  // Subscribe now so that module loads are seen; the run directory is claimed on first CUDA use.
  SanitizerResult r = sanitizerSubscribe(&sub_, [](void*, Sanitizer_CallbackDomain d, Sanitizer_CallbackId c,
                                                   const void* data) { tool().callback(d, c, data); },
                                         nullptr);
  const char* failed = r != SANITIZER_SUCCESS ? "sanitizerSubscribe" : nullptr;
  for (auto d : {SANITIZER_CB_DOMAIN_RESOURCE, SANITIZER_CB_DOMAIN_LAUNCH}) {
    if (failed) break;
    r = sanitizerEnableDomain(1, sub_, d);
    if (r != SANITIZER_SUCCESS) failed = "sanitizerEnableDomain";
  }
  if (!failed) {
    // Launch API calls, only to read the dynamic shared memory size (not in Sanitizer_LaunchData).
    struct Cb { Sanitizer_CallbackDomain d; uint32_t id; };
    const Cb api[] = {
        {SANITIZER_CB_DOMAIN_RUNTIME_API, SANITIZER_CBID_RUNTIME_API_cudaLaunchKernel},
        {SANITIZER_CB_DOMAIN_RUNTIME_API, SANITIZER_CBID_RUNTIME_API_cudaLaunchKernel_ptsz},
        {SANITIZER_CB_DOMAIN_RUNTIME_API, SANITIZER_CBID_RUNTIME_API_cudaLaunchKernelExC},
        {SANITIZER_CB_DOMAIN_RUNTIME_API, SANITIZER_CBID_RUNTIME_API_cudaLaunchKernelExC_ptsz},
        {SANITIZER_CB_DOMAIN_DRIVER_API, SANITIZER_CBID_DRIVER_API_cuLaunchKernel},
        {SANITIZER_CB_DOMAIN_DRIVER_API, SANITIZER_CBID_DRIVER_API_cuLaunchKernel_ptsz},
        {SANITIZER_CB_DOMAIN_DRIVER_API, SANITIZER_CBID_DRIVER_API_cuLaunchKernelEx},
        {SANITIZER_CB_DOMAIN_DRIVER_API, SANITIZER_CBID_DRIVER_API_cuLaunchKernelEx_ptsz},
    };
    for (const Cb& c : api) {
      SanitizerResult e = sanitizerEnableCallback(1, sub_, c.d, (Sanitizer_CallbackId)c.id);
      if (e != SANITIZER_SUCCESS) config_errors.push_back("sanitizerEnableCallback(launch API " +
                                                          std::to_string(c.id) + ") failed");
    }
  }
  if (failed) {
    // Claim so that the failure is visible in the run directory.
    if (claim()) {
      for (auto& e : config_errors) error(e);
      check(r, failed, true);
      write_run_json(false);
    }
    return;
  }
  if (!config_errors.empty() && claim()) {
    for (auto& e : config_errors) error(e);
    fault_ = true;
    fault_reason_ = config_errors[0];
    write_run_json(false);
  }
  atexit([] { tool().at_exit(); });
}

// The first process of the run that uses CUDA owns the run directory; others (helpers the app forks or
// execs, which inherit LD_PRELOAD) stay passive.
bool Tool::claim() {
  if (claimed_tried_) return enabled_;
  claimed_tried_ = true;
  std::string lock = run_dir_ + "/.collector.pid";
  int fd = open(lock.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    FILE* lf = fopen((run_dir_ + "/collector.log").c_str(), "a");
    if (lf) {
      fprintf(lf, "process %d also uses CUDA; only the first CUDA process of the command is profiled\n",
              (int)getpid());
      fclose(lf);
    }
    return false;
  }
  std::string pid = std::to_string(getpid()) + "\n";
  if (write(fd, pid.data(), pid.size()) < 0) {
  }
  close(fd);
  enabled_ = true;
  mkdir((run_dir_ + "/modules").c_str(), 0755);
  log_ = fopen((run_dir_ + "/collector.log").c_str(), "a");
  log("reuselens collector %s, pid %d, patch %s, buffers %u x %llu bytes, traces %s", kToolVersion, (int)getpid(),
      patch_path_.c_str(), nbuf_, (unsigned long long)buffer_bytes_, write_traces_ ? "on" : "off");
  // The launcher sets SANITIZER_DISABLE_PARALLEL_LAUNCHES=1 (docs/collector.md, "Multi-stream applications");
  // without it an app with user streams can block forever in the first patching. Say which mode this run had.
  const std::string serial = getenv_str("SANITIZER_DISABLE_PARALLEL_LAUNCHES");
  log("patching %s; Sanitizer parallel launches %s, CUDA_MODULE_LOADING=%s",
      lazy_patch_ ? "at the first instrumented launch" : "at MODULE_LOADED",
      serial == "1" ? "disabled" : "enabled (multi-stream apps may hang)",
      getenv_str("CUDA_MODULE_LOADING").empty() ? "(default)" : getenv_str("CUDA_MODULE_LOADING").c_str());
  if (access(patch_path_.c_str(), R_OK) != 0) {
    error("device patch " + patch_path_ + " not found; rebuild the collector with nvcc available");
    fault_ = true;
    fault_reason_ = "device patch missing";
  }
  if (write_traces_) sinks_.push_back(std::make_unique<TraceFileSink>(run_dir_));
  if (auto e = make_engine_sink()) {
    engine_ = true;
    // The engine runs behind a queue (REUSELENS_ENGINE_QUEUE_BYTES, default 1 GiB; 0 = in the drain thread):
    // a full buffer goes back to the GPU once copied, not once analysed (docs/collector.md, Overhead).
    std::string q = getenv_str("REUSELENS_ENGINE_QUEUE_BYTES");
    uint64_t limit = q.empty() ? (1ull << 30) : strtoull(q.c_str(), nullptr, 10);
    // Cores that share each buffer's copy into the queue (REUSELENS_QUEUE_COPY_THREADS, 1..16).
    std::string ct = getenv_str("REUSELENS_QUEUE_COPY_THREADS");
    // Default: a quarter of the cores, at most 4 (on the H200 host 1 -> 4 threads took matmul_256's kernel time
    // from 77-89 ms to 45-50 ms; 8 gained little more).
    unsigned copy_threads = std::clamp(std::thread::hardware_concurrency() / 4, 1u, 4u);
    if (!ct.empty()) copy_threads = (unsigned)std::clamp(atoi(ct.c_str()), 1, 16);
    sinks_.push_back(limit ? make_queued_sink(std::move(e), limit, copy_threads) : std::move(e));
    if (limit) log("online analysis behind a queue of %llu bytes, %u copy threads", (unsigned long long)limit, copy_threads);
    else log("online analysis in the drain thread (no queue)");
  }
  drain_thread_ = std::thread([this] { drain_loop(); });
  {
    std::ifstream v("/proc/driver/nvidia/version");
    std::string line;
    if (std::getline(v, line)) {
      std::smatch m;
      if (std::regex_search(line, m, std::regex("Kernel Module\\s+(?:for \\S+\\s+)?([0-9]+\\.[0-9.]+)")) ||
          std::regex_search(line, m, std::regex("([0-9]{3}\\.[0-9]+(?:\\.[0-9]+)?)")))
        driver_ = m[1];
    }
  }
  write_run_json(false);
  return true;
}

void Tool::callback(Sanitizer_CallbackDomain domain, Sanitizer_CallbackId cbid, const void* data) {
  if (exited_) return;
  if (debug_ && log_) {
    const bool api = domain == SANITIZER_CB_DOMAIN_RUNTIME_API || domain == SANITIZER_CB_DOMAIN_DRIVER_API;
    log("callback domain %d cbid %d%s", (int)domain, (int)cbid,
        api ? (static_cast<const Sanitizer_CallbackData*>(data)->callbackSite == SANITIZER_API_ENTER ? " enter"
                                                                                                    : " exit")
            : "");
  }
  if (domain == SANITIZER_CB_DOMAIN_RESOURCE) {
    switch (cbid) {
      case SANITIZER_CBID_RESOURCE_CONTEXT_CREATION_FINISHED: {
        auto* cd = static_cast<const Sanitizer_ResourceContextData*>(data);
        std::lock_guard<std::recursive_mutex> g(mu_);
        if (!claim()) return;
        on_context_created(cd->context, cd->device);
        return;
      }
      case SANITIZER_CBID_RESOURCE_MODULE_LOADED: {
        std::lock_guard<std::recursive_mutex> g(mu_);
        if (!claim()) return;
        on_module_loaded(static_cast<const Sanitizer_ResourceModuleData*>(data));
        return;
      }
      case SANITIZER_CBID_RESOURCE_MODULE_UNLOAD_STARTING: {
        auto* md = static_cast<const Sanitizer_ResourceModuleData*>(data);
        std::lock_guard<std::recursive_mutex> g(mu_);
        if (!enabled_) return;
        auto it = modules_.find(md->module);
        if (it != modules_.end()) {
          if (it->second.patched) check(sanitizerUnpatchModule(md->module), "sanitizerUnpatchModule");
          modules_.erase(it);
          rebuild_ranges();
        }
        return;
      }
      case SANITIZER_CBID_RESOURCE_DEVICE_MEMORY_ALLOC:
      case SANITIZER_CBID_RESOURCE_MEMORY_ALLOC_ASYNC: {
        auto* m = static_cast<const Sanitizer_ResourceMemoryData*>(data);
        std::lock_guard<std::recursive_mutex> g(mu_);
        if (!enabled_ || in_tool_alloc_ || m->size == 0 || (m->flags & SANITIZER_MEMORY_FLAG_CG_RUNTIME)) return;
        AllocEntry a{m->address, m->size, cbid == SANITIZER_CBID_RESOURCE_MEMORY_ALLOC_ASYNC ? "async" : "device",
                     launch_count_, false, 0};
        if (m->flags & SANITIZER_MEMORY_FLAG_MANAGED) a.kind = "managed";
        live_allocs_[m->address] = allocs_.size();
        allocs_.push_back(a);
        for (auto& s : sinks_) s->add_allocation(m->address, m->size);
        return;
      }
      case SANITIZER_CBID_RESOURCE_DEVICE_MEMORY_FREE:
      case SANITIZER_CBID_RESOURCE_MEMORY_FREE_ASYNC: {
        auto* m = static_cast<const Sanitizer_ResourceMemoryData*>(data);
        std::lock_guard<std::recursive_mutex> g(mu_);
        if (!enabled_) return;
        auto it = live_allocs_.find(m->address);
        if (it == live_allocs_.end()) return;
        allocs_[it->second].freed = true;
        allocs_[it->second].freed_after_launch = launch_count_;
        live_allocs_.erase(it);
        for (auto& s : sinks_) s->free_allocation(m->address);
        return;
      }
      default:
        return;
    }
  }
  if (domain == SANITIZER_CB_DOMAIN_RUNTIME_API || domain == SANITIZER_CB_DOMAIN_DRIVER_API) {
    auto* cd = static_cast<const Sanitizer_CallbackData*>(data);
    if (cd->callbackSite != SANITIZER_API_ENTER) {
      t_pending_smem = -1;
      return;
    }
    const void* p = cd->functionParams;
    if (p == nullptr) return;
    if (domain == SANITIZER_CB_DOMAIN_RUNTIME_API) {
      if (cbid == SANITIZER_CBID_RUNTIME_API_cudaLaunchKernel || cbid == SANITIZER_CBID_RUNTIME_API_cudaLaunchKernel_ptsz)
        t_pending_smem = (int64_t) static_cast<const cudaLaunchKernel_v7000_params*>(p)->sharedMem;
      else if (auto* c = static_cast<const cudaLaunchKernelExC_v11060_params*>(p)->config)
        t_pending_smem = (int64_t)c->dynamicSmemBytes;
    } else {
      if (cbid == SANITIZER_CBID_DRIVER_API_cuLaunchKernel || cbid == SANITIZER_CBID_DRIVER_API_cuLaunchKernel_ptsz)
        t_pending_smem = static_cast<const cuLaunchKernel_params*>(p)->sharedMemBytes;
      else if (auto* c = static_cast<const cuLaunchKernelEx_params*>(p)->config)
        t_pending_smem = c->sharedMemBytes;
    }
    return;
  }
  if (domain == SANITIZER_CB_DOMAIN_LAUNCH) {
    auto* ld = static_cast<const Sanitizer_LaunchData*>(data);
    if (cbid == SANITIZER_CBID_LAUNCH_BEGIN) on_launch_begin(ld);
    else if (cbid == SANITIZER_CBID_LAUNCH_END) on_launch_end(ld);
  }
}

void Tool::on_context_created(CUcontext ctx, CUdevice dev) {
  ContextState& cs = contexts_[ctx];
  if (cs.ready) return;
  // Device name and compute capability through the driver the application already loaded.
  if (gpu_name_.empty()) {
    void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!h) h = dlopen("libcuda.so.1", RTLD_NOW);
    if (h) {
      using NameFn = CUresult (*)(char*, int, CUdevice);
      using AttrFn = CUresult (*)(int*, CUdevice_attribute, CUdevice);
      auto get_name = reinterpret_cast<NameFn>(dlsym(h, "cuDeviceGetName"));
      auto get_attr = reinterpret_cast<AttrFn>(dlsym(h, "cuDeviceGetAttribute"));
      char name[256] = {0};
      if (get_name && get_name(name, sizeof name, dev) == CUDA_SUCCESS) gpu_name_ = name;
      int major = 0, minor = 0;
      if (get_attr && get_attr(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) == CUDA_SUCCESS &&
          get_attr(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev) == CUDA_SUCCESS)
        gpu_arch_ = "sm_" + std::to_string(major * 10 + minor);
    }
  }
  // Buffers are made here, not inside a launch callback (creating resources lazily in LAUNCH_END can
  // deadlock the driver: compute-sanitizer-samples#16).
  cs.nbuf = nbuf_;
  cs.capacity = std::max<uint64_t>(kMinBufferRecords, buffer_bytes_ / sizeof(RlRecord));
  in_tool_alloc_ = true;
  bool ok = check(sanitizerAlloc(ctx, reinterpret_cast<void**>(&cs.d_state), sizeof(RlDeviceState)),
                  "sanitizerAlloc(state)", true) &&
            check(sanitizerAlloc(ctx, reinterpret_cast<void**>(&cs.d_disabled), sizeof(RlDeviceState)),
                  "sanitizerAlloc(disabled state)", true) &&
            check(sanitizerAllocHost(ctx, reinterpret_cast<void**>(&cs.h_stage), sizeof(RlDeviceState)),
                  "sanitizerAllocHost(staging)", true) &&
            check(sanitizerAllocHost(ctx, reinterpret_cast<void**>(&cs.buffers),
                                     cs.capacity * cs.nbuf * sizeof(RlRecord)),
                  "sanitizerAllocHost(record buffers)", true) &&
            check(sanitizerAllocHost(ctx, reinterpret_cast<void**>(&cs.host_allowed), 2 * RL_MAX_BUFFERS * 8),
                  "sanitizerAllocHost(flags)", true);
  in_tool_alloc_ = false;
  if (!ok) return;
  cs.host_ready = cs.host_allowed + RL_MAX_BUFFERS;
  memset(cs.h_stage, 0, sizeof(RlDeviceState));
  // The disabled state: a patched kernel launched outside the filter returns from every callback at once.
  ok = check(sanitizerMemset(cs.d_disabled, 0, sizeof(RlDeviceState), nullptr), "sanitizerMemset(disabled)", true);
  cs.ready = ok;
  log("context %p: device %d (%s %s), %u buffers of %llu records", (void*)ctx, (int)dev, gpu_name_.c_str(),
      gpu_arch_.c_str(), cs.nbuf, (unsigned long long)cs.capacity);
  write_run_json(false);
}

void Tool::on_module_loaded(const Sanitizer_ResourceModuleData* md) {
  if (md->pCubin == nullptr || md->cubinSize == 0) {
    error("module without CUBIN image loaded; its kernels cannot be mapped to source");
    return;
  }
  std::string sha = sha256_hex(md->pCubin, md->cubinSize);
  ModuleEntry me;
  me.sha = sha;
  me.ctx = md->context;
  CubinInfo info;
  std::string perr;
  if (!parse_cubin(md->pCubin, md->cubinSize, &info, &perr)) {
    error("module " + sha.substr(0, 12) + ": " + perr);
  }
  me.sm = info.sm;
  me.static_shared = info.static_shared;
  if (!saved_modules_.count(sha)) {
    std::string path = run_dir_ + "/modules/" + sha + ".cubin";
    std::string werr;
    if (!write_file_atomic(path, std::string(md->pCubin, md->cubinSize), &werr)) error(werr);
    saved_modules_.insert(sha);
    module_list_.push_back({sha, info.sm});
  }
  for (const CubinFunction& f : info.functions) {
    // Functions of a module loaded twice (same sha) keep their ids.
    uint32_t id = UINT32_MAX;
    for (const FunctionEntry& e : functions_)
      if (e.module == sha && e.name == f.name) { id = e.id; break; }
    if (id == UINT32_MAX) {
      id = (uint32_t)functions_.size();
      functions_.push_back(FunctionEntry{id, sha, f.name, f.value, f.size, f.section, false, f.global});
    }
    me.functions.push_back(id);
    me.by_name[f.name] = id;
  }
  log("module %s loaded: %zu bytes, sm_%u, %zu functions", sha.substr(0, 12).c_str(), md->cubinSize, info.sm,
      info.functions.size());
  ModuleEntry& stored = modules_[md->module] = std::move(me);
  // REUSELENS_EAGER_PATCH=1: patch now, inside MODULE_LOADED (as NVIDIA's samples do); launches outside the
  // kernel filter then run with callbacks that return at once.
  if (!lazy_patch_ && !fault_) {
    auto c = contexts_.find(md->context);
    if (c != contexts_.end() && c->second.ready) patch_module(md->module, stored);
  }
  maybe_write_run_json();
}

bool Tool::select_launch(const std::string& mangled) {
  bool by_name = true;
  if (has_regex_ || !names_.empty()) {
    std::string dm = demangle(mangled);
    by_name = false;
    if (has_regex_ && (std::regex_search(mangled, regex_) || std::regex_search(dm, regex_))) by_name = true;
    if (!names_.empty()) {
      std::string base = dm.substr(0, dm.find('('));
      if (names_.count(mangled) || names_.count(dm) || names_.count(base)) by_name = true;
    }
  }
  if (!by_name) return false;
  uint64_t k = matched_count_++;
  return k >= range_first_ && k < range_end_;
}

bool Tool::patch_module(CUmodule mod, ModuleEntry& me) {
  if (me.patched) return true;
  if (me.patch_failed) return false;
  ContextState& cs = contexts_[me.ctx];
  if (!cs.patches_loaded) {
    if (!check(sanitizerAddPatchesFromFile(patch_path_.c_str(), me.ctx), "sanitizerAddPatchesFromFile", true)) {
      me.patch_failed = true;
      return false;
    }
    cs.patches_loaded = true;
  }
  struct P { Sanitizer_InstructionId id; const char* cb; bool required; };
  static const P points[] = {
      {SANITIZER_INSTRUCTION_GLOBAL_MEMORY_ACCESS, "rl_global", true},
      {SANITIZER_INSTRUCTION_SHARED_MEMORY_ACCESS, "rl_shared", true},
      {SANITIZER_INSTRUCTION_LOCAL_MEMORY_ACCESS, "rl_local", true},
      {SANITIZER_INSTRUCTION_MEMCPY_ASYNC, "rl_memcpy_async", true},
      {SANITIZER_INSTRUCTION_BARRIER, "rl_barrier", true},
      {SANITIZER_INSTRUCTION_SYNCWARP, "rl_syncwarp", true},
      {SANITIZER_INSTRUCTION_CUDA_BARRIER, "rl_cuda_barrier", true},
      {SANITIZER_INSTRUCTION_BLOCK_EXIT, "rl_block_exit", true},
      {SANITIZER_INSTRUCTION_MATRIX_MEMORY_ACCESS, "rl_matrix", false},
      {SANITIZER_INSTRUCTION_SET_SHARED_MEMORY_SIZE, "rl_smem_size", false},
      {SANITIZER_INSTRUCTION_BULK_COPY_GLOBAL_TO_SHARED, "rl_bulk_g2s", false},
      {SANITIZER_INSTRUCTION_BULK_COPY_SHARED_TO_GLOBAL, "rl_bulk_s2g", false},
  };
  bool ok = true;
  for (const P& p : points) {
    SanitizerResult r = sanitizerPatchInstructions(p.id, mod, p.cb);
    if (r != SANITIZER_SUCCESS) {
      std::string what = std::string("sanitizerPatchInstructions(") + p.cb + ")";
      if (p.required) ok = check(r, what.c_str(), true) && ok;
      else check(r, what.c_str());
    }
  }
  if (ok) ok = check(sanitizerPatchModule(mod), "sanitizerPatchModule", true);
  me.patched = ok;
  me.patch_failed = !ok;
  log("module %s %s", me.sha.substr(0, 12).c_str(), ok ? "patched" : "could not be patched");
  return ok;
}

// Absolute addresses of the module's functions: sanitizerGetFunctionPcAndSize for each symbol; a symbol
// the API does not know (a local __device__ callee placed in its kernel's section) is placed from any
// resolved symbol of the same section, since a section is loaded contiguously.
void Tool::resolve_module(CUmodule mod, ModuleEntry& me) {
  bool changed = false;
  for (uint32_t id : me.functions) {
    const FunctionEntry& f = functions_[id];
    if (me.section_base.count(f.section)) continue;
    uint64_t pc = 0, size = 0;
    if (sanitizerGetFunctionPcAndSize(mod, f.name.c_str(), &pc, &size) == SANITIZER_SUCCESS && pc != 0) {
      me.section_base[f.section] = pc - f.value;
      changed = true;
    }
  }
  if (changed) rebuild_ranges();
}

void Tool::rebuild_ranges() {
  std::vector<Range> r;
  for (auto& [mod, me] : modules_) {
    for (uint32_t id : me.functions) {
      const FunctionEntry& f = functions_[id];
      auto it = me.section_base.find(f.section);
      if (it == me.section_base.end() || f.size == 0) continue;
      r.push_back(Range{it->second + f.value, it->second + f.value + f.size, id, f.value});
    }
  }
  std::sort(r.begin(), r.end(), [](const Range& a, const Range& b) {
    return a.start != b.start ? a.start < b.start : a.end > b.end;
  });
  std::lock_guard<std::mutex> g(dmu_);
  ranges_ = std::move(r);
}

void Tool::on_launch_begin(const Sanitizer_LaunchData* ld) {
  std::unique_lock<std::recursive_mutex> g(mu_);
  if (!claim()) return;
  uint64_t id = launch_count_++;
  auto mit = modules_.find(ld->module);
  std::string mangled = ld->functionName ? ld->functionName : "";
  bool select = mit != modules_.end() && !fault_ && select_launch(mangled);
  ContextState* cs = nullptr;
  auto cit = contexts_.find(ld->context);
  if (cit != contexts_.end() && cit->second.ready) cs = &cit->second;
  if (select && cs == nullptr) {
    error("launch " + std::to_string(id) + " of " + mangled + ": no collector buffers in its context");
    select = false;
  }
  if (mit != modules_.end() && select) {
    if (!patch_module(ld->module, mit->second)) select = false;
  }
  if (select) {
    // Instrumented launches run one at a time. Normally the previous one was finished by its LAUNCH_END;
    // if that callback never came (or came for another handle), finish it here rather than wait forever.
    while (true) {
      DrainJob* prev;
      {
        std::lock_guard<std::mutex> dg(dmu_);
        prev = job_;
      }
      if (prev == nullptr) break;
      if (!prev->finalizing) {
        log("launch %llu: finishing the previous instrumented launch (its LAUNCH_END was not seen)",
            (unsigned long long)id);
        finish_job(prev, g);
      } else {
        launch_cv_.wait(g);
      }
    }
  }
  uint32_t fid = UINT32_MAX;
  if (mit != modules_.end()) {
    ModuleEntry& me = mit->second;
    auto f = me.by_name.find(mangled);
    if (f == me.by_name.end()) {
      uint64_t pc = 0, size = 0;
      sanitizerGetFunctionPcAndSize(ld->module, mangled.c_str(), &pc, &size);
      fid = (uint32_t)functions_.size();
      functions_.push_back(FunctionEntry{fid, me.sha, mangled, 0, size, UINT32_MAX - fid, true, true});
      me.functions.push_back(fid);
      me.by_name[mangled] = fid;
      if (pc) me.section_base[UINT32_MAX - fid] = pc;
    } else {
      fid = f->second;
    }
    functions_[fid].kernel = true;
    if (me.patched) resolve_module(ld->module, me);
  }
  if (launches_.size() < kMaxLaunchEntries || select) {
    LaunchEntry e{};
    e.id = id;
    e.function_id = fid;
    e.kernel = mangled;
    e.module = mit != modules_.end() ? mit->second.sha : "";
    uint32_t gd[3] = {ld->gridDim_x, ld->gridDim_y, ld->gridDim_z};
    uint32_t bd[3] = {ld->blockDim_x, ld->blockDim_y, ld->blockDim_z};
    uint32_t cd[3] = {ld->clusterDim_x, ld->clusterDim_y, ld->clusterDim_z};
    memcpy(e.grid, gd, sizeof gd);
    memcpy(e.block, bd, sizeof bd);
    memcpy(e.cluster, cd, sizeof cd);
    e.stream = reinterpret_cast<uint64_t>(ld->stream);
    e.instrumented = select;
    e.dynamic_smem = t_pending_smem;
    e.status = select ? "incomplete" : "complete";
    if (mit != modules_.end()) {
      auto s = mit->second.static_shared.find(mangled);
      e.has_static_smem = true;
      e.static_smem = s == mit->second.static_shared.end() ? 0 : s->second;
    }
    launches_.push_back(e);
  }
  if (mit == modules_.end() || !mit->second.patched) {
    maybe_write_run_json();
    return;
  }
  if (!select) {
    check(sanitizerSetLaunchCallbackData(ld->hLaunch, ld->function, ld->hStream, cs ? cs->d_disabled : nullptr),
          "sanitizerSetLaunchCallbackData");
    maybe_write_run_json();
    return;
  }
  // Instrumented launch: instrumented launches run one at a time (the LAUNCH_END of this one waits for the
  // kernel and its records), so one device state per context suffices and records never mix launches.
  RlDeviceState* st = cs->h_stage;
  memset(st, 0, sizeof *st);
  st->enabled = 1;
  st->nbuf = cs->nbuf;
  st->capacity = cs->capacity;
  st->buffers = cs->buffers;
  st->host_allowed = cs->host_allowed;
  st->host_ready = cs->host_ready;
  for (uint32_t b = 0; b < cs->nbuf; ++b) {
    st->allowed_cache[b] = b;
    cs->host_allowed[b] = b;
    cs->host_ready[b] = 0;
  }
  bool ok = check(sanitizerMemcpyHostToDeviceAsync(cs->d_state, st, sizeof *st, ld->hStream),
                  "sanitizerMemcpyHostToDeviceAsync(state)") &&
            check(sanitizerSetLaunchCallbackData(ld->hLaunch, ld->function, ld->hStream, cs->d_state),
                  "sanitizerSetLaunchCallbackData");
  if (!ok) {
    launches_.back().instrumented = false;
    launches_.back().status = "incomplete";
    sanitizerSetLaunchCallbackData(ld->hLaunch, ld->function, ld->hStream, cs->d_disabled);
    return;
  }
  ++instrumented_;
  LaunchMeta meta;
  meta.id = id;
  meta.function_id = fid;
  meta.kernel = mangled;
  meta.module = launches_.back().module;
  memcpy(meta.grid, launches_.back().grid, sizeof meta.grid);
  memcpy(meta.block, launches_.back().block, sizeof meta.block);
  memcpy(meta.cluster, launches_.back().cluster, sizeof meta.cluster);
  meta.dynamic_shared_bytes = launches_.back().dynamic_smem;
  for (auto& s : sinks_) s->begin_launch(meta);
  launches_.back().has_trace = write_traces_;
  {
    std::lock_guard<std::mutex> dg(dmu_);
    job_ = new DrainJob();
    job_->cs = cs;
    job_->launch = ld->hLaunch;
    job_->function = ld->function;
    job_->stream = ld->stream;
    job_->hstream = ld->hStream;
    job_->entry = launches_.size() - 1;
  }
  dcv_.notify_all();
  if (debug_)
    log("launch %llu %s: instrumented, stream %p (api %p), hStream %p, hLaunch %p", (unsigned long long)id,
        mangled.c_str(), (void*)ld->stream, (void*)ld->apiStream, (void*)ld->hStream, (void*)ld->hLaunch);
  launches_.back().seconds = now_s();
  maybe_write_run_json();
}

void Tool::on_launch_end(const Sanitizer_LaunchData* ld) {
  std::unique_lock<std::recursive_mutex> g(mu_);
  if (!enabled_) return;
  DrainJob* job;
  {
    std::lock_guard<std::mutex> dg(dmu_);
    job = job_;
  }
  if (job == nullptr || job->finalizing) return;
  // Only the END of the instrumented launch in flight (same launch handle, or same function and stream).
  if (job->launch != ld->hLaunch && !(job->function == ld->function && job->stream == ld->stream)) {
    if (debug_)
      log("LAUNCH_END of another launch (%s) while %s is in flight", ld->functionName ? ld->functionName : "?",
          launches_[job->entry].kernel.c_str());
    return;
  }
  finish_job(job, g);
}

// Wait for the launch's kernel (without the tool lock: other threads may launch meanwhile), let the drain
// thread deliver its last records, check the counts and record the outcome.
void Tool::finish_job(DrainJob* job, std::unique_lock<std::recursive_mutex>& g) {
  job->finalizing = true;
  const size_t li = job->entry;
  const std::string kernel = launches_[li].kernel;
  ContextState* cs = job->cs;
  Sanitizer_StreamHandle hs = job->hstream;
  g.unlock();
  SanitizerResult r = sanitizerStreamSynchronize(hs);
  bool faulted = r != SANITIZER_SUCCESS;
  uint64_t total = 0, committed = 0;
  SanitizerResult rc = SANITIZER_SUCCESS;
  if (!faulted) {
    rc = sanitizerMemcpyDeviceToHost(cs->h_stage, cs->d_state, sizeof(RlDeviceState), hs);
    faulted = rc != SANITIZER_SUCCESS;
    if (!faulted) {
      total = cs->h_stage->head;
      for (uint32_t b = 0; b < cs->nbuf; ++b) committed += cs->h_stage->committed[b];
    }
  }
  {
    std::unique_lock<std::mutex> dg(dmu_);
    job->ended = true;
    job->faulted = faulted;
    job->total = total;
    dcv_.notify_all();
    dcv_.wait(dg, [&] { return job->done; });
  }
  g.lock();
  if (r != SANITIZER_SUCCESS) check(r, ("kernel " + demangle(kernel) + " (sanitizerStreamSynchronize)").c_str());
  if (rc != SANITIZER_SUCCESS) check(rc, "sanitizerMemcpyDeviceToHost(state)");
  LaunchEntry& le = launches_[li];
  if (!faulted && committed != total)
    error("launch " + std::to_string(le.id) + ": " + std::to_string(committed) + " records committed of " +
          std::to_string(total) + " reserved");
  if (!faulted) le.smem = cs->h_stage->smem_size;
  bool complete = !faulted && job->drained == total && committed == total;
  if (!faulted && job->drained != total)
    error("launch " + std::to_string(le.id) + ": drained " + std::to_string(job->drained) + " records of " +
          std::to_string(total));
  for (auto& s : sinks_) {
    s->end_launch(complete);
    if (!s->error.empty()) {
      error(std::string(s->name()) + ": " + s->error);
      s->error.clear();
    }
  }
  records_total_ += job->drained;
  unresolved_total_ += job->unresolved;
  le.records = job->drained;
  le.flushes = job->flushes;
  le.status = faulted ? "faulted" : (complete ? "complete" : "incomplete");
  le.seconds = now_s() - le.seconds;
  // Where the drain thread's time went: a GPU that waits for full buffers waits for this.
  log("launch %llu: %llu records in %llu flushes, %.3f s; drain thread: resolving PCs %.3f s, sinks %.3f s",
      (unsigned long long)le.id, (unsigned long long)job->drained, (unsigned long long)job->flushes, le.seconds,
      job->resolve_s, job->sinks_s);
  if (faulted && !fault_) {
    fault_ = true;
    fault_reason_ = "kernel fault in " + demangle(kernel);
  }
  {
    std::lock_guard<std::mutex> dg(dmu_);
    job_ = nullptr;
  }
  delete job;
  launch_cv_.notify_all();
  if (faulted) write_run_json(false);
  else maybe_write_run_json();
}

void Tool::resolve_records(RlRecord* r, size_t n, DrainJob& job) {
  // Caller holds dmu_ (ranges_ is replaced only under it).
  uint64_t last_start = 1, last_end = 0, last_value = 0;
  uint32_t last_fid = 0;
  for (size_t i = 0; i < n; ++i) {
    if (r[i].function_id != RL_UNRESOLVED_FUNCTION) continue;
    uint64_t pc = r[i].pc;
    if (!(pc >= last_start && pc < last_end)) {
      auto it = std::upper_bound(ranges_.begin(), ranges_.end(), pc,
                                 [](uint64_t v, const Range& x) { return v < x.start; });
      bool found = false;
      // Nested ranges (a callee inside its kernel's symbol range): the innermost is the latest start.
      for (int k = 0; k < 64 && it != ranges_.begin(); ++k) {
        --it;
        if (pc >= it->start && pc < it->end) {
          found = true;
          break;
        }
      }
      if (!found) {
        ++job.unresolved;
        continue;
      }
      last_start = it->start;
      last_end = it->end;
      last_fid = it->fid;
      last_value = it->value;
      // A range that contains a nested one must not be cached for the whole span.
      auto nx = std::next(it);
      if (nx != ranges_.end() && nx->start < last_end) {
        if (pc < nx->start) last_end = nx->start;
      }
    }
    r[i].function_id = last_fid;
    r[i].pc = pc - last_start + last_value;
  }
}

void Tool::drain_generation(DrainJob& job, uint64_t gen, uint64_t count) {
  ContextState* cs = job.cs;
  uint32_t b = (uint32_t)(gen % cs->nbuf);
  RlRecord* recs = cs->buffers + (uint64_t)b * cs->capacity;
  std::atomic_thread_fence(std::memory_order_acquire);
  const double t0 = now_s();
  resolve_records(recs, count, job);
  const double t1 = now_s();
  for (auto& s : sinks_) s->consume(recs, count);
  job.resolve_s += t1 - t0;
  job.sinks_s += now_s() - t1;
  job.drained += count;
  ++job.flushes;
}

void Tool::drain_loop() {
  std::unique_lock<std::mutex> g(dmu_);
  while (!stop_) {
    dcv_.wait(g, [&] { return stop_ || (job_ != nullptr && !job_->done); });
    if (stop_) break;
    DrainJob& job = *job_;
    ContextState* cs = job.cs;
    unsigned sleep_us = 1;
    while (true) {
      uint32_t b = (uint32_t)(job.next_gen % cs->nbuf);
      volatile uint64_t* ready = cs->host_ready + b;
      if (*ready == job.next_gen + 1) {
        drain_generation(job, job.next_gen, cs->capacity);
        ++job.next_gen;
        // Hand the buffer back to the GPU for generation next_gen - 1 + nbuf.
        std::atomic_thread_fence(std::memory_order_release);
        *(volatile uint64_t*)(cs->host_allowed + b) = job.next_gen - 1 + cs->nbuf;
        sleep_us = 1;
        continue;
      }
      if (job.ended) {
        if (!job.faulted) {
          uint64_t full = job.total / cs->capacity;
          if (job.next_gen < full) continue;  // a full generation whose flag is still in flight
          uint64_t rest = job.total - job.next_gen * cs->capacity;
          if (rest > 0) drain_generation(job, job.next_gen, rest);
        }
        job.done = true;
        dcv_.notify_all();
        break;
      }
      g.unlock();
      std::this_thread::sleep_for(std::chrono::microseconds(sleep_us));
      if (sleep_us < 200) sleep_us *= 2;
      g.lock();
    }
  }
}

void Tool::maybe_write_run_json() {
  double t = now_s();
  if (t - last_write_ >= 0.25) write_run_json(false);
}

void Tool::write_run_json(bool final_write) {
  if (!enabled_) return;
  last_write_ = now_s();
  std::string err;
  if (!write_file_atomic(run_dir_ + "/run.json", run_json_text(final_write), &err)) {
    if (log_) log("error: %s", err.c_str());
  }
}

std::string Tool::run_json_text(bool final_write) {
  std::string o;
  o.reserve(4096 + launches_.size() * 300 + functions_.size() * 150);
  o += "{\n  \"format\": \"reuselens-run\", \"version\": 1,\n";
  o += "  \"tool\": {\"name\": \"reuselens\", \"version\": \"" + std::string(kToolVersion) + "\"},\n";
  // The launcher's members (command, cwd, start_time), verbatim.
  std::string h = header_json_;
  size_t a = h.find('{'), b = h.rfind('}');
  if (a != std::string::npos && b != std::string::npos && b > a) {
    std::string inner = h.substr(a + 1, b - a - 1);
    if (inner.find_first_not_of(" \n\t\r") != std::string::npos) o += "  " + inner + ",\n";
  }
  o += "  \"gpu\": {\"name\": " + json_str(gpu_name_) + ", \"arch\": " + json_str(gpu_arch_) +
       ", \"driver\": " + json_str(driver_) + "},\n";
  std::string status = final_write && !fault_ ? "complete" : "partial";
  std::string reason = fault_ ? fault_reason_ : (final_write ? "" : "running");
  o += "  \"status\": \"" + status + "\",\n";
  o += "  \"partial_reason\": " + (status == "complete" ? std::string("null") : json_str(reason)) + ",\n";
  o += "  \"exit_code\": null,\n";
  o += "  \"end_time\": " + (final_write ? json_str(utc_now()) : std::string("null")) + ",\n";
  o += "  \"kernel_filter\": {\"regex\": " + (regex_text_.empty() ? "null" : json_str(regex_text_)) +
       ", \"names_file\": " + (names_file_.empty() ? "null" : json_str(names_file_)) +
       ", \"launch_range\": [" + std::to_string(range_first_) + ", " +
       (range_end_set_ ? std::to_string(range_end_) : "null") + "]},\n";
  o += "  \"collector\": {\"pid\": " + std::to_string(getpid()) + ", \"finished\": " +
       (final_write ? "true" : "false") + ", \"buffers\": " + std::to_string(nbuf_) + ", \"buffer_bytes\": " +
       std::to_string(buffer_bytes_) + ", \"buffer_records\": " +
       std::to_string(std::max<uint64_t>(kMinBufferRecords, buffer_bytes_ / sizeof(RlRecord))) +
       ", \"patch\": " + json_str(patch_path_) + ", \"traces\": " + (write_traces_ ? "true" : "false") +
       ", \"online_analysis\": " + (engine_ ? "true" : "false") + ", \"launches_seen\": " +
       std::to_string(launch_count_) + ", \"launches_instrumented\": " + std::to_string(instrumented_) +
       ", \"records\": " + std::to_string(records_total_) + ", \"unresolved_pc_records\": " +
       std::to_string(unresolved_total_) + ", \"startup_seconds\": null},\n";
  o += "  \"modules\": [";
  for (size_t i = 0; i < module_list_.size(); ++i) {
    o += i ? ",\n    " : "\n    ";
    o += "{\"sha256\": \"" + module_list_[i].first + "\", \"path\": \"modules/" + module_list_[i].first +
         ".cubin\", \"arch\": " + (module_list_[i].second ? json_str("sm_" + std::to_string(module_list_[i].second))
                                                          : std::string("null")) + "}";
  }
  o += module_list_.empty() ? "],\n" : "\n  ],\n";
  o += "  \"functions\": [";
  for (size_t i = 0; i < functions_.size(); ++i) {
    const FunctionEntry& f = functions_[i];
    o += i ? ",\n    " : "\n    ";
    o += "{\"id\": " + std::to_string(f.id) + ", \"module\": \"" + f.module + "\", \"name\": " + json_str(f.name) +
         ", \"size\": " + std::to_string(f.size) + ", \"kernel\": " + (f.kernel ? "true" : "false") + "}";
  }
  o += functions_.empty() ? "],\n" : "\n  ],\n";
  o += "  \"launches\": [";
  for (size_t i = 0; i < launches_.size(); ++i) {
    const LaunchEntry& l = launches_[i];
    auto dim = [](const uint32_t* d) {
      return "[" + std::to_string(d[0]) + ", " + std::to_string(d[1]) + ", " + std::to_string(d[2]) + "]";
    };
    o += i ? ",\n    " : "\n    ";
    o += "{\"id\": " + std::to_string(l.id) + ", \"function_id\": " +
         (l.function_id == UINT32_MAX ? std::string("null") : std::to_string(l.function_id)) +
         ", \"kernel\": " + json_str(l.kernel) + ", \"module\": " + json_str(l.module) + ", \"grid\": " +
         dim(l.grid) + ", \"block\": " + dim(l.block) + ", \"cluster\": " + dim(l.cluster) +
         ", \"dynamic_shared_bytes\": " +
         (l.dynamic_smem >= 0 ? std::to_string(l.dynamic_smem)
          : l.instrumented && l.smem && l.has_static_smem && l.smem >= l.static_smem
              ? std::to_string(l.smem - l.static_smem)
              : std::string("null")) +
         ", \"shared_bytes\": " + (l.instrumented && l.smem ? std::to_string(l.smem) : std::string("null")) +
         ", \"static_shared_bytes\": " + json_u64_or_null(l.has_static_smem, l.static_smem) +
         ", \"stream\": " + std::to_string(l.stream) + ", \"instrumented\": " + (l.instrumented ? "true" : "false") +
         ", \"records\": " + std::to_string(l.records) + ", \"flushes\": " + std::to_string(l.flushes) +
         ", \"trace\": " + (l.has_trace ? json_str("traces/" + std::to_string(l.id) + ".rltrace") : "null") +
         ", \"status\": \"" + l.status + "\"" +
         (l.instrumented && l.status != "incomplete" ? ", \"seconds\": " + std::to_string(l.seconds) : "") + "}";
  }
  o += launches_.empty() ? "],\n" : "\n  ],\n";
  o += "  \"allocations\": [";
  for (size_t i = 0; i < allocs_.size() && i < 100000; ++i) {
    const AllocEntry& al = allocs_[i];
    o += i ? ",\n    " : "\n    ";
    o += "{\"address\": " + std::to_string(al.address) + ", \"size\": " + std::to_string(al.size) +
         ", \"kind\": \"" + al.kind + "\", \"allocated_before_launch\": " +
         std::to_string(al.allocated_before_launch) + ", \"freed_after_launch\": " +
         json_u64_or_null(al.freed, al.freed_after_launch) + "}";
  }
  o += allocs_.empty() ? "],\n" : "\n  ],\n";
  o += "  \"errors\": [";
  for (size_t i = 0; i < errors_.size(); ++i) o += (i ? ", " : "") + json_str(errors_[i]);
  o += "]\n}\n";
  return o;
}

void Tool::at_exit() {
  std::unique_lock<std::recursive_mutex> g(mu_);
  if (!enabled_ || exited_) return;
  DrainJob* open_job;
  {
    std::lock_guard<std::mutex> dg(dmu_);
    open_job = job_;
  }
  if (open_job != nullptr && !open_job->finalizing) {
    log("exit: finishing the instrumented launch still open");
    finish_job(open_job, g);
  }
  exited_ = true;
  {
    std::lock_guard<std::mutex> dg(dmu_);
    stop_ = true;
  }
  dcv_.notify_all();
  if (drain_thread_.joinable()) drain_thread_.join();
  for (auto& s : sinks_) {
    std::string err;
    if (!s->finish(run_dir_, &err)) error(std::string(s->name()) + ": " + err);
  }
  log("exit: %llu launches, %llu instrumented, %llu records", (unsigned long long)launch_count_,
      (unsigned long long)instrumented_, (unsigned long long)records_total_);
  write_run_json(true);
  if (log_) fclose(log_);
  log_ = nullptr;
}

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
