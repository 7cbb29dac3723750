// What the collector keeps about the run: modules, functions, contexts, launches and allocations. Most of it
// ends in run.json (run_json.h); ContextState and ModuleEntry are the live Sanitizer-side state.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "device_state.h"
#include "memory_operations.h"
#include "reuselens/packed_records.h"

namespace rlc {

constexpr size_t kMaxLaunchEntries = 100000;      // run.json lists at most this many launches
constexpr size_t kMaxAllocationEntries = 100000;  // ... allocations
constexpr size_t kMaxMemoryOperations = 1000000;  // ... memory operations (then memory_operations_truncated)
constexpr unsigned kMaxCallPathFrames = 24;       // frames of an allocation's host call path

struct FunctionEntry {
  uint32_t id;
  std::string module;  // sha256
  std::string name;
  uint64_t value;  // offset in its section
  uint64_t size;
  uint32_t section;
  bool kernel;  // launched at least once
  bool global;
};

struct ModuleEntry {
  std::string sha;
  uint32_t sm = 0;
  CUcontext ctx = nullptr;
  bool patched = false;
  bool patch_failed = false;
  std::vector<uint32_t> functions;  // ids
  std::map<std::string, uint32_t> by_name;
  std::map<uint32_t, uint64_t> section_base;  // ELF section -> absolute address, once known
  std::map<std::string, uint64_t> static_shared;
};

struct ContextState {
  bool ready = false;
  bool patches_loaded = false;
  RlDeviceState* d_state = nullptr;      // device memory
  RlDeviceState* d_disabled = nullptr;   // device memory, enabled = 0
  RlDeviceState* h_stage = nullptr;      // pinned host staging for copies
  reuselens::RlSlot* buffers = nullptr;  // pinned host, a packed stream per generation
  uint64_t* host_allowed = nullptr;      // pinned host
  uint64_t* host_ready = nullptr;        // pinned host
  uint64_t capacity = 0;                 // slots per buffer; 0 in object-level mode (no record buffers)
  uint32_t nbuf = 2;
  uint64_t next_gen = 0;            // the generation the next instrumented launch starts at (drain.h)
  bool restart_generations = true;  // number them from 0 again, the flags reset (first launch, after a fault)
  // Object-level mode (object_launches.cpp): the live allocations' table and their marks, in device memory,
  // with pinned staging; `object_bases` are the table's allocations, in table order, as of `objects_version`.
  // The state and the marks are one block (kObjectStateBytes, then the marks), on the device and in the staging,
  // whose marks stay zero: one copy before each launch sets the state and zeroes the marks the launch can set.
  RlObjectState* d_object_state = nullptr;
  RlObjectState* h_object_state = nullptr;
  RlObjectEntry* d_objects = nullptr;
  RlObjectEntry* h_objects = nullptr;
  RlObjectMark* d_marks = nullptr;
  RlObjectMark* h_marks = nullptr;
  std::vector<uint64_t> object_bases;
  uint64_t objects_version = UINT64_MAX;
};

constexpr uint32_t kObjectTableCapacity = 131072;  // live allocations an object-level launch can attribute
constexpr size_t kObjectStateBytes = (sizeof(RlObjectState) + 15) / 16 * 16;  // the marks after it stay aligned

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
  bool graph_node = false;  // a kernel node of a CUDA graph launch (on_graph_node)
};

struct AllocEntry {
  uint64_t address, size;
  std::string kind;
  uint64_t allocated_before_launch;
  bool freed = false;
  uint64_t freed_after_launch = 0;
  std::vector<HostFrame> call_path;  // the host call that made it, innermost frame first
};

// The run as run.json describes it (besides the configuration and the diagnostics).
struct RunState {
  std::string gpu_name, gpu_arch, driver;
  uint64_t gpu_l2_bytes = 0;                            // 0: the driver did not say
  uint64_t graph_launches = 0, graph_kernel_nodes = 0;  // CUDA graph launches and their kernel nodes (on_graph_node)
  std::vector<std::pair<std::string, uint32_t>> module_list;  // sha, sm (run.json order)
  std::vector<FunctionEntry> functions;
  std::vector<LaunchEntry> launches;
  std::vector<AllocEntry> allocs;
  std::vector<MemoryOperation> memory_ops;  // at most kMaxMemoryOperations, in host issue order
  bool memory_ops_truncated = false;
  uint64_t launch_count = 0;  // every launch seen
  uint64_t instrumented = 0;
  uint64_t records_total = 0;
  uint64_t unresolved_total = 0;
  // What the app's launches waited for at their LAUNCH_END, summed: their kernels (the stream's synchronisation)
  // and then the drain of their last records into the sinks, which the next launch cannot overtake.
  double launch_sync_s = 0, launch_drain_wait_s = 0;
  bool engine = false;  // online analysis
};

}  // namespace rlc
