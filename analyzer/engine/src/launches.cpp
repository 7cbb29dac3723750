// Launch bookkeeping: the checks of a new launch, launch generations, and the merge of a finished launch into
// the kernel's entry (and the entry's list of configurations).
#include "engine_impl.h"

#include <algorithm>
#include <cstdint>
#include <string>

namespace reuselens {

void Engine::Impl::begin_launch(const LaunchInfo& l) {
  if (open) throw EngineError("begin_launch() while launch " + std::to_string(launch.launch_id) + " is open");
  // Each dimension first: the product of three unchecked 32-bit dimensions can wrap into the valid range.
  uint64_t threads = 1;
  for (int d = 0; d < 3; ++d) threads *= std::min<uint64_t>(l.block[d], 1025);
  if (threads == 0 || threads > 1024) {
    throw EngineError("launch " + std::to_string(l.launch_id) + ": block of " + std::to_string(l.block[0]) + "x" +
                      std::to_string(l.block[1]) + "x" + std::to_string(l.block[2]) +
                      " threads (CUDA allows 1 to 1024 threads per block)");
  }
  if (gen + 1 >= kMaxGen) wrap_generations();
  ++gen;
  gen_kernel.push_back(l.kernel_function_id);
  launch = l;
  threads_per_block = uint32_t(threads);
  warps_per_block = uint32_t((threads + 31) / 32);
  open = true;
  launch_records = 0;
}
// 2^24 launches: forget every global entry (they could alias new generations). Cross-launch origins older
// than this point are lost; docs/engine.md says so.
void Engine::Impl::wrap_generations() {
  for (auto& r : regions) r->reset();
  for (auto& w : workers) w->fallback.clear();
  gen = 0;
  gen_kernel.assign(1, kNone);
}
void Engine::Impl::end_launch(bool complete) {
  if (!open) throw EngineError("end_launch() with no open launch");
  release_held();
  Configuration shape{};
  for (int d = 0; d < 3; ++d) {
    shape.grid[d] = launch.grid[d];
    shape.block[d] = launch.block[d];
  }
  shape.dyn = launch.dynamic_shared_bytes;
  GroupKey key{};
  key.kernel = launch.kernel_function_id;
  if (config.split_configurations) key.config = shape;
  auto it = group_index.find(key);
  if (it == group_index.end()) {
    it = group_index.emplace(key, groups.size()).first;
    groups.emplace_back();
    groups.back().key = key;
  }
  Group& g = groups[it->second];
  g.launches.push_back(launch.launch_id);
  if (!complete) g.partial.push_back(launch.launch_id);
  g.records += launch_records;
  auto same = std::find_if(g.configurations.begin(), g.configurations.end(),
                           [&](const ConfigurationLaunches& c) { return c.config == shape; });
  if (same == g.configurations.end()) {
    g.configurations.push_back({shape, {}, 0});
    same = g.configurations.end() - 1;
  }
  same->launches.push_back(launch.launch_id);
  same->records += launch_records;
  for (auto& w : workers) {
    w->buffer.flush(w->acc);  // the edge counts it still holds (edge_buffer.h)
    g.acc.merge(w->acc);
    w->reset_launch();
  }
  close_object_touches();
  open = false;
}
}  // namespace reuselens
