// LAUNCH_BEGIN and LAUNCH_END: every launch is recorded for run.json; a selected one (kernel_filter.h) is
// instrumented, with the drain thread on its records, and finished when its kernel ends.
#include <cstring>

#include "device_buffers.h"
#include "launch_api.h"
#include "support.h"
#include "tool.h"

namespace rlc {

struct Tool::KernelEnd {
  SanitizerResult sync = SANITIZER_SUCCESS;  // sanitizerStreamSynchronize
  SanitizerResult copy = SANITIZER_SUCCESS;  // the device state's copy back
  bool faulted = false;
  uint64_t total = 0, committed = 0;    // records reserved / committed, when not faulted
  uint64_t waits = 0, polls = 0;        // tickets that waited for the host; its flag's reads meanwhile
  double sync_s = 0, drain_wait_s = 0;  // LAUNCH_END's waits: for the kernel, then for the last records' drain
};

void Tool::on_launch_begin(const Sanitizer_LaunchData* ld) {
  std::unique_lock<std::recursive_mutex> g(mu_);
  if (!claim()) return;
  const double began = now_s();
  uint64_t id = run_.launch_count++;
  add_memory_operation({MemoryOperation::kKernel, 0, reinterpret_cast<uint64_t>(ld->stream), id});
  auto mit = modules_.find(ld->module);
  ModuleEntry* me = mit != modules_.end() ? &mit->second : nullptr;
  std::string mangled = ld->functionName ? ld->functionName : "";
  ContextState* cs = ready_context(ld->context);
  bool select = should_instrument(ld, id, mangled, me, cs);
  if (select && cfg_.object_level) finish_object_launch(g);  // one at a time; its LAUNCH_END was not seen
  if (select && !cfg_.object_level) wait_for_previous_launch(id, g);
  uint32_t fid = me != nullptr ? launched_function_id(ld, mangled, *me) : UINT32_MAX;
  if (run_.launches.size() < kMaxLaunchEntries || select) record_launch(ld, id, fid, mangled, me, select);
  if (me == nullptr || !me->patched) {
    maybe_write_run_json();
    return;
  }
  if (!select) {
    check(sanitizerSetLaunchCallbackData(ld->hLaunch, ld->function, ld->hStream, cs ? cs->d_disabled : nullptr),
          "sanitizerSetLaunchCallbackData");
    maybe_write_run_json();
    return;
  }
  if (cfg_.object_level) {
    start_object_launch(ld, id, cs);
    object_times_.begin_s += now_s() - began;
  } else
    start_instrumented_launch(ld, id, fid, mangled, cs);
}

ContextState* Tool::ready_context(CUcontext ctx) {
  auto cit = contexts_.find(ctx);
  return cit != contexts_.end() && cit->second.ready ? &cit->second : nullptr;
}

// Selected by the filter, with buffers in its context and its module patched.
bool Tool::should_instrument(const Sanitizer_LaunchData* ld, uint64_t id, const std::string& mangled, ModuleEntry* me,
                             ContextState* cs) {
  bool select = me != nullptr && !diag_.fault && filter_.select(mangled);
  if (select && cs == nullptr) {
    error("launch " + std::to_string(id) + " of " + mangled + ": no collector buffers in its context");
    select = false;
  }
  if (me != nullptr && select) {
    if (!patch_module(ld->module, *me)) select = false;
  }
  return select;
}

// Instrumented launches run one at a time. Normally the previous one was finished by its LAUNCH_END;
// if that callback never came (or came for another handle), finish it here rather than wait forever.
void Tool::wait_for_previous_launch(uint64_t id, std::unique_lock<std::recursive_mutex>& g) {
  while (true) {
    DrainJob* prev = drainer_.current();
    if (prev == nullptr) break;
    if (!prev->finalizing) {
      diag_.log("launch %llu: finishing the previous instrumented launch (its LAUNCH_END was not seen)",
                (unsigned long long)id);
      finish_job(prev, g);
    } else {
      launch_cv_.wait(g);
    }
  }
}

// The launched function's id; a kernel the CUBIN's symbols did not list gets an entry of its own.
uint32_t Tool::launched_function_id(const Sanitizer_LaunchData* ld, const std::string& mangled, ModuleEntry& me) {
  uint32_t fid;
  auto f = me.by_name.find(mangled);
  if (f == me.by_name.end()) {
    uint64_t pc = 0, size = 0;
    sanitizerGetFunctionPcAndSize(ld->module, mangled.c_str(), &pc, &size);
    fid = (uint32_t)run_.functions.size();
    run_.functions.push_back(FunctionEntry{fid, me.sha, mangled, 0, size, UINT32_MAX - fid, true, true});
    me.functions.push_back(fid);
    me.by_name[mangled] = fid;
    if (pc) me.section_base[UINT32_MAX - fid] = pc;
  } else {
    fid = f->second;
  }
  run_.functions[fid].kernel = true;
  if (me.patched) resolve_module(ld->module, me);
  return fid;
}

void Tool::record_launch(const Sanitizer_LaunchData* ld, uint64_t id, uint32_t fid, const std::string& mangled,
                         const ModuleEntry* me, bool select) {
  LaunchEntry e{};
  e.id = id;
  e.function_id = fid;
  e.kernel = mangled;
  e.module = me != nullptr ? me->sha : "";
  uint32_t gd[3] = {ld->gridDim_x, ld->gridDim_y, ld->gridDim_z};
  uint32_t bd[3] = {ld->blockDim_x, ld->blockDim_y, ld->blockDim_z};
  uint32_t cd[3] = {ld->clusterDim_x, ld->clusterDim_y, ld->clusterDim_z};
  memcpy(e.grid, gd, sizeof gd);
  memcpy(e.block, bd, sizeof bd);
  memcpy(e.cluster, cd, sizeof cd);
  e.stream = reinterpret_cast<uint64_t>(ld->stream);
  e.instrumented = select;
  e.dynamic_smem = pending_dynamic_smem();
  e.status = select ? "incomplete" : "complete";
  if (me != nullptr) {
    auto s = me->static_shared.find(mangled);
    e.has_static_smem = true;
    e.static_smem = s == me->static_shared.end() ? 0 : s->second;
  }
  run_.launches.push_back(e);
}

// Instrumented launches run one at a time (the LAUNCH_END of this one waits for the kernel and its records),
// so one device state per context suffices and records never mix launches.
void Tool::start_instrumented_launch(const Sanitizer_LaunchData* ld, uint64_t id, uint32_t fid,
                                     const std::string& mangled, ContextState* cs) {
  arm_device_state(*cs);
  cs->h_stage->values_on = cfg_.values && run_.instrumented % cfg_.values_every == 0;  // launch sampling
  cs->h_stage->packed = cfg_.packed;
  bool ok = check(sanitizerMemcpyHostToDeviceAsync(cs->d_state, cs->h_stage, sizeof(RlDeviceState), ld->hStream),
                  "sanitizerMemcpyHostToDeviceAsync(state)") &&
            check(sanitizerSetLaunchCallbackData(ld->hLaunch, ld->function, ld->hStream, cs->d_state),
                  "sanitizerSetLaunchCallbackData");
  if (!ok) {
    run_.launches.back().instrumented = false;
    run_.launches.back().status = "incomplete";
    sanitizerSetLaunchCallbackData(ld->hLaunch, ld->function, ld->hStream, cs->d_disabled);
    return;
  }
  ++run_.instrumented;
  LaunchMeta meta = launch_meta(id, fid, mangled);
  for (auto& s : sinks_) s->begin_launch(meta);
  run_.launches.back().has_trace = cfg_.write_traces;
  auto* job = new DrainJob();
  job->cs = cs;
  job->launch = ld->hLaunch;
  job->function = ld->function;
  job->stream = ld->stream;
  job->hstream = ld->hStream;
  job->entry = run_.launches.size() - 1;
  drainer_.publish(job);
  if (cfg_.debug)
    diag_.log("launch %llu %s: instrumented, stream %p (api %p), hStream %p, hLaunch %p", (unsigned long long)id,
              mangled.c_str(), (void*)ld->stream, (void*)ld->apiStream, (void*)ld->hStream, (void*)ld->hLaunch);
  run_.launches.back().seconds = now_s();
  maybe_write_run_json();
}

// What the sinks are told about the launch just recorded.
LaunchMeta Tool::launch_meta(uint64_t id, uint32_t fid, const std::string& mangled) const {
  const LaunchEntry& le = run_.launches.back();
  LaunchMeta meta;
  meta.id = id;
  meta.function_id = fid;
  meta.kernel = mangled;
  meta.module = le.module;
  memcpy(meta.grid, le.grid, sizeof meta.grid);
  memcpy(meta.block, le.block, sizeof meta.block);
  memcpy(meta.cluster, le.cluster, sizeof meta.cluster);
  meta.dynamic_shared_bytes = le.dynamic_smem;
  return meta;
}

void Tool::on_launch_end(const Sanitizer_LaunchData* ld) {
  std::unique_lock<std::recursive_mutex> g(mu_);
  if (!enabled_) return;
  if (cfg_.object_level) {
    const ObjectLaunch& ol = object_launch_;
    if (ol.active && (ol.launch == ld->hLaunch || (ol.function == ld->function && ol.stream == ld->stream)))
      finish_object_launch(g);
    return;
  }
  DrainJob* job = drainer_.current();
  if (job == nullptr || job->finalizing) return;
  // Only the END of the instrumented launch in flight (same launch handle, or same function and stream).
  if (job->launch != ld->hLaunch && !(job->function == ld->function && job->stream == ld->stream)) {
    if (cfg_.debug)
      diag_.log("LAUNCH_END of another launch (%s) while %s is in flight", ld->functionName ? ld->functionName : "?",
                run_.launches[job->entry].kernel.c_str());
    return;
  }
  finish_job(job, g);
}

// Wait for the launch's kernel (without the tool lock: other threads may launch meanwhile), let the drain
// thread deliver its last records, check the counts and record the outcome.
void Tool::finish_job(DrainJob* job, std::unique_lock<std::recursive_mutex>& g) {
  job->finalizing = true;
  const std::string kernel = run_.launches[job->entry].kernel;
  KernelEnd end = await_kernel(job, g);
  record_outcome(job, kernel, end);
}

// Called and returns with the tool lock held; releases it meanwhile.
Tool::KernelEnd Tool::await_kernel(DrainJob* job, std::unique_lock<std::recursive_mutex>& g) {
  ContextState* cs = job->cs;
  Sanitizer_StreamHandle hs = job->hstream;
  KernelEnd end;
  g.unlock();
  const double t0 = now_s();
  end.sync = sanitizerStreamSynchronize(hs);
  end.sync_s = now_s() - t0;
  end.faulted = end.sync != SANITIZER_SUCCESS;
  if (!end.faulted) {
    end.copy = sanitizerMemcpyDeviceToHost(cs->h_stage, cs->d_state, sizeof(RlDeviceState), hs);
    end.faulted = end.copy != SANITIZER_SUCCESS;
    if (!end.faulted) {
      end.total = cs->h_stage->head;
      for (uint32_t b = 0; b < cs->nbuf; ++b) end.committed += cs->h_stage->committed[b];
      end.waits = cs->h_stage->waits;
      end.polls = cs->h_stage->polls;
    }
  }
  const double t1 = now_s();
  drainer_.finish(job, end.faulted, end.total);
  end.drain_wait_s = now_s() - t1;
  g.lock();
  return end;
}

void Tool::record_outcome(DrainJob* job, const std::string& kernel, const KernelEnd& end) {
  if (end.sync != SANITIZER_SUCCESS)
    check(end.sync, ("kernel " + demangle(kernel) + " (sanitizerStreamSynchronize)").c_str());
  if (end.copy != SANITIZER_SUCCESS) check(end.copy, "sanitizerMemcpyDeviceToHost(state)");
  const bool faulted = end.faulted;
  const uint64_t total = end.total;
  LaunchEntry& le = run_.launches[job->entry];
  if (!faulted && end.committed != total)
    error("launch " + std::to_string(le.id) + ": " + std::to_string(end.committed) + " record slots committed of " +
          std::to_string(total) + " reserved");
  if (!faulted) le.smem = job->cs->h_stage->smem_size;
  if (job->malformed)
    error("launch " + std::to_string(le.id) + ": the device patch wrote a record the host cannot read (its form)");
  bool complete = !faulted && job->drained == total && end.committed == total && !job->malformed;
  if (!faulted && job->drained != total)
    error("launch " + std::to_string(le.id) + ": drained " + std::to_string(job->drained) + " record slots of " +
          std::to_string(total));
  end_launch_in_sinks(complete);
  run_.records_total += job->records - job->companions;
  run_.unresolved_total += job->unresolved;
  le.records = job->records - job->companions;
  le.flushes = job->flushes;
  le.status = faulted ? "faulted" : (complete ? "complete" : "incomplete");
  le.seconds = now_s() - le.seconds;
  run_.launch_sync_s += end.sync_s;
  run_.launch_drain_wait_s += end.drain_wait_s;
  // Where the drain thread's time went, how often the GPU waited for a buffer the host had not handed back, and
  // what LAUNCH_END waited for after the kernel: the drain of the last records (docs/collector.md, "Where a
  // short app's time goes").
  diag_.log(
      "launch %llu: %llu records in %llu slots, %llu flushes, %.3f s; drain thread: resolving PCs %.3f s, sinks "
      "%.3f s; GPU: %llu tickets waited for a buffer, %llu polls of the host; end: kernel %.6f s, last records %.6f s",
      (unsigned long long)le.id, (unsigned long long)le.records, (unsigned long long)job->drained,
      (unsigned long long)job->flushes, le.seconds, job->resolve_s, job->sinks_s, (unsigned long long)end.waits,
      (unsigned long long)end.polls, end.sync_s, end.drain_wait_s);
  if (faulted && !diag_.fault) {
    diag_.fault = true;
    diag_.fault_reason = "kernel fault in " + demangle(kernel);
  }
  drainer_.clear();
  delete job;
  launch_cv_.notify_all();
  if (faulted)
    write_run_json(false);
  else
    maybe_write_run_json();
}

void Tool::end_launch_in_sinks(bool complete) {
  for (auto& s : sinks_) {
    s->end_launch(complete);
    if (!s->launch_note.empty()) {
      diag_.log_lines(std::string("sink ") + s->name() + ": ", s->launch_note);
      s->launch_note.clear();
    }
    if (!s->error.empty()) {
      error(std::string(s->name()) + ": " + s->error);
      s->error.clear();
    }
  }
}

}  // namespace rlc
