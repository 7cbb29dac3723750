// LAUNCH_BEGIN and LAUNCH_END: every launch is recorded for run.json; a selected one (kernel_filter.h) is
// instrumented, with the drain thread on its records, and finished when its kernel ends.
#include <cstring>

#include "device_buffers.h"
#include "launch_api.h"
#include "support.h"
#include "tool.h"

namespace rlc {

void Tool::on_launch_begin(const Sanitizer_LaunchData* ld, LaunchKind kind) {
  std::unique_lock<std::recursive_mutex> g(mu_);
  if (!claim()) return;
  const double began = now_s();
  uint64_t id = run_.launch_count++;
  if (kind == LaunchKind::kGraphNode) ++run_.graph_kernel_nodes;
  add_memory_operation({MemoryOperation::kKernel, 0, reinterpret_cast<uint64_t>(ld->stream), id});
  auto mit = modules_.find(ld->module);
  ModuleEntry* me = mit != modules_.end() ? &mit->second : nullptr;
  std::string mangled = ld->functionName ? ld->functionName : "";
  ContextState* cs = ready_context(ld->context);
  // A graph's kernel nodes are not offered to the filter: a launch range counts the launches it could take.
  bool select = kind == LaunchKind::kKernel && should_instrument(ld, id, mangled, me, cs);
  if (select && cfg_.object_level) finish_object_launch(g);  // one at a time; its LAUNCH_END was not seen
  if (select && !cfg_.object_level) {
    wait_for_previous_launch(id, g);
    settle_ended_launch(false);  // the one before, if the drain thread is done with it
  }
  uint32_t fid = me != nullptr ? launched_function_id(ld, mangled, *me) : UINT32_MAX;
  if (run_.launches.size() < kMaxLaunchEntries || select) {
    record_launch(ld, id, fid, mangled, me, select);
    run_.launches.back().graph_node = kind == LaunchKind::kGraphNode;
  }
  if (me != nullptr && !me->patched && !me->patch_failed && kind == LaunchKind::kGraphNode) {
    // A graph runs this module's kernels unpatched (it was loaded after the graph's instantiation patched the
    // others, on_graph_exec): patching it later would crash them, so it stays unpatched.
    me->patch_failed = true;
    diag_.log("module %s: left unpatched: a CUDA graph runs its kernels", me->sha.substr(0, 12).c_str());
  }
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
  run_.launches.back().has_trace = cfg_.write_traces;
  auto* job = new DrainJob();
  job->meta = launch_meta(id, fid, mangled);  // the drain thread tells the sinks, after the launches before it
  job->base_gen = cs->next_gen;
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

// Wait for the launch's kernel (without the tool lock: other threads may launch meanwhile) and hand its end to the
// drain thread, which drains its last records while the app goes on (drain.h); the launch ended before it is
// settled first. A faulted launch is settled at once, and its context's generations start again.
void Tool::finish_job(DrainJob* job, std::unique_lock<std::recursive_mutex>& g) {
  job->finalizing = true;
  const KernelEnd end = await_kernel(job, g);
  ContextState* cs = job->cs;
  // Where the next launch starts, before the job stops being current(): a launch begun on another thread meanwhile
  // (waiting in wait_for_previous_launch) must not start in this one's generations.
  cs->next_gen = (end.end_ticket + cs->capacity - 1) / cs->capacity;  // a fresh generation
  drainer_.end(job, end);
  settle_ended_launch(true);
  ended_ = job;
  if (end.faulted) {
    cs->restart_generations = true;
    settle_ended_launch(true);
  }
  launch_cv_.notify_all();
}

// The launch whose kernel ended last, once the drain thread is done with it (wait: until it is): its counts
// checked and its outcome recorded.
void Tool::settle_ended_launch(bool wait) {
  DrainJob* job = ended_;
  if (job == nullptr || (!wait && !drainer_.done(job))) return;
  ended_ = nullptr;
  job->end.drain_wait_s = drainer_.wait_done(job);
  record_outcome(job);
}

// Called and returns with the tool lock held; releases it meanwhile.
KernelEnd Tool::await_kernel(DrainJob* job, std::unique_lock<std::recursive_mutex>& g) {
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
    if (!end.faulted) {  // the counters go on from the launch's first generation (arm_device_state)
      const RlDeviceState* st = cs->h_stage;
      end.end_ticket = st->head;
      end.total = st->head - job->base_gen * cs->capacity;
      for (uint32_t b = 0; b < cs->nbuf; ++b)
        end.committed += st->committed[b] - committed_before(*cs, job->base_gen, b);
      end.waits = st->waits;
      end.polls = st->polls;
      end.smem = st->smem_size;
    }
  }
  g.lock();
  return end;
}

void Tool::record_outcome(DrainJob* job) {
  const KernelEnd& end = job->end;
  const std::string kernel = run_.launches[job->entry].kernel;
  if (end.sync != SANITIZER_SUCCESS)
    check(end.sync, ("kernel " + demangle(kernel) + " (sanitizerStreamSynchronize)").c_str());
  if (end.copy != SANITIZER_SUCCESS) check(end.copy, "sanitizerMemcpyDeviceToHost(state)");
  const bool faulted = end.faulted;
  const uint64_t total = end.total;
  LaunchEntry& le = run_.launches[job->entry];
  if (!faulted && end.committed != total)
    error("launch " + std::to_string(le.id) + ": " + std::to_string(end.committed) + " record slots committed of " +
          std::to_string(total) + " reserved");
  if (!faulted) le.smem = end.smem;
  if (job->malformed)
    error("launch " + std::to_string(le.id) + ": the device patch wrote a record the host cannot read (its form)");
  const bool complete = job->complete;
  if (!faulted && job->drained != total)
    error("launch " + std::to_string(le.id) + ": drained " + std::to_string(job->drained) + " record slots of " +
          std::to_string(total));
  report_sinks_at_end(*job);
  run_.records_total += job->records - job->companions;
  run_.unresolved_total += job->unresolved;
  le.records = job->records - job->companions;
  le.flushes = job->flushes;
  le.status = faulted ? "faulted" : (complete ? "complete" : "incomplete");
  le.seconds = (job->done_at > 0 ? job->done_at : now_s()) - le.seconds;  // begin to drained
  run_.launch_sync_s += end.sync_s;
  run_.launch_drain_wait_s += end.drain_wait_s;
  // Where the drain thread's time went, how often the GPU waited for a buffer the host had not handed back, and
  // what LAUNCH_END waited for after the kernel: the drain of the last records (docs/collector.md, "Where a
  // short app's time goes").
  diag_.log(
      "launch %llu: %llu records in %llu slots, %llu flushes, %.3f s; drain thread: resolving PCs %.3f s, sinks "
      "%.3f s; GPU: %llu tickets waited for a buffer, %llu polls of the host; end: kernel %.6f s, last records %.6f s "
      "(taken up after %.6f s, the last generation %.6f s)",
      (unsigned long long)le.id, (unsigned long long)le.records, (unsigned long long)job->drained,
      (unsigned long long)job->flushes, le.seconds, job->resolve_s, job->sinks_s, (unsigned long long)end.waits,
      (unsigned long long)end.polls, end.sync_s, end.drain_wait_s, job->taken_at - job->ended_at, job->last_s);
  if (faulted && !diag_.fault) {
    diag_.fault = true;
    diag_.fault_reason = "kernel fault in " + demangle(kernel);
  }
  delete job;
  if (faulted)
    write_run_json(false);
  else
    maybe_write_run_json();
}

// What the sinks said at the launch's end (the drain thread told them: Drainer::close_job).
void Tool::report_sinks_at_end(const DrainJob& job) {
  for (const SinkReport& r : job.reports) {
    if (!r.note.empty()) diag_.log_lines("sink " + r.sink + ": ", r.note);
    if (!r.error.empty()) error(r.sink + ": " + r.error);
  }
}

}  // namespace rlc
