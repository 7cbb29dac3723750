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
  regions.emplace(it, new RegionShadow(address, size, &budget));
  for (auto& w : workers) w->region_hint = 0;
}
void Engine::Impl::free_allocation(uint64_t address) {
  for (auto it = regions.begin(); it != regions.end(); ++it) {
    if ((*it)->base() == address) {
      regions.erase(it);
      for (auto& w : workers) w->region_hint = 0;
      return;
    }
  }
  throw EngineError("free of unknown allocation 0x" + hex(address));
}
}  // namespace reuselens
