// The engine's result as JSON: the engine part of report.json, version RL_ENGINE_JSON_VERSION
// (docs/report-format.md, "engine part"). One entry per group of launches (kernel_group.h), with node ids made
// dense per kernel.
#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine_impl.h"

namespace reuselens {
namespace {

// Appends text and integers to a string. Not std::ostringstream: the stream's numeric output goes through the
// global locale, which is not set up when the module carries its own static libstdc++ (the device image's
// g++ 13 builds it that way; inserting the first integer crashed there) — and to_chars is faster anyway.
struct JsonOut {
  std::string s;
  JsonOut& operator<<(const char* text) {
    s += text;
    return *this;
  }
  JsonOut& operator<<(char c) {
    s += c;
    return *this;
  }
  template <typename T,
            typename = std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, char> && !std::is_same_v<T, bool>>>
  JsonOut& operator<<(T v) {
    char buf[24];
    s.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
    return *this;
  }
};

const char* kLabelNames[kLabelCount] = {"cold", "thread", "warp_same_inst", "warp_diff_inst", "block", "grid"};
const char* kSpaceNames[4] = {"null", "\"global\"", "\"shared\"", "\"local\""};
const char* kBarrierKinds[4] = {"null", "\"block\"", "\"warp\"", "\"mbarrier\""};

void put_hist(JsonOut& os, const char* name, const Histogram& h) {
  os << ",\"" << name << "\":[";
  bool first = true;
  for (size_t v = 0; v < h.counts.size(); ++v) {
    if (!h.counts[v]) continue;
    os << (first ? "" : ",") << '[' << v << ',' << h.counts[v] << ']';
    first = false;
  }
  for (const auto& kv : h.large) {
    os << (first ? "" : ",") << '[' << kv.first << ',' << kv.second << ']';
    first = false;
  }
  os << ']';
}

const char* type_name(uint8_t access) {
  bool r = access & RL_ACCESS_READ, w = access & RL_ACCESS_WRITE;
  if (r && w) return "\"atomic\"";
  return w ? "\"write\"" : "\"read\"";
}

template <class T>
void put_list(JsonOut& os, const std::vector<T>& values) {
  for (size_t i = 0; i < values.size(); ++i) os << (i ? "," : "") << values[i];
}

// Edges (or barrier spans) with their node ids translated to the kernel's dense ids, sorted by key.
template <class Stats, class Map>
std::vector<std::pair<EdgeKey, Stats>> local_edges(const Map& edges,
                                                   const std::unordered_map<uint32_t, uint32_t>& local) {
  std::vector<std::pair<EdgeKey, Stats>> out;
  for (const auto& kv : edges) {
    EdgeKey k = kv.first;
    k.from = local.at(k.from);
    k.to = local.at(k.to);
    out.emplace_back(k, kv.second);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

// Writes one kernel group; node and barrier descriptions come from the engine-wide tables.
class KernelWriter {
 public:
  KernelWriter(JsonOut& os, const std::vector<NodeInfo>& nodes, const std::vector<BarrierInfo>& barriers)
      : os_(os), nodes_(nodes), barriers_(barriers) {}

  void write(size_t index, const Group& g) {
    number_nodes(g);
    put_launches(index, g);
    put_nodes(g);
    put_edges(g);
    put_barriers(g);
    os_ << "]}";
  }

 private:
  // Dense per-kernel node ids: 0 = Cold Miss, then by (function_id, pc).
  void number_nodes(const Group& g) {
    ids_.clear();
    for (const auto& kv : g.acc.nodes) ids_.push_back(kv.first);
    std::sort(ids_.begin(), ids_.end(), [&](uint32_t a, uint32_t b) {
      return std::make_pair(nodes_[a].function_id, nodes_[a].pc) < std::make_pair(nodes_[b].function_id, nodes_[b].pc);
    });
    local_.clear();
    local_[0] = 0;
    for (size_t i = 0; i < ids_.size(); ++i) local_[ids_[i]] = uint32_t(i + 1);
  }
  // The entry's launches and their configurations. "grid", "block" and "dynamic_shared_bytes" are the entry's
  // configuration when all its launches share one; with several, only "configurations" says which.
  void put_launches(size_t index, const Group& g) {
    os_ << (index ? "," : "") << "{\"id\":\"k" << index << "\",\"kernel_function_id\":" << g.key.kernel
        << ",\"function_id\":" << g.key.kernel;
    if (g.configurations.size() == 1) {
      os_ << ',';
      put_configuration(g.configurations[0].config);
    }
    os_ << ",\"configurations\":[";
    for (size_t i = 0; i < g.configurations.size(); ++i) {
      const ConfigurationLaunches& c = g.configurations[i];
      os_ << (i ? ",{" : "{");
      put_configuration(c.config);
      os_ << ",\"launches\":[";
      put_list(os_, c.launches);
      os_ << "],\"records\":" << c.records << '}';
    }
    os_ << "],\"launches\":[";
    put_list(os_, g.launches);
    os_ << "],\"partial_launches\":[";
    put_list(os_, g.partial);
    os_ << "],\"records\":" << g.records;
  }
  void put_configuration(const Configuration& c) {
    os_ << "\"grid\":[" << c.grid[0] << ',' << c.grid[1] << ',' << c.grid[2] << "],\"block\":[" << c.block[0] << ','
        << c.block[1] << ',' << c.block[2] << "],\"dynamic_shared_bytes\":" << c.dyn;
  }
  void put_nodes(const Group& g) {
    os_ << ",\"nodes\":[{\"id\":0,\"function_id\":null,\"pc\":null,\"space\":null,"
        << "\"type\":null,\"size\":0,\"async_copy\":false,\"executions\":0,\"lanes\":[],\"addresses\":[],"
        << "\"sectors\":[],\"sectors_ideal\":[],\"wavefronts\":[],\"wavefronts_ideal\":[],\"bytes\":0}";
    for (size_t i = 0; i < ids_.size(); ++i) put_node(i + 1, nodes_[ids_[i]], g.acc.nodes.at(ids_[i]));
  }
  void put_node(size_t id, const NodeInfo& n, const NodeStats& s) {
    os_ << ",{\"id\":" << id << ",\"function_id\":" << n.function_id << ",\"pc\":" << n.pc
        << ",\"space\":" << kSpaceNames[n.space] << ",\"type\":" << type_name(n.access) << ",\"size\":" << n.size
        << ",\"async_copy\":" << ((n.flags & RL_FLAG_ASYNC_COPY) ? "true" : "false")
        << ",\"executions\":" << s.executions;
    put_hist(os_, "lanes", s.lanes);
    put_hist(os_, "addresses", s.addresses);
    put_hist(os_, "sectors", s.sectors);
    put_hist(os_, "sectors_ideal", s.sectors_ideal);
    put_hist(os_, "wavefronts", s.wavefronts);
    put_hist(os_, "wavefronts_ideal", s.wavefronts_ideal);
    os_ << ",\"bytes\":" << s.bytes;
    if (s.irregular) os_ << ",\"irregular\":" << s.irregular;  // docs/report-format.md, node fields
    if (s.values.lanes) {                                      // value mode (docs/report-format.md, "values")
      const ValueCounts& v = s.values;
      os_ << ",\"values\":{\"lanes\":" << v.lanes << ",\"zero\":" << v.zero << ",\"silent\":" << v.silent
          << ",\"uniform\":" << v.uniform << ",\"spatial\":" << v.spatial << '}';
    }
    os_ << '}';
  }
  void put_edges(const Group& g) {
    auto edges = local_edges<EdgeStats>(g.acc.edges, local_);
    os_ << "],\"edges\":[";
    for (size_t i = 0; i < edges.size(); ++i) put_edge(i, edges[i].first, edges[i].second);
  }
  void put_edge(size_t i, const EdgeKey& k, const EdgeStats& s) {
    os_ << (i ? "," : "") << "{\"from\":" << k.from << ",\"to\":" << k.to << ",\"label\":\"" << kLabelNames[k.label]
        << "\",\"bytes\":" << s.bytes << ",\"accesses\":" << s.accesses << ",\"rar\":" << s.kind[0]
        << ",\"raw\":" << s.kind[1] << ",\"war\":" << s.kind[2] << ",\"waw\":" << s.kind[3]
        << ",\"synced\":" << s.synced << ",\"synced_bytes\":" << s.synced_bytes;
    if (s.value_loads) os_ << ",\"value_loads\":" << s.value_loads << ",\"same_value\":" << s.same_value;
    if (s.approx_value) os_ << ",\"approx_value\":" << s.approx_value;
    os_ << ",\"prior_kernel\":";
    if (k.prior_kernel == kNone) {
      os_ << "null}";
    } else {
      const NodeInfo& p = nodes_[k.prior_node];
      os_ << "{\"kernel_function_id\":" << k.prior_kernel << ",\"function_id\":" << p.function_id << ",\"pc\":" << p.pc
          << ",\"bytes\":" << s.bytes << "}}";
    }
  }
  void put_barriers(const Group& g) {
    os_ << "],\"barriers\":[";
    std::vector<uint32_t> bids;
    for (const auto& kv : g.acc.barriers) bids.push_back(kv.first);
    std::sort(bids.begin(), bids.end(), [&](uint32_t a, uint32_t b) {
      return std::make_pair(barriers_[a].function_id, barriers_[a].pc) <
             std::make_pair(barriers_[b].function_id, barriers_[b].pc);
    });
    bool first = true;
    for (uint32_t b : bids) {
      if (b == 0) continue;  // spans with no barrier id cannot occur; guard against a zero key
      put_barrier(first, barriers_[b], g.acc.barriers.at(b));
      first = false;
    }
  }
  void put_barrier(bool first, const BarrierInfo& bi, const BarrierStats& bs) {
    uint64_t acc = 0, bytes = 0;
    for (const auto& kv : bs.spans) {
      acc += kv.second.accesses;
      bytes += kv.second.bytes;
    }
    auto spans = local_edges<SpanStats>(bs.spans, local_);
    os_ << (first ? "" : ",") << "{\"function_id\":" << bi.function_id << ",\"pc\":" << bi.pc
        << ",\"kind\":" << kBarrierKinds[bi.kind] << ",\"executions\":" << bs.executions
        << ",\"spanned_cross_thread_edges\":" << spans.size() << ",\"spanned_accesses\":" << acc
        << ",\"spanned_bytes\":" << bytes << ",\"spans\":[";
    for (size_t i = 0; i < spans.size(); ++i) {
      os_ << (i ? "," : "") << "{\"from\":" << spans[i].first.from << ",\"to\":" << spans[i].first.to << ",\"label\":\""
          << kLabelNames[spans[i].first.label] << "\",\"accesses\":" << spans[i].second.accesses
          << ",\"bytes\":" << spans[i].second.bytes << '}';
    }
    os_ << "]}";
  }

  JsonOut& os_;
  const std::vector<NodeInfo>& nodes_;
  const std::vector<BarrierInfo>& barriers_;
  std::vector<uint32_t> ids_;                     // the kernel's engine-wide node ids, in dense-id order
  std::unordered_map<uint32_t, uint32_t> local_;  // engine-wide node id -> the kernel's dense id
};

}  // namespace

std::string Engine::Impl::to_json() const {
  JsonOut os;
  os << "{\"format\":\"reuselens-engine\",\"version\":" << RL_ENGINE_JSON_VERSION << ",\"kernels\":[";
  KernelWriter kernel(os, nodes, barriers);
  for (size_t gi = 0; gi < groups.size(); ++gi) kernel.write(gi, groups[gi]);
  os << "],\"stats\":{\"records\":" << counters.records << ",\"lane_accesses\":" << counters.lane_accesses
     << ",\"peak_shadow_bytes\":" << budget.peak() << ",\"segment_records\":" << segment_records()
     << ",\"wide_unit_batches\":" << wide_unit_batches << ",\"workers\":" << W
     << ",\"consume_us\":" << uint64_t(counters.consume_seconds * 1e6) << ",\"phase_us\":[";
  // Where consume() spent its time (engine.h EngineStats, in microseconds: JsonOut writes integers only), what a
  // slow online analysis is diagnosed from.
  for (int i = 0; i < 5; ++i) os << (i ? "," : "") << uint64_t(counters.phase_seconds[i] * 1e6);
  // All workers' time per step: phase_cpu_us / workers against phase_us is how evenly a step spread.
  os << "],\"phase_cpu_us\":[";
  for (int i = 0; i < 5; ++i) os << (i ? "," : "") << uint64_t(counters.phase_cpu_seconds[i] * 1e6);
  os << "]}}";
  return std::move(os.s);
}

}  // namespace reuselens
