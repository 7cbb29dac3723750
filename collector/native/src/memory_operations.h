// What the memory analysis (docs/memory.md) needs from the host side of a run: the host call path of each device
// allocation, and every GPU operation over device memory (allocations, frees, copies, sets, kernel launches) in
// the order the host issued them. Issue order is a topological order of the operations across streams: every
// stream or event dependency points from an operation issued earlier to one issued later.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rlc {

// One return address of a host call path, as the module holding it and the address less that module's load
// bias: an ELF virtual address for PIE and non-PIE alike, so the module's DWARF can place it.
struct HostFrame {
  std::string module;
  uint64_t offset;
};

// The calling thread's call path, innermost first, from the first frame outside the collector and the Sanitizer
// library (the callback's own frames), at most `max_frames` frames.
std::vector<HostFrame> host_call_path(unsigned max_frames);

struct MemoryOperation {
  enum Kind : uint8_t { kAlloc, kFree, kMemcpy, kMemset, kKernel } kind;
  uint8_t direction = 0;  // kMemcpy: Sanitizer_MemcpyDirection
  uint64_t stream = 0;    // the CUstream handle (0: the legacy default stream), as launches[].stream
  uint64_t index = 0;     // kAlloc / kFree: allocations[] index; kKernel: launch id
  uint64_t src = 0, dst = 0, bytes = 0;
};

std::string memory_operation_json(const MemoryOperation& op);
std::string host_frame_json(const HostFrame& frame);

}  // namespace rlc
