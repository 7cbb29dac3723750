// Device allocations: each one known to the engine gets a direct-mapped shadow region (shadow.h); a free drops it.
#include "engine_impl.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <memory>
#include <string>

namespace reuselens {
namespace {

std::string hex(uint64_t v) {
  char buf[17];
  auto end = std::to_chars(buf, buf + sizeof buf, v, 16).ptr;
  return std::string(buf, end);
}

}  // namespace

void Engine::Impl::add_allocation(uint64_t address, uint64_t size) {
  if (size == 0) return;
  if (size - 1 > ~0ull - address) {  // the last byte, address + size - 1, would lie beyond 2^64 - 1
    throw EngineError("allocation at 0x" + hex(address) + " of " + std::to_string(size) +
                      " bytes runs past the end of the 64-bit address space");
  }
  auto it = std::upper_bound(regions.begin(), regions.end(), address,
                             [](uint64_t a, const std::unique_ptr<RegionShadow>& r) { return a < r->base(); });
  // Compared by last byte: an allocation may end at the very top of the address space.
  bool overlaps_prev = it != regions.begin() && (*(it - 1))->base() + ((*(it - 1))->size() - 1) >= address;
  bool overlaps_next = it != regions.end() && address + (size - 1) >= (*it)->base();
  if (overlaps_prev || overlaps_next) {
    throw EngineError("allocation at 0x" + hex(address) + " overlaps an allocation that was not freed");
  }
  region_order.insert(region_order.begin() + (it - regions.begin()), allocations_seen++);
  regions.emplace(it, new RegionShadow(address, size, &budget, W, config.values));
  forget_cached_regions();
}
void Engine::Impl::free_allocation(uint64_t address) {
  for (auto it = regions.begin(); it != regions.end(); ++it) {
    if ((*it)->base() == address) {
      note_object_touches(**it);  // a launch still open keeps what it did to the allocation
      const size_t i = size_t(it - regions.begin());
      if (region_order[i] < kMaxProfiledObjects) freed_objects.push_back(summarize(**it, region_order[i]));
      region_order.erase(region_order.begin() + i);
      regions.erase(it);
      forget_cached_regions();
      return;
    }
  }
  throw EngineError("free of unknown allocation 0x" + hex(address));
}
void Engine::Impl::note_object_touches(RegionShadow& region) {
  const uint64_t slices = region.take_launch_slices();
  if (uint8_t bits = region.take_access()) open_touches.push_back(ObjectTouch{region.base(), bits, slices});
}
Engine::Impl::ObjectSummary Engine::Impl::summarize(const RegionShadow& region, uint64_t order) {
  ObjectSummary s{order, region.base(), region.size(), region.slice_bytes(), region.touched_bytes(), {}};
  const uint64_t slices =
      std::min<uint64_t>(RegionShadow::kSlices, (region.size() + s.slice_bytes - 1) / s.slice_bytes);
  for (unsigned k = 0; k < slices; ++k) s.slice_accesses.push_back(region.slice_accesses(k));
  s.value_loads = region.row_sum(RegionShadow::kValueLoads);
  s.same_value = region.row_sum(RegionShadow::kSameValue);
  return s;
}
// At the end of a launch: what it did to each allocation, by address.
void Engine::Impl::close_object_touches() {
  for (auto& r : regions) note_object_touches(*r);
  std::sort(open_touches.begin(), open_touches.end());
  object_touches.push_back(LaunchTouches{launch.launch_id, std::move(open_touches)});
  open_touches.clear();
}
// docs/memory.md, "Object touches": one entry per analysed launch, in launch order, then one per allocation the
// engine knew, in allocation order (freed or still live).
std::string Engine::Impl::object_touches_json() const {
  std::vector<ObjectSummary> objects = freed_objects;
  for (size_t i = 0; i < regions.size(); ++i) {
    if (region_order[i] < kMaxProfiledObjects) objects.push_back(summarize(*regions[i], region_order[i]));
  }
  std::sort(objects.begin(), objects.end(),
            [](const ObjectSummary& a, const ObjectSummary& b) { return a.order < b.order; });
  return reuselens::object_touches_json(object_touches, objects);
}
// The workers' cached region page points into a region's shadow mapping: once the region is gone it must not be
// used again (a later allocation at the same address has a mapping of its own, or none yet).
void Engine::Impl::forget_cached_regions() {
  for (auto& w : workers) w->forget_regions();
}
}  // namespace reuselens
