// Object touches (docs/memory.md, "Object touches"): which device allocations each launch read and wrote, and
// which of an object's slices it touched. One definition of the slices and one writer of object_touches.json,
// shared by the engine (from its shadow memory, traced runs) and the collector's object-level mode (from marks
// the device patch sets, no trace): both must mark the same slice for the same access and write the same file.
#pragma once

#include <stdint.h>

#if defined(__CUDACC__)
#define RL_HOST_DEVICE __host__ __device__
#else
#define RL_HOST_DEVICE
#endif

namespace reuselens {

// An object is cut into at most 64 slices of a power-of-two size, at least 1 KiB (one shadow page's data, so
// that a page lies in one slice); the last slice also holds the rest of an object too large for 64.
enum : unsigned { kObjectSlices = 64, kMinObjectSliceShift = 10 };

RL_HOST_DEVICE inline unsigned object_slice_shift(uint64_t size) {
  unsigned shift = kMinObjectSliceShift;
  while (shift < 63 && (uint64_t(kObjectSlices) << shift) < size) ++shift;
  return shift;
}

// The slice of 4-byte granule `granule` (address / 4) in an object whose first granule is `first_granule`.
RL_HOST_DEVICE inline unsigned object_slice_of(uint64_t first_granule, uint64_t granule, unsigned shift) {
  const uint64_t slice = ((granule - first_granule) << 2) >> shift;
  return slice < kObjectSlices - 1 ? unsigned(slice) : kObjectSlices - 1;
}

}  // namespace reuselens

#if !defined(__CUDACC__)
#include <string>
#include <vector>

#include "reuselens/trace_format.h"

namespace reuselens {

struct ObjectTouch {
  uint64_t address;  // the allocation's base address
  uint8_t access;    // RL_ACCESS_READ | RL_ACCESS_WRITE bits
  uint64_t slices;   // bit k: the launch touched slice k
  bool operator<(const ObjectTouch& o) const { return address < o.address; }
};
struct LaunchTouches {
  uint64_t launch_id;
  std::vector<ObjectTouch> objects;  // by address
};
// What an object's whole life amounted to: the engine's count of every traced access, or the collector's element
// map of it (element_maps.cpp). Kept for the first kMaxProfiledObjects allocations (run.json's cap).
struct ObjectSummary {
  uint64_t order = 0, address = 0, size = 0, slice_bytes = 0, touched_bytes = 0;
  std::vector<uint64_t> slice_accesses;
  // touched_bytes counts whole units of this size (4: exact, each granule; more: a coarse element map's bound)
  uint64_t touched_unit_bytes = 4;
  // Value mode (a traced run with values): load lane-granules of the object with a value, and those that returned
  // what the granule's last load returned (docs/engine.md, "Value redundancy"); 0 otherwise.
  uint64_t value_loads = 0, same_value = 0;
};
constexpr uint64_t kMaxProfiledObjects = 100000;

// object_touches.json: one entry per launch, in launch order, then the objects' summaries in allocation order.
inline std::string object_touches_json(const std::vector<LaunchTouches>& launches,
                                       const std::vector<ObjectSummary>& objects) {
  std::string o = "{\"format\":\"reuselens-object-touches\",\"version\":2,\"launches\":[";
  for (size_t i = 0; i < launches.size(); ++i) {
    const LaunchTouches& t = launches[i];
    o += i ? ",{\"launch\":" : "{\"launch\":";
    o += std::to_string(t.launch_id) + ",\"touches\":[";
    for (size_t k = 0; k < t.objects.size(); ++k) {
      const ObjectTouch& touch = t.objects[k];
      o += k ? ",{\"address\":" : "{\"address\":";
      o += std::to_string(touch.address);
      o += (touch.access & RL_ACCESS_READ) ? ",\"read\":true" : ",\"read\":false";
      o += (touch.access & RL_ACCESS_WRITE) ? ",\"write\":true" : ",\"write\":false";
      o += ",\"slices\":" + std::to_string(touch.slices) + "}";
    }
    o += "]}";
  }
  o += "],\"objects\":[";
  for (size_t i = 0; i < objects.size(); ++i) {
    const ObjectSummary& s = objects[i];
    o += i ? ",{\"address\":" : "{\"address\":";
    o += std::to_string(s.address) + ",\"size\":" + std::to_string(s.size) +
         ",\"slice_bytes\":" + std::to_string(s.slice_bytes) + ",\"touched_bytes\":" + std::to_string(s.touched_bytes) +
         ",\"slice_accesses\":[";
    for (size_t k = 0; k < s.slice_accesses.size(); ++k) o += (k ? "," : "") + std::to_string(s.slice_accesses[k]);
    o += "]";
    if (s.touched_unit_bytes != 4) o += ",\"touched_unit_bytes\":" + std::to_string(s.touched_unit_bytes);
    if (s.value_loads)
      o += ",\"value_loads\":" + std::to_string(s.value_loads) + ",\"same_value\":" + std::to_string(s.same_value);
    o += "}";
  }
  return o + "]}";
}

}  // namespace reuselens
#endif
