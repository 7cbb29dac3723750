// The memory instructions (PCDepGraph nodes) and barriers the engine has seen, keyed by (function, PC).
#pragma once

#include <cstddef>
#include <cstdint>

namespace reuselens {
namespace detail {

struct PcKey {
  uint32_t function_id;
  uint64_t pc;
  bool operator==(const PcKey& o) const { return function_id == o.function_id && pc == o.pc; }
};
struct PcKeyHash {
  size_t operator()(const PcKey& k) const {
    uint64_t h = (k.pc ^ (uint64_t(k.function_id) << 40)) * 0x9e3779b97f4a7c15ull;
    return size_t(h ^ (h >> 31));
  }
};

struct NodeInfo {
  uint32_t function_id;
  uint64_t pc;
  uint8_t space, access, flags;
  uint16_t size;
};
struct BarrierInfo {
  uint32_t function_id;
  uint64_t pc;
  uint8_t kind;
};

}  // namespace detail
}  // namespace reuselens
