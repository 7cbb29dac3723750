#include "run_json.h"

#include <unistd.h>

#include <algorithm>

#include "json.h"
#include "support.h"

namespace rlc {

namespace {

// The launcher's members (command, cwd, start_time), verbatim.
std::string launcher_members(const std::string& header_json) {
  const std::string& h = header_json;
  size_t a = h.find('{'), b = h.rfind('}');
  if (a != std::string::npos && b != std::string::npos && b > a) {
    std::string inner = h.substr(a + 1, b - a - 1);
    if (inner.find_first_not_of(" \n\t\r") != std::string::npos) return "  " + inner + ",\n";
  }
  return "";
}

std::string status_members(const Diagnostics& diag, bool final_write) {
  std::string o;
  std::string status = final_write && !diag.fault ? "complete" : "partial";
  std::string reason = diag.fault ? diag.fault_reason : (final_write ? "" : "running");
  o += "  \"status\": \"" + status + "\",\n";
  o += "  \"partial_reason\": " + (status == "complete" ? std::string("null") : json_str(reason)) + ",\n";
  o += "  \"exit_code\": null,\n";
  o += "  \"end_time\": " + (final_write ? json_str(utc_now()) : std::string("null")) + ",\n";
  return o;
}

std::string kernel_filter_member(const Config& c) {
  return "  \"kernel_filter\": {\"regex\": " + (c.regex_text.empty() ? "null" : json_str(c.regex_text)) +
         ", \"names_file\": " + (c.names_file.empty() ? "null" : json_str(c.names_file)) + ", \"launch_range\": [" +
         std::to_string(c.range_first) + ", " + (c.range_end_set ? std::to_string(c.range_end) : "null") + "]},\n";
}

std::string collector_member(const Config& c, const RunState& run, bool final_write) {
  return "  \"collector\": {\"pid\": " + std::to_string(getpid()) +
         ", \"finished\": " + (final_write ? "true" : "false") + ", \"buffers\": " + std::to_string(c.nbuf) +
         ", \"buffer_bytes\": " + std::to_string(c.buffer_bytes) +
         ", \"buffer_records\": " + std::to_string(c.buffer_records()) +
         ", \"packed_records\": " + (c.packed ? "true" : "false") + ", \"patch\": " + json_str(c.patch_path) +
         ", \"traces\": " + (c.write_traces ? "true" : "false") +
         ", \"collection\": " + (c.object_level ? "\"objects\"" : "\"trace\"") +
         ", \"element_maps\": " + (c.object_elements ? "true" : "false") +
         ", \"values\": " + (c.values ? "true" : "false") + ", \"values_every\": " + std::to_string(c.values_every) +
         ", \"values_approx\": " + json_number(c.values_approx) +
         ", \"online_analysis\": " + (run.engine ? "true" : "false") +
         ", \"launches_seen\": " + std::to_string(run.launch_count) +
         ", \"launches_instrumented\": " + std::to_string(run.instrumented) +
         ", \"graph_launches\": " + std::to_string(run.graph_launches) +
         ", \"graph_kernel_nodes\": " + std::to_string(run.graph_kernel_nodes) +
         ", \"records\": " + std::to_string(run.records_total) +
         ", \"unresolved_pc_records\": " + std::to_string(run.unresolved_total) + ", \"startup_seconds\": null},\n";
}

// `"name": [` + one item per line + `],` (an empty list on one line).
template <class T, class Item>
std::string array_member(const char* name, const std::vector<T>& items, size_t limit, Item item) {
  std::string o = std::string("  \"") + name + "\": [";
  for (size_t i = 0; i < items.size() && i < limit; ++i) {
    o += i ? ",\n    " : "\n    ";
    o += item(items[i]);
  }
  o += items.empty() ? "],\n" : "\n  ],\n";
  return o;
}

std::string module_json(const std::pair<std::string, uint32_t>& m) {
  return "{\"sha256\": \"" + m.first + "\", \"path\": \"modules/" + m.first +
         ".cubin\", \"arch\": " + (m.second ? json_str("sm_" + std::to_string(m.second)) : std::string("null")) + "}";
}

std::string function_json(const FunctionEntry& f) {
  return "{\"id\": " + std::to_string(f.id) + ", \"module\": \"" + f.module + "\", \"name\": " + json_str(f.name) +
         ", \"size\": " + std::to_string(f.size) + ", \"kernel\": " + (f.kernel ? "true" : "false") + "}";
}

std::string dim_json(const uint32_t* d) {
  return "[" + std::to_string(d[0]) + ", " + std::to_string(d[1]) + ", " + std::to_string(d[2]) + "]";
}

// Known from the launch call, else (instrumented launches) the patch's shared size less the static part.
std::string dynamic_shared_json(const LaunchEntry& l) {
  return l.dynamic_smem >= 0 ? std::to_string(l.dynamic_smem)
         : l.instrumented && l.smem && l.has_static_smem && l.smem >= l.static_smem
             ? std::to_string(l.smem - l.static_smem)
             : std::string("null");
}

std::string launch_json(const LaunchEntry& l) {
  return "{\"id\": " + std::to_string(l.id) +
         ", \"function_id\": " + (l.function_id == UINT32_MAX ? std::string("null") : std::to_string(l.function_id)) +
         ", \"kernel\": " + json_str(l.kernel) + ", \"module\": " + json_str(l.module) +
         ", \"grid\": " + dim_json(l.grid) + ", \"block\": " + dim_json(l.block) +
         ", \"cluster\": " + dim_json(l.cluster) + ", \"dynamic_shared_bytes\": " + dynamic_shared_json(l) +
         ", \"shared_bytes\": " + (l.instrumented && l.smem ? std::to_string(l.smem) : std::string("null")) +
         ", \"static_shared_bytes\": " + json_u64_or_null(l.has_static_smem, l.static_smem) +
         ", \"stream\": " + std::to_string(l.stream) + ", \"instrumented\": " + (l.instrumented ? "true" : "false") +
         (l.graph_node ? ", \"graph_node\": true" : "") + ", \"records\": " + std::to_string(l.records) +
         ", \"flushes\": " + std::to_string(l.flushes) +
         ", \"trace\": " + (l.has_trace ? json_str("traces/" + std::to_string(l.id) + ".rltrace") : "null") +
         ", \"status\": \"" + l.status + "\"" +
         (l.instrumented && l.status != "incomplete" ? ", \"seconds\": " + std::to_string(l.seconds) : "") + "}";
}

std::string alloc_json(const AllocEntry& al) {
  std::string path;
  for (const HostFrame& f : al.call_path) path += (path.empty() ? "" : ", ") + host_frame_json(f);
  return "{\"address\": " + std::to_string(al.address) + ", \"size\": " + std::to_string(al.size) + ", \"kind\": \"" +
         al.kind + "\", \"allocated_before_launch\": " + std::to_string(al.allocated_before_launch) +
         ", \"freed_after_launch\": " + json_u64_or_null(al.freed, al.freed_after_launch) + ", \"call_path\": [" +
         path + "]}";
}

std::string errors_member(const std::vector<std::string>& errors) {
  std::string o = "  \"errors\": [";
  for (size_t i = 0; i < errors.size(); ++i) o += (i ? ", " : "") + json_str(errors[i]);
  return o + "]\n";
}

}  // namespace

std::string run_json_text(const Config& config, const RunState& run, const Diagnostics& diag, bool final_write) {
  std::string o;
  o.reserve(4096 + run.launches.size() * 300 + run.functions.size() * 150);
  o += "{\n  \"format\": \"reuselens-run\", \"version\": 1,\n";
  o += "  \"tool\": {\"name\": \"reuselens\", \"version\": \"" + std::string(kToolVersion) + "\"},\n";
  o += launcher_members(config.header_json);
  o += "  \"gpu\": {\"name\": " + json_str(run.gpu_name) + ", \"arch\": " + json_str(run.gpu_arch) +
       (run.gpu_l2_bytes ? ", \"l2_bytes\": " + std::to_string(run.gpu_l2_bytes) : std::string()) +
       ", \"driver\": " + json_str(run.driver) + "},\n";
  o += status_members(diag, final_write);
  o += kernel_filter_member(config);
  o += collector_member(config, run, final_write);
  const size_t all = SIZE_MAX;
  o += array_member("modules", run.module_list, all, module_json);
  o += array_member("functions", run.functions, all, function_json);
  o += array_member("launches", run.launches, all, launch_json);
  o += array_member("allocations", run.allocs, kMaxAllocationEntries, alloc_json);
  o += array_member("memory_operations", run.memory_ops, all, memory_operation_json);
  o += std::string("  \"memory_operations_truncated\": ") + (run.memory_ops_truncated ? "true" : "false") + ",\n";
  o += errors_member(diag.errors);
  o += "}\n";
  return o;
}

}  // namespace rlc
