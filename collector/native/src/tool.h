// The collector tool: owns the run (configuration, Sanitizer subscription, run state, drain thread) and
// handles each Sanitizer event. Its methods live by job: tool.cpp (start-up, the run directory, exit),
// resource_events.cpp (contexts, modules, memory) and launch_events.cpp (kernel launches).
#pragma once

#include <sanitizer.h>

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "config.h"
#include "cubin.h"
#include "diagnostics.h"
#include "drain.h"
#include "kernel_filter.h"
#include "reuselens/object_touches.h"
#include "run_state.h"
#include "sinks.h"

namespace rlc {

class Tool {
 public:
  Tool() : drainer_(sinks_) {}
  void init();
  void callback(Sanitizer_CallbackDomain domain, Sanitizer_CallbackId cbid, const void* data);
  void at_exit();

 private:
  // tool.cpp
  const char* subscribe(SanitizerResult* r);
  void report_config_errors(const std::vector<std::string>& config_errors, SanitizerResult r, const char* failed);
  bool claim();
  bool take_run_dir();
  void log_start();
  void open_sinks();
  void finish_sinks();
  void write_run_json(bool final_write);
  void maybe_write_run_json();

  // resource_events.cpp: one handler per resource callback
  void log_callback(Sanitizer_CallbackDomain domain, Sanitizer_CallbackId cbid, const void* data);
  void on_resource(Sanitizer_CallbackId cbid, const void* data);
  void on_context_created(const Sanitizer_ResourceContextData* cd);
  void on_context_destroy_starting(const Sanitizer_ResourceContextData* cd);
  void on_module_loaded(const Sanitizer_ResourceModuleData* md);
  void on_module_unload_starting(const Sanitizer_ResourceModuleData* md);
  void on_memory_alloc(Sanitizer_CallbackId cbid, const Sanitizer_ResourceMemoryData* m);
  void on_memory_free(const Sanitizer_ResourceMemoryData* m);
  void on_memcpy(const Sanitizer_MemcpyData* m);
  void on_memset(const Sanitizer_MemsetData* m);
  void add_memory_operation(const MemoryOperation& op);
  void save_module(const std::string& sha, const Sanitizer_ResourceModuleData* md, uint32_t sm);
  void register_functions(const std::string& sha, const std::vector<CubinFunction>& functions, ModuleEntry& me);
  bool patch_module(CUmodule mod, ModuleEntry& me, bool fatal = true);
  void resolve_module(CUmodule mod, ModuleEntry& me);
  void rebuild_ranges();

  // resource_events.cpp: CUDA graphs' nodes and executable graphs (docs/collector.md, "CUDA graphs")
  void on_graph_node(Sanitizer_CallbackId cbid, const void* data);
  void on_graph_exec(Sanitizer_CallbackId cbid, const void* data);

  // launch_events.cpp: LAUNCH_BEGIN / LAUNCH_END
  // How a launch came: a kernel launch, or a kernel node of a CUDA graph launch (on_graph_node: never instrumented).
  enum class LaunchKind { kKernel, kGraphNode };
  void on_launch_begin(const Sanitizer_LaunchData* ld, LaunchKind kind = LaunchKind::kKernel);
  void on_launch_end(const Sanitizer_LaunchData* ld);
  ContextState* ready_context(CUcontext ctx);
  bool should_instrument(const Sanitizer_LaunchData* ld, uint64_t id, const std::string& mangled, ModuleEntry* me,
                         ContextState* cs);
  void wait_for_previous_launch(uint64_t id, std::unique_lock<std::recursive_mutex>& g);
  uint32_t launched_function_id(const Sanitizer_LaunchData* ld, const std::string& mangled, ModuleEntry& me);
  void record_launch(const Sanitizer_LaunchData* ld, uint64_t id, uint32_t fid, const std::string& mangled,
                     const ModuleEntry* me, bool select);
  void start_instrumented_launch(const Sanitizer_LaunchData* ld, uint64_t id, uint32_t fid, const std::string& mangled,
                                 ContextState* cs);
  LaunchMeta launch_meta(uint64_t id, uint32_t fid, const std::string& mangled) const;
  void finish_job(DrainJob* job, std::unique_lock<std::recursive_mutex>& g);
  KernelEnd await_kernel(DrainJob* job, std::unique_lock<std::recursive_mutex>& g);
  void settle_ended_launch(bool wait);
  void record_outcome(DrainJob* job);
  void report_sinks_at_end(const DrainJob& job);

  // object_launches.cpp: object-level mode, one launch at a time (docs/memory.md, "Object-level mode")
  void start_object_launch(const Sanitizer_LaunchData* ld, uint64_t id, ContextState* cs);
  bool upload_object_table(CUcontext ctx, ContextState& cs, Sanitizer_StreamHandle stream);
  void finish_object_launch(std::unique_lock<std::recursive_mutex>& g);
  void write_object_touches();
  // element_maps.cpp: per-object maps on the GPU (docs/memory.md, "Element maps")
  unsigned long long* element_map(CUcontext ctx, uint64_t address, uint64_t size, size_t alloc_index,
                                  Sanitizer_StreamHandle stream, uint64_t* budget, uint32_t* shift);
  uint64_t element_map_budget();
  void collect_element_map(uint64_t address, size_t alloc_index, Sanitizer_StreamHandle stream);
  void collect_all_element_maps();

  // The run's diagnostics (collector.log through diag_.log).
  void error(const std::string& msg) { diag_.error(msg); }
  bool check(SanitizerResult r, const char* what, bool fatal_to_run = false) {
    return diag_.check(r, what, fatal_to_run);
  }

  Config cfg_;
  KernelFilter filter_;
  // The name filter's answer per function id (run_.functions), -1 not asked yet: a graph's instantiation asks it of
  // every function of every loaded module, again at each instantiation, and names a library holds by the
  // ten thousand must not crowd the launches' own cache in the filter (KernelFilter::select).
  std::vector<int8_t> filter_passes_;
  bool function_passes_filter(uint32_t id);
  Diagnostics diag_;
  RunState run_;
  bool enabled_ = false;  // configuration valid and this process owns the run directory
  bool claimed_tried_ = false;

  Sanitizer_SubscriberHandle sub_ = nullptr;
  std::recursive_mutex mu_;                // all tool state below; also serialises the patching API
  std::condition_variable_any launch_cv_;  // an instrumented launch waits for the previous one
  std::map<CUcontext, ContextState> contexts_;
  std::map<CUmodule, ModuleEntry> modules_;
  std::set<std::string> saved_modules_;
  std::unordered_map<uint64_t, size_t> live_allocs_;
  double last_write_ = 0;
  bool in_tool_alloc_ = false;
  std::vector<std::unique_ptr<RecordSink>> sinks_;
  Drainer drainer_;
  DrainJob* ended_ = nullptr;  // the launch whose kernel ended last, until settled (settle_ended_launch)
  bool exited_ = false;
  bool graphs_enabled_ = false;  // the graphs domain is on: CUDA graph nodes are seen (on_graph_node)

  // Object-level mode: the launch in flight, every finished launch's touches, and a count of allocation events
  // (the object table is uploaded again when it changed).
  struct ObjectLaunch {
    bool active = false;
    size_t entry = 0;  // index in RunState::launches
    ContextState* cs = nullptr;
    Sanitizer_LaunchHandle launch = nullptr;
    CUfunction function = nullptr;
    CUstream stream = nullptr;
    Sanitizer_StreamHandle hstream = nullptr;
  };
  ObjectLaunch object_launch_;
  std::vector<reuselens::LaunchTouches> object_touches_;
  uint64_t objects_version_ = 0;
  bool object_table_overflow_logged_ = false;
  bool object_finishing_ = false;  // a thread waits for a kernel and its marks, without the tool lock
  // Where object-level launches spend the app's time (collector.log's exit lines): the LAUNCH_BEGIN callbacks
  // (of which the state's set-up) and the waits for each kernel and its marks.
  struct ObjectLevelTimes {
    uint64_t launches = 0;
    double begin_s = 0, setup_s = 0, wait_s = 0;
  };
  ObjectLevelTimes object_times_;
  // Element maps by object address (null device pointer: the object got none), and the summaries of those read
  // back so far.
  struct ElementMap {
    CUcontext ctx = nullptr;
    unsigned long long* device = nullptr;
    uint64_t bytes = 0;
    uint32_t shift = 0;  // log2 granules per bit
    size_t alloc_index = 0;
  };
  std::unordered_map<uint64_t, ElementMap> element_maps_;
  std::vector<reuselens::ObjectSummary> object_summaries_;
  bool element_map_budget_logged_ = false;                       // cuMemGetInfo's failure, said once
  uint64_t element_maps_coarse_ = 0, element_maps_missing_ = 0;  // objects given a coarse map, or none
  static constexpr uint64_t kBudgetUnknown = UINT64_MAX;         // element_map(): the budget not asked for yet
};

Tool& tool();  // never destroyed: callbacks may arrive during process teardown

}  // namespace rlc
