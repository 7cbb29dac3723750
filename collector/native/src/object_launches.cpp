// Object-level mode (REUSELENS_OBJECT_LEVEL=1; docs/memory.md, "Object-level mode"): the memory analysis
// without an access trace. Before each selected launch the table of live allocations goes to the device (again
// only when an allocation came or went) and the marks are zeroed; the object patch (object_patch.cu) marks what
// the kernel touched; after the kernel the marks come back and become the launch's entry in object_touches.json,
// the same entry a traced run's engine writes. Launches run one at a time, as instrumented ones do.
#include <algorithm>
#include <cstring>
#include <tuple>

#include "json.h"
#include "support.h"
#include "tool.h"

namespace rlc {

void Tool::start_object_launch(const Sanitizer_LaunchData* ld, uint64_t id, ContextState* cs) {
  const double began = now_s();
  LaunchEntry& le = run_.launches.back();
  const bool table = upload_object_table(ld->context, *cs, ld->hStream);
  RlObjectState* st = cs->h_object_state;
  memset(st, 0, sizeof *st);
  st->enabled = 1;
  st->count = (uint32_t)cs->object_bases.size();
  st->objects = cs->d_objects;
  st->marks = cs->d_marks;
  // The state and, from the staging's zeros behind it, zeroed marks for the launch's objects: one copy.
  bool ok = table &&
            check(sanitizerMemcpyHostToDeviceAsync(cs->d_object_state, st,
                                                   kObjectStateBytes + st->count * sizeof(RlObjectMark), ld->hStream),
                  "sanitizerMemcpyHostToDeviceAsync(object state and marks)") &&
            check(sanitizerSetLaunchCallbackData(ld->hLaunch, ld->function, ld->hStream, cs->d_object_state),
                  "sanitizerSetLaunchCallbackData");
  if (!ok) {  // the launch runs unobserved: no entry in object_touches.json, so its touches read as unknown
    le.instrumented = false;
    le.status = "incomplete";
    sanitizerSetLaunchCallbackData(ld->hLaunch, ld->function, ld->hStream, cs->d_disabled);
    maybe_write_run_json();
    return;
  }
  ++run_.instrumented;
  ++object_times_.launches;
  object_times_.setup_s += now_s() - began;
  object_launch_ = ObjectLaunch{true, run_.launches.size() - 1, cs, ld->hLaunch, ld->function, ld->stream, ld->hStream};
  if (cfg_.debug) diag_.log("launch %llu: object-level, %u allocations", (unsigned long long)id, st->count);
  le.seconds = now_s();
  maybe_write_run_json();
}

// The live allocations by address, when they changed since the context's last upload. False (logged once) when
// they do not fit the table.
bool Tool::upload_object_table(CUcontext ctx, ContextState& cs, Sanitizer_StreamHandle stream) {
  if (cs.objects_version == objects_version_) return true;
  std::vector<std::tuple<uint64_t, uint64_t, size_t>> live;  // address, size, allocation index
  live.reserve(live_allocs_.size());
  for (const auto& [address, index] : live_allocs_) live.emplace_back(address, run_.allocs[index].size, index);
  if (live.size() > kObjectTableCapacity) {
    if (!object_table_overflow_logged_)
      error("object-level mode: " + std::to_string(live.size()) + " live allocations, more than the table's " +
            std::to_string(kObjectTableCapacity) + "; launches meanwhile have unknown touches");
    object_table_overflow_logged_ = true;
    cs.objects_version = UINT64_MAX;
    return false;
  }
  std::sort(live.begin(), live.end());
  cs.object_bases.clear();
  uint64_t map_budget = kBudgetUnknown;  // asked of the driver only when an object needs a new map
  for (size_t i = 0; i < live.size(); ++i) {
    const auto& [address, size, index] = live[i];
    uint32_t map_shift = 0;
    unsigned long long* map =
        cfg_.object_elements ? element_map(ctx, address, size, index, stream, &map_budget, &map_shift) : nullptr;
    // Granules as the engine's shadow counts them (shadow.h, RegionShadow): first = base / 4, last = (end - 1) / 4.
    cs.h_objects[i] =
        RlObjectEntry{address >> 2, (address + (size - 1)) >> 2, reuselens::object_slice_shift(size), map_shift, map};
    cs.object_bases.push_back(address);
  }
  if (!live.empty() &&
      !check(sanitizerMemcpyHostToDeviceAsync(cs.d_objects, cs.h_objects, live.size() * sizeof(RlObjectEntry), stream),
             "sanitizerMemcpyHostToDeviceAsync(object table)")) {
    cs.objects_version = UINT64_MAX;
    cs.object_bases.clear();
    return false;
  }
  cs.objects_version = objects_version_;
  return true;
}

// Finishes the launch in flight, if any, once no other thread is finishing one: waits for its kernel and reads its
// marks. Called and returns with the tool lock held; releases it meanwhile (another thread's API call may hold a
// driver lock the synchronisation needs), while other callers wait for object_finishing_ to clear.
void Tool::finish_object_launch(std::unique_lock<std::recursive_mutex>& g) {
  while (object_finishing_) launch_cv_.wait(g);
  ObjectLaunch ol = object_launch_;
  if (!ol.active) return;
  object_launch_.active = false;
  object_finishing_ = true;
  ContextState* cs = ol.cs;
  const size_t count = cs->object_bases.size();
  g.unlock();
  const double waited = now_s();
  // The marks' copy is ordered after the kernel on its stream and returns once done, so it is the wait: a separate
  // stream synchronisation before it was a second round trip per launch (the object-level collector cost pb_lu,
  // 1,022 launches, 78 ms on the H200 in session 11). A kernel fault fails the copy as the synchronisation did.
  const SanitizerResult done =
      count > 0 ? sanitizerMemcpyDeviceToHost(cs->h_marks, cs->d_marks, count * sizeof(RlObjectMark), ol.hstream)
                : sanitizerStreamSynchronize(ol.hstream);
  g.lock();
  object_times_.wait_s += now_s() - waited;
  object_finishing_ = false;
  launch_cv_.notify_all();
  LaunchEntry& le = run_.launches[ol.entry];
  const bool faulted = !check(
      done, ("kernel " + demangle(le.kernel) +
             (count > 0 ? " (sanitizerMemcpyDeviceToHost of its object marks)" : " (sanitizerStreamSynchronize)"))
                .c_str());
  if (!faulted) {
    reuselens::LaunchTouches touches{le.id, {}};
    for (size_t i = 0; i < count; ++i) {
      const RlObjectMark& m = cs->h_marks[i];
      if (m.access) touches.objects.push_back({cs->object_bases[i], uint8_t(m.access), m.slices});
    }
    object_touches_.push_back(std::move(touches));
  }
  le.status = faulted ? "faulted" : "complete";
  le.seconds = now_s() - le.seconds;
  if (faulted && !diag_.fault) {
    diag_.fault = true;
    diag_.fault_reason = "kernel fault in " + demangle(le.kernel);
  }
  if (faulted)
    write_run_json(false);
  else
    maybe_write_run_json();
}

void Tool::write_object_touches() {
  std::string err;
  if (!write_file_atomic(cfg_.run_dir + "/object_touches.json",
                         reuselens::object_touches_json(object_touches_, object_summaries_), &err))
    error(err);
}

}  // namespace rlc
