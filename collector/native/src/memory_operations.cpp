#include "memory_operations.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <unistd.h>

#include <climits>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "json.h"

namespace rlc {
namespace {

// The path of the module whose link map is `lm`; the main program's link map has an empty name.
const std::string& module_path(const link_map* lm) {
  static std::mutex mu;
  static std::unordered_map<const link_map*, std::string> paths;
  std::lock_guard<std::mutex> g(mu);
  auto it = paths.find(lm);
  if (it != paths.end()) return it->second;
  std::string path = lm->l_name ? lm->l_name : "";
  if (path.empty()) {
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    path = n > 0 ? std::string(buf, size_t(n)) : std::string("<main program>");
  }
  return paths.emplace(lm, std::move(path)).first->second;
}

const link_map* module_of(const void* address) {
  Dl_info info;
  link_map* lm = nullptr;
  if (!dladdr1(address, &info, reinterpret_cast<void**>(&lm), RTLD_DL_LINKMAP) || lm == nullptr) return nullptr;
  return lm;
}

// The Sanitizer library calls the collector's callback: frames in either belong to the tool, not to the app.
bool is_tool_module(const link_map* lm) {
  static const link_map* collector = module_of(reinterpret_cast<const void*>(&host_call_path));
  if (lm == collector) return true;
  const char* name = lm->l_name ? std::strrchr(lm->l_name, '/') : nullptr;
  return name && std::strncmp(name + 1, "libsanitizer-public", 19) == 0;
}

const char* direction_name(uint8_t d) {
  static const char* const names[] = {"unknown", "htoh", "htod", "dtoh", "dtod"};
  return d < 5 ? names[d] : "unknown";
}

}  // namespace

std::vector<HostFrame> host_call_path(unsigned max_frames) {
  constexpr int kDepth = 64;
  void* pcs[kDepth];
  const int n = backtrace(pcs, kDepth);
  std::vector<HostFrame> frames;
  bool in_tool = true;
  for (int i = 0; i < n && frames.size() < max_frames; ++i) {
    const link_map* lm = module_of(pcs[i]);
    if (in_tool && (lm == nullptr || is_tool_module(lm))) continue;
    in_tool = false;
    if (lm == nullptr) continue;  // code outside every module (JIT): nothing could place it
    frames.push_back(HostFrame{module_path(lm), reinterpret_cast<uint64_t>(pcs[i]) - lm->l_addr});
  }
  return frames;
}

std::string host_frame_json(const HostFrame& f) {
  return "{\"module\": " + json_str(f.module) + ", \"offset\": " + std::to_string(f.offset) + "}";
}

std::string memory_operation_json(const MemoryOperation& op) {
  const std::string stream = ", \"stream\": " + std::to_string(op.stream);
  switch (op.kind) {
    case MemoryOperation::kAlloc:
      return "{\"kind\": \"alloc\", \"allocation\": " + std::to_string(op.index) + stream + "}";
    case MemoryOperation::kFree:
      return "{\"kind\": \"free\", \"allocation\": " + std::to_string(op.index) + stream + "}";
    case MemoryOperation::kMemcpy:
      return "{\"kind\": \"memcpy\", \"src\": " + std::to_string(op.src) + ", \"dst\": " + std::to_string(op.dst) +
             ", \"bytes\": " + std::to_string(op.bytes) + ", \"direction\": \"" + direction_name(op.direction) + "\"" +
             stream + "}";
    case MemoryOperation::kMemset:
      return "{\"kind\": \"memset\", \"dst\": " + std::to_string(op.dst) + ", \"bytes\": " + std::to_string(op.bytes) +
             stream + "}";
    default:
      return "{\"kind\": \"kernel\", \"launch\": " + std::to_string(op.index) + stream + "}";
  }
}

}  // namespace rlc
