// Element maps (REUSELENS_OBJECT_ELEMENTS=1 with the object-level mode; docs/memory.md, "Element maps"): the
// intra-object figures a traced run's engine keeps per object (its touched bytes and per-slice access counts),
// kept on the GPU instead, without an access trace. Each live object gets a map in device memory at the first
// instrumented launch that sees it: 64 slice counters and a bitmap of touched granules (device_state.h). The
// object patch fills it; the map is read back when the object is freed (or at exit) and becomes the object's
// entry in object_touches.json's `objects`, the entry the engine writes for a traced run.
//
// A map never takes more than a share of the device memory free at that launch (kElementMapShare): where the
// exact map (one bit per 4-byte granule, 1/32 of the object) does not fit, one bit covers 2^k granules, and the
// object's touched bytes become an upper bound at that resolution (`touched_unit_bytes`); where not even the
// smallest map fits (its 512 bytes of counters and one word of bits), the object has no map and its figures come
// from the slices its launches touched.
#include <algorithm>

#include "device_info.h"
#include "tool.h"

namespace rlc {

namespace {

constexpr uint64_t kElementMapShare = 8;  // a map may take 1/8 of the free device memory
constexpr uint32_t kMaxMapShift = 40;
constexpr uint64_t kElementMapLogLines = 8;  // per kind (coarse, none) in collector.log

uint64_t granules_of(uint64_t address, uint64_t size) { return ((address + (size - 1)) >> 2) - (address >> 2) + 1; }

uint64_t map_bytes(uint64_t granules, uint32_t shift) {
  const uint64_t bits = ((granules - 1) >> shift) + 1;
  return reuselens::kObjectSlices * sizeof(unsigned long long) + (bits + 31) / 32 * sizeof(uint32_t);
}

}  // namespace

// The map of a live object, made (and zeroed on `stream`, before the launch) when it has none. `budget` is what
// maps made during this table upload may still take (kBudgetUnknown until a map is to be made: then asked of the
// driver, once per upload); it shrinks by what this one takes.
unsigned long long* Tool::element_map(CUcontext ctx, uint64_t address, uint64_t size, size_t alloc_index,
                                      Sanitizer_StreamHandle stream, uint64_t* budget, uint32_t* shift) {
  auto it = element_maps_.find(address);
  if (it != element_maps_.end() && it->second.alloc_index == alloc_index) {
    *shift = it->second.shift;
    return it->second.device;
  }
  ElementMap m{ctx, nullptr, 0, 0, alloc_index};
  if (*budget == kBudgetUnknown) *budget = element_map_budget();
  const uint64_t granules = granules_of(address, size);
  while (m.shift < kMaxMapShift && map_bytes(granules, m.shift) > *budget) ++m.shift;
  m.bytes = map_bytes(granules, m.shift);
  if (m.bytes <= *budget) {
    void* p = nullptr;
    in_tool_alloc_ = true;
    const bool made = check(sanitizerAlloc(ctx, &p, m.bytes), "sanitizerAlloc(element map)") &&
                      check(sanitizerMemset(p, 0, m.bytes, stream), "sanitizerMemset(element map)");
    in_tool_alloc_ = false;
    if (made) {
      m.device = static_cast<unsigned long long*>(p);
      *budget -= m.bytes;
    } else if (p != nullptr) {
      sanitizerFree(ctx, p);
    }
  }
  // The first few of each kind are logged; collect_all_element_maps counts them all at exit.
  if (m.device == nullptr && element_maps_missing_++ < kElementMapLogLines) {
    diag_.log(
        "element maps: no map for the %llu-byte allocation at 0x%llx (%llu bytes left for maps at this "
        "launch); its figures come from the slices its launches touched",
        (unsigned long long)size, (unsigned long long)address, (unsigned long long)*budget);
  } else if (m.device != nullptr && m.shift > 0 && element_maps_coarse_++ < kElementMapLogLines) {
    diag_.log(
        "element maps: the %llu-byte allocation at 0x%llx gets one bit per %llu bytes (the exact map would "
        "take more than the maps' share of the free device memory, 1/%llu, or REUSELENS_ELEMENT_MAP_BYTES)",
        (unsigned long long)size, (unsigned long long)address, 4ull << m.shift, (unsigned long long)kElementMapShare);
  }
  element_maps_[address] = m;
  *shift = m.shift;
  return m.device;
}

// What maps made at this upload may take: a share of the device memory free now (and no more than the cap).
uint64_t Tool::element_map_budget() {
  uint64_t free_bytes = 0, total = 0;
  if (!device_memory_info(&free_bytes, &total)) {
    if (!element_map_budget_logged_) diag_.log("element maps: cuMemGetInfo failed; no new maps");
    element_map_budget_logged_ = true;
    return 0;
  }
  return std::min({free_bytes / kElementMapShare, cfg_.element_map_cap, kBudgetUnknown - 1});
}

// Reads an object's map back into its summary and frees it. `stream`: where the copy waits for the kernels
// before it (the launches that touch the object have all been finished one at a time already). An object no
// instrumented launch saw live has no map and nothing touched: its summary says so, as the engine's would.
void Tool::collect_element_map(uint64_t address, size_t alloc_index, Sanitizer_StreamHandle stream) {
  const AllocEntry& a = run_.allocs[alloc_index];
  reuselens::ObjectSummary s;
  s.order = alloc_index;
  s.address = a.address;
  s.size = a.size;
  s.slice_bytes = 1ull << reuselens::object_slice_shift(a.size);
  const uint64_t slices = std::min<uint64_t>(reuselens::kObjectSlices, (a.size + s.slice_bytes - 1) / s.slice_bytes);
  auto it = element_maps_.find(address);
  if (it == element_maps_.end() || it->second.alloc_index != alloc_index) {
    s.slice_accesses.assign(slices, 0);
    if (alloc_index < reuselens::kMaxProfiledObjects) object_summaries_.push_back(std::move(s));
    return;
  }
  const ElementMap m = it->second;
  element_maps_.erase(it);
  if (m.device == nullptr) return;  // no map fitted: the analysis falls back on the slices its launches touched
  std::vector<unsigned long long> host((m.bytes + sizeof(unsigned long long) - 1) / sizeof(unsigned long long));
  const bool read = check(sanitizerMemcpyDeviceToHost(host.data(), m.device, m.bytes, stream),
                          "sanitizerMemcpyDeviceToHost(element map)");
  in_tool_alloc_ = true;
  sanitizerFree(m.ctx, m.device);
  in_tool_alloc_ = false;
  if (!read || alloc_index >= reuselens::kMaxProfiledObjects) return;
  s.slice_accesses.assign(host.begin(), host.begin() + slices);
  // Touched bytes: 4 per touched granule, as the engine counts first touches; a coarse map's bit counts all the
  // granules it covers (the last bit only those of the object), clipped to the object's size.
  const uint32_t* bits = reinterpret_cast<const uint32_t*>(host.data() + reuselens::kObjectSlices);
  const uint64_t granules = granules_of(a.address, a.size), nbits = ((granules - 1) >> m.shift) + 1;
  uint64_t touched_granules = 0;
  for (uint64_t w = 0; w < (nbits + 31) / 32; ++w) touched_granules += uint64_t(__builtin_popcount(bits[w]));
  touched_granules <<= m.shift;
  const uint64_t last_bit = nbits - 1, last_bit_granules = granules - (last_bit << m.shift);
  if (bits[last_bit / 32] >> (last_bit % 32) & 1) touched_granules -= (1ull << m.shift) - last_bit_granules;
  s.touched_bytes = std::min(a.size, touched_granules * 4);
  s.touched_unit_bytes = 4ull << m.shift;
  object_summaries_.push_back(std::move(s));
}

void Tool::collect_all_element_maps() {
  for (const auto& [address, index] : live_allocs_) collect_element_map(address, index, nullptr);
  if (element_maps_coarse_ + element_maps_missing_ > 0)
    diag_.log("exit: element maps: %llu objects with a coarse map, %llu without a map",
              (unsigned long long)element_maps_coarse_, (unsigned long long)element_maps_missing_);
  element_maps_.clear();  // maps of objects whose free was not seen (none expected)
  std::sort(object_summaries_.begin(), object_summaries_.end(),
            [](const reuselens::ObjectSummary& x, const reuselens::ObjectSummary& y) { return x.order < y.order; });
}

}  // namespace rlc
