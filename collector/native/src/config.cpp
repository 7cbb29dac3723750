#include "config.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "device_state.h"
#include "reuselens/trace_format.h"
#include "support.h"

namespace rlc {

namespace {

// The device patch next to this library, unless REUSELENS_PATCH names one: the trace patch (patch.cu), in value
// mode the same built with RL_VALUES, in object-level mode the object patch (object_patch.cu).
std::string default_patch_path(bool object_level, bool values) {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&default_patch_path), &info) && info.dli_fname) {
    std::string self(info.dli_fname);
    return self.substr(0, self.rfind('/') + 1) + (object_level ? "reuselens_objects_patch.fatbin"
                                                  : values     ? "reuselens_values_patch.fatbin"
                                                               : "reuselens_patch.fatbin");
  }
  return "";
}

// "first:end" or "first" (no end): launches first..end-1 of those passing the name filter.
void parse_launch_range(const std::string& lr, Config* c) {
  if (lr.empty()) return;
  size_t colon = lr.find(':');
  c->range_first = strtoull(lr.substr(0, colon).c_str(), nullptr, 10);
  if (colon != std::string::npos && colon + 1 < lr.size()) {
    c->range_end = strtoull(lr.substr(colon + 1).c_str(), nullptr, 10);
    c->range_end_set = true;
  }
}

}  // namespace

uint64_t Config::buffer_records() const {
  return std::max<uint64_t>(kMinBufferRecords, buffer_bytes / sizeof(reuselens::RlRecord));
}

Config read_config() {
  Config c;
  c.run_dir = getenv_str("REUSELENS_RUN_DIR");
  c.header_json = getenv_str("REUSELENS_RUN_HEADER");
  c.regex_text = getenv_str("REUSELENS_KERNEL_REGEX");
  c.names_file = getenv_str("REUSELENS_KERNEL_NAMES_FILE");
  c.write_traces = getenv_str("REUSELENS_WRITE_TRACES") == "1";
  c.debug = getenv_str("REUSELENS_DEBUG") == "1";
  // Default: patch a module at the first instrumented launch of one of its kernels (the configuration all
  // recorded results were measured with). REUSELENS_EAGER_PATCH=1 patches at MODULE_LOADED instead.
  c.lazy_patch = getenv_str("REUSELENS_EAGER_PATCH") != "1";
  c.object_level = getenv_str("REUSELENS_OBJECT_LEVEL") == "1";
  c.object_elements = c.object_level && getenv_str("REUSELENS_OBJECT_ELEMENTS") == "1";
  const std::string cap = getenv_str("REUSELENS_ELEMENT_MAP_BYTES");
  if (!cap.empty()) c.element_map_cap = strtoull(cap.c_str(), nullptr, 10);
  c.patch_path = getenv_str("REUSELENS_PATCH");
  c.values = !c.object_level && getenv_str("REUSELENS_VALUES") == "1";
  c.packed = getenv_str("REUSELENS_PACKED_RECORDS") != "0";
  const std::string every = getenv_str("REUSELENS_VALUES_EVERY");
  if (!every.empty()) c.values_every = std::max<uint64_t>(1, strtoull(every.c_str(), nullptr, 10));
  c.values_approx = values_approx_from_env();
  if (c.patch_path.empty()) c.patch_path = default_patch_path(c.object_level, c.values);
  parse_launch_range(getenv_str("REUSELENS_LAUNCH_RANGE"), &c);
  std::string bb = getenv_str("REUSELENS_BUFFER_BYTES");
  std::string nb = getenv_str("REUSELENS_BUFFERS");
  if (!bb.empty()) c.buffer_bytes = strtoull(bb.c_str(), nullptr, 10);
  if (c.buffer_bytes < kMinBufferRecords * sizeof(reuselens::RlRecord))
    c.buffer_bytes = kMinBufferRecords * sizeof(reuselens::RlRecord);
  if (!nb.empty()) c.nbuf = (uint32_t)std::clamp(atoi(nb.c_str()), 2, RL_MAX_BUFFERS);
  return c;
}

// The engine runs behind a queue (REUSELENS_ENGINE_QUEUE_BYTES, default 1 GiB; 0 = in the drain thread):
// a full buffer goes back to the GPU once copied, not once analysed (docs/collector.md, Overhead).
uint64_t engine_queue_bytes() {
  std::string q = getenv_str("REUSELENS_ENGINE_QUEUE_BYTES");
  return q.empty() ? (1ull << 30) : strtoull(q.c_str(), nullptr, 10);
}

// Cores that share each buffer's copy into the queue (REUSELENS_QUEUE_COPY_THREADS, 1..16).
unsigned queue_copy_threads() {
  std::string ct = getenv_str("REUSELENS_QUEUE_COPY_THREADS");
  // Default: a quarter of the cores, at most 4 (on the H200 host 1 -> 4 threads took matmul_256's kernel time
  // from 77-89 ms to 45-50 ms; 8 gained little more).
  unsigned copy_threads = std::clamp(std::thread::hardware_concurrency() / 4, 1u, 4u);
  if (!ct.empty()) copy_threads = (unsigned)std::clamp(atoi(ct.c_str()), 1, 16);
  return copy_threads;
}

}  // namespace rlc
