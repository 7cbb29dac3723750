// The Sanitizer callback entry and the resource events: context creation (the collector's buffers), module
// load (CUBIN saved, functions registered, eager patching) and unload, device memory allocation and free, and
// CUDA graphs' kernel nodes and executable graphs.
#include <algorithm>

#include "device_buffers.h"
#include "device_info.h"
#include "json.h"
#include "launch_api.h"
#include "module_patcher.h"
#include "pc_ranges.h"
#include "sha256.h"
#include "tool.h"

namespace rlc {

void Tool::callback(Sanitizer_CallbackDomain domain, Sanitizer_CallbackId cbid, const void* data) {
  if (exited_) return;
  if (cfg_.debug && diag_.log_open()) log_callback(domain, cbid, data);
  if (domain == SANITIZER_CB_DOMAIN_RESOURCE) {
    on_resource(cbid, data);
    return;
  }
  if (domain == SANITIZER_CB_DOMAIN_RUNTIME_API || domain == SANITIZER_CB_DOMAIN_DRIVER_API) {
    on_launch_api_call(domain, cbid, static_cast<const Sanitizer_CallbackData*>(data));
    return;
  }
  if (domain == SANITIZER_CB_DOMAIN_MEMCPY && cbid == SANITIZER_CBID_MEMCPY_STARTING) {
    on_memcpy(static_cast<const Sanitizer_MemcpyData*>(data));
    return;
  }
  if (domain == SANITIZER_CB_DOMAIN_MEMSET && cbid == SANITIZER_CBID_MEMSET_STARTING) {
    on_memset(static_cast<const Sanitizer_MemsetData*>(data));
    return;
  }
  if (domain == SANITIZER_CB_DOMAIN_LAUNCH) {
    auto* ld = static_cast<const Sanitizer_LaunchData*>(data);
    if (cbid == SANITIZER_CBID_LAUNCH_BEGIN)
      on_launch_begin(ld);
    else if (cbid == SANITIZER_CBID_LAUNCH_END)
      on_launch_end(ld);
    return;
  }
  if (domain == SANITIZER_CB_DOMAIN_GRAPHS) {
    if (cbid == SANITIZER_CBID_GRAPHS_NODE_LAUNCH_BEGIN || cbid == SANITIZER_CBID_GRAPHS_NODE_LAUNCH_END)
      on_graph_node(cbid, data);
    else
      on_graph_exec(cbid, data);
  }
}

// CUDA graphs (docs/collector.md, "CUDA graphs"). Their nodes come through the graphs domain, not the launch one: a
// kernel node is a launch like any other in run.json (its launch data has the same fields), marked as a graph node,
// and never instrumented. On the GPU machine (session 45, calls 4 and 5) all of a graph launch's node callbacks came
// before any of its kernels ran, the kernels then ran back to back with no callback between them, and the callback
// data the last node callback set served every kernel node of the launch: the device state, which holds one
// instrumented launch at a time, would mix the nodes' records. So every kernel node gets the disabled state (its
// callbacks return at once), and the report says how many kernel-node launches were left out. Before, the collector
// saw no graph launch at all (cuda-samples simpleCudaGraphs: a run with no launch). Nodes of a graph upload
// (cudaGraphUpload) run nothing; memcpy, memset and memory nodes are not listed (not checked on the GPU).
void Tool::on_graph_node(Sanitizer_CallbackId cbid, const void* data) {
  auto* nd = static_cast<const Sanitizer_GraphNodeLaunchData*>(data);
  if (nd->isGraphUpload || cbid != SANITIZER_CBID_GRAPHS_NODE_LAUNCH_BEGIN) return;
  if (nd->nodeType == CU_GRAPH_NODE_TYPE_KERNEL) on_launch_begin(&nd->launchData, LaunchKind::kGraphNode);
}

// A graph launch is counted (run.json's collector.graph_launches). An executable graph being made: its kernels must
// run patched code from their first launch or never, since a module patched after a graph that runs its kernels was
// instantiated left those kernels on an illegal instruction (session 45, call 4). So every module loaded so far
// that holds a function the kernel filter's names pass is patched now, whatever the lazy patching would have waited
// for; a failure here leaves that module unpatched (its launches not instrumented) without ending the run's
// instrumentation, as a launch's own patching does.
void Tool::on_graph_exec(Sanitizer_CallbackId cbid, const void* data) {
  std::unique_lock<std::recursive_mutex> g(mu_);
  if (!enabled_) return;
  if (cbid == SANITIZER_CBID_GRAPHS_LAUNCH_BEGIN) {
    run_.graph_launches += !static_cast<const Sanitizer_GraphLaunchData*>(data)->isGraphUpload;
    return;
  }
  if (cbid != SANITIZER_CBID_GRAPHS_GRAPHEXEC_CREATING || diag_.fault) return;
  size_t patched = 0;
  for (auto& [mod, me] : modules_) {
    if (me.patched || me.patch_failed || ready_context(me.ctx) == nullptr) continue;
    const bool wanted =
        std::any_of(me.functions.begin(), me.functions.end(), [&](uint32_t id) { return function_passes_filter(id); });
    if (wanted) patched += patch_module(mod, me, false);
  }
  if (patched) diag_.log("graph instantiated: %zu modules patched ahead of its launches", patched);
}

bool Tool::function_passes_filter(uint32_t id) {
  if (id >= filter_passes_.size()) filter_passes_.resize(run_.functions.size(), -1);
  int8_t& known = filter_passes_[id];
  if (known < 0) known = filter_.matches_name(run_.functions[id].name) ? 1 : 0;
  return known == 1;
}

void Tool::log_callback(Sanitizer_CallbackDomain domain, Sanitizer_CallbackId cbid, const void* data) {
  const bool api = domain == SANITIZER_CB_DOMAIN_RUNTIME_API || domain == SANITIZER_CB_DOMAIN_DRIVER_API;
  if (domain == SANITIZER_CB_DOMAIN_RESOURCE) {
    switch (cbid) {
      case SANITIZER_CBID_RESOURCE_DEVICE_MEMORY_ALLOC:
      case SANITIZER_CBID_RESOURCE_DEVICE_MEMORY_FREE:
      case SANITIZER_CBID_RESOURCE_MEMORY_ALLOC_ASYNC:
      case SANITIZER_CBID_RESOURCE_MEMORY_FREE_ASYNC: {
        auto* m = static_cast<const Sanitizer_ResourceMemoryData*>(data);
        diag_.log("callback resource cbid %d: address 0x%llx, %llu bytes, flags 0x%x, visibility %d", (int)cbid,
                  (unsigned long long)m->address, (unsigned long long)m->size, m->flags, (int)m->visibility);
        return;
      }
      case SANITIZER_CBID_RESOURCE_VIRTUAL_RESERVE:
      case SANITIZER_CBID_RESOURCE_VIRTUAL_RELEASE: {
        auto* v = static_cast<const Sanitizer_ResourceVirtualRange*>(data);
        diag_.log("callback resource cbid %d: virtual range 0x%llx, %llu bytes", (int)cbid,
                  (unsigned long long)v->address, (unsigned long long)v->size);
        return;
      }
      default:
        break;
    }
  }
  diag_.log(
      "callback domain %d cbid %d%s", (int)domain, (int)cbid,
      api ? (static_cast<const Sanitizer_CallbackData*>(data)->callbackSite == SANITIZER_API_ENTER ? " enter" : " exit")
          : "");
}

void Tool::on_resource(Sanitizer_CallbackId cbid, const void* data) {
  switch (cbid) {
    case SANITIZER_CBID_RESOURCE_CONTEXT_CREATION_FINISHED:
      return on_context_created(static_cast<const Sanitizer_ResourceContextData*>(data));
    case SANITIZER_CBID_RESOURCE_CONTEXT_DESTROY_STARTING:
      return on_context_destroy_starting(static_cast<const Sanitizer_ResourceContextData*>(data));
    case SANITIZER_CBID_RESOURCE_MODULE_LOADED:
      return on_module_loaded(static_cast<const Sanitizer_ResourceModuleData*>(data));
    case SANITIZER_CBID_RESOURCE_MODULE_UNLOAD_STARTING:
      return on_module_unload_starting(static_cast<const Sanitizer_ResourceModuleData*>(data));
    case SANITIZER_CBID_RESOURCE_DEVICE_MEMORY_ALLOC:
    case SANITIZER_CBID_RESOURCE_MEMORY_ALLOC_ASYNC:
      return on_memory_alloc(cbid, static_cast<const Sanitizer_ResourceMemoryData*>(data));
    case SANITIZER_CBID_RESOURCE_DEVICE_MEMORY_FREE:
    case SANITIZER_CBID_RESOURCE_MEMORY_FREE_ASYNC:
      return on_memory_free(static_cast<const Sanitizer_ResourceMemoryData*>(data));
    default:
      return;
  }
}

void Tool::on_context_created(const Sanitizer_ResourceContextData* cd) {
  std::lock_guard<std::recursive_mutex> g(mu_);
  if (!claim()) return;
  CUcontext ctx = cd->context;
  CUdevice dev = cd->device;
  ContextState& cs = contexts_[ctx];
  if (cs.ready) return;
  // Device name and compute capability through the driver the application already loaded.
  if (run_.gpu_name.empty()) query_device(dev, &run_.gpu_name, &run_.gpu_arch, &run_.gpu_l2_bytes);
  // Buffers are made here, not inside a launch callback (creating resources lazily in LAUNCH_END can
  // deadlock the driver: compute-sanitizer-samples#16).
  cs.nbuf = cfg_.nbuf;
  // Slots: a buffer holds buffer_records() records in the full form, and more packed ones.
  cs.capacity = cfg_.object_level ? 0 : cfg_.buffer_records() * RL_FULL_SLOTS;
  cs.restart_generations = true;  // a context made again at a destroyed one's address: its flags are new memory
  in_tool_alloc_ = true;
  bool ok = allocate_context_buffers(ctx, cs, diag_) && (!cfg_.object_level || allocate_object_buffers(ctx, cs, diag_));
  in_tool_alloc_ = false;
  if (!ok) return;
  cs.ready = clear_context_state(cs, diag_);
  if (cfg_.object_level)
    diag_.log("context %p: device %d (%s %s), object-level: a table of %u allocations", (void*)ctx, (int)dev,
              run_.gpu_name.c_str(), run_.gpu_arch.c_str(), kObjectTableCapacity);
  else
    diag_.log("context %p: device %d (%s %s), %u buffers of %llu slots (%llu full records)%s", (void*)ctx, (int)dev,
              run_.gpu_name.c_str(), run_.gpu_arch.c_str(), cs.nbuf, (unsigned long long)cs.capacity,
              (unsigned long long)(cs.capacity / RL_FULL_SLOTS), cfg_.packed ? ", records packed" : "");
  write_run_json(false);
}

// The context's buffers and device state go with it (cudaDeviceReset, cuCtxDestroy): a context created later,
// possibly at the same address, must get its own rather than write records into freed memory.
void Tool::on_context_destroy_starting(const Sanitizer_ResourceContextData* cd) {
  std::unique_lock<std::recursive_mutex> g(mu_);
  auto cit = contexts_.find(cd->context);
  if (!enabled_ || cit == contexts_.end() || !cit->second.ready) return;
  DrainJob* open_job = drainer_.current();
  if (open_job != nullptr && open_job->cs == &cit->second && !open_job->finalizing) {
    diag_.log("context %p destroyed: finishing its instrumented launch still open", (void*)cd->context);
    finish_job(open_job, g);
  }
  settle_ended_launch(true);  // its records drained before its buffers go
  cit->second.ready = false;
  cit->second.patches_loaded = false;
  // Its modules' patches go with it too: unpatching them at their unload, which comes after, would fail.
  for (auto& [mod, me] : modules_)
    if (me.ctx == cd->context) me.patched = false;
  diag_.log("context %p destroyed", (void*)cd->context);
}

void Tool::on_module_loaded(const Sanitizer_ResourceModuleData* md) {
  std::lock_guard<std::recursive_mutex> g(mu_);
  if (!claim()) return;
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
  save_module(sha, md, info.sm);
  register_functions(sha, info.functions, me);
  diag_.log("module %s loaded: %zu bytes, sm_%u, %zu functions", sha.substr(0, 12).c_str(), md->cubinSize, info.sm,
            info.functions.size());
  ModuleEntry& stored = modules_[md->module] = std::move(me);
  // REUSELENS_EAGER_PATCH=1: patch now, inside MODULE_LOADED (as NVIDIA's samples do); launches outside the
  // kernel filter then run with callbacks that return at once.
  if (!cfg_.lazy_patch && !diag_.fault) {
    auto c = contexts_.find(md->context);
    if (c != contexts_.end() && c->second.ready) patch_module(md->module, stored);
  }
  maybe_write_run_json();
}

// modules/<sha256>.cubin, once per distinct image.
void Tool::save_module(const std::string& sha, const Sanitizer_ResourceModuleData* md, uint32_t sm) {
  if (saved_modules_.count(sha)) return;
  std::string path = cfg_.run_dir + "/modules/" + sha + ".cubin";
  std::string werr;
  if (!write_file_atomic(path, std::string(md->pCubin, md->cubinSize), &werr)) error(werr);
  saved_modules_.insert(sha);
  run_.module_list.push_back({sha, sm});
}

void Tool::register_functions(const std::string& sha, const std::vector<CubinFunction>& functions, ModuleEntry& me) {
  for (const CubinFunction& f : functions) {
    // Functions of a module loaded twice (same sha) keep their ids.
    uint32_t id = UINT32_MAX;
    for (const FunctionEntry& e : run_.functions)
      if (e.module == sha && e.name == f.name) {
        id = e.id;
        break;
      }
    if (id == UINT32_MAX) {
      id = (uint32_t)run_.functions.size();
      run_.functions.push_back(FunctionEntry{id, sha, f.name, f.value, f.size, f.section, false, f.global});
    }
    me.functions.push_back(id);
    me.by_name[f.name] = id;
  }
}

void Tool::on_module_unload_starting(const Sanitizer_ResourceModuleData* md) {
  std::lock_guard<std::recursive_mutex> g(mu_);
  if (!enabled_) return;
  auto it = modules_.find(md->module);
  if (it == modules_.end()) return;
  if (it->second.patched) check(sanitizerUnpatchModule(md->module), "sanitizerUnpatchModule");
  modules_.erase(it);
  rebuild_ranges();
}

void Tool::on_memory_alloc(Sanitizer_CallbackId cbid, const Sanitizer_ResourceMemoryData* m) {
  std::lock_guard<std::recursive_mutex> g(mu_);
  if (!enabled_ || in_tool_alloc_ || m->size == 0 || (m->flags & SANITIZER_MEMORY_FLAG_CG_RUNTIME)) return;
  AllocEntry a{m->address,        m->size, cbid == SANITIZER_CBID_RESOURCE_MEMORY_ALLOC_ASYNC ? "async" : "device",
               run_.launch_count, false,   0};
  if (m->flags & SANITIZER_MEMORY_FLAG_MANAGED) a.kind = "managed";
  if (run_.allocs.size() < kMaxAllocationEntries) a.call_path = host_call_path(kMaxCallPathFrames);
  live_allocs_[m->address] = run_.allocs.size();
  ++objects_version_;
  add_memory_operation({MemoryOperation::kAlloc, 0, reinterpret_cast<uint64_t>(m->stream), run_.allocs.size()});
  run_.allocs.push_back(std::move(a));
  settle_ended_launch(true);  // the sinks get the last launch's records before the allocation, as it happened
  for (auto& s : sinks_) s->add_allocation(m->address, m->size);
}

void Tool::on_memory_free(const Sanitizer_ResourceMemoryData* m) {
  std::lock_guard<std::recursive_mutex> g(mu_);
  if (!enabled_) return;
  auto it = live_allocs_.find(m->address);
  if (it == live_allocs_.end()) return;
  if (cfg_.object_elements) collect_element_map(m->address, it->second, m->hStream);
  run_.allocs[it->second].freed = true;
  run_.allocs[it->second].freed_after_launch = run_.launch_count;
  add_memory_operation({MemoryOperation::kFree, 0, reinterpret_cast<uint64_t>(m->stream), it->second});
  live_allocs_.erase(it);
  ++objects_version_;
  settle_ended_launch(true);  // the sinks get the last launch's records before the free
  for (auto& s : sinks_) s->free_allocation(m->address);
}

// Copies and sets over device memory, for the memory analysis: which objects they read and write, and when.
void Tool::on_memcpy(const Sanitizer_MemcpyData* m) {
  std::lock_guard<std::recursive_mutex> g(mu_);
  if (!enabled_ || in_tool_alloc_) return;
  MemoryOperation op{MemoryOperation::kMemcpy, uint8_t(m->direction), reinterpret_cast<uint64_t>(m->apiStream)};
  op.src = m->srcAddress;
  op.dst = m->dstAddress;
  op.bytes = m->size ? m->size : m->width * std::max<uint64_t>(1, m->height) * std::max<uint64_t>(1, m->depth);
  add_memory_operation(op);
}
void Tool::on_memset(const Sanitizer_MemsetData* m) {
  std::lock_guard<std::recursive_mutex> g(mu_);
  if (!enabled_ || in_tool_alloc_) return;
  MemoryOperation op{MemoryOperation::kMemset, 0, reinterpret_cast<uint64_t>(m->stream)};
  op.dst = m->address;
  // A 2-D set writes `height` rows of `width` elements, `pitch` bytes apart: its bytes span up to the last row's end.
  const uint64_t row = m->width * std::max<uint32_t>(1, m->elementSize), rows = std::max<uint64_t>(1, m->height);
  op.bytes = rows > 1 ? m->pitch * (rows - 1) + row : row;
  add_memory_operation(op);
}
void Tool::add_memory_operation(const MemoryOperation& op) {
  if (run_.memory_ops.size() < kMaxMemoryOperations) {
    run_.memory_ops.push_back(op);
  } else if (!run_.memory_ops_truncated) {
    run_.memory_ops_truncated = true;
    diag_.log("memory operations: more than %zu, the rest are not listed in run.json", kMaxMemoryOperations);
  }
}

bool Tool::patch_module(CUmodule mod, ModuleEntry& me, bool fatal) {
  if (me.patched) return true;
  if (me.patch_failed) return false;
  return patch_module_instructions(mod, me, contexts_[me.ctx], cfg_.patch_path, cfg_.object_level, diag_, fatal);
}

// Absolute addresses of the module's functions (module_patcher.cpp), then the drain thread's PC ranges.
void Tool::resolve_module(CUmodule mod, ModuleEntry& me) {
  if (resolve_section_bases(mod, me, run_.functions)) rebuild_ranges();
}

void Tool::rebuild_ranges() {
  settle_ended_launch(true);  // the last launch's PCs resolved against the modules it ran with
  drainer_.set_ranges(function_ranges(modules_, run_.functions));
}

}  // namespace rlc
