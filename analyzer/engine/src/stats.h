// Aggregates the engine accumulates: node distributions (paper 3.2.2), edges (3.2.1) and barrier spans.
// Every aggregate is a sum, so per-worker partial results merge into the same totals in any order.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <unordered_map>
#include <vector>

namespace reuselens {
namespace detail {

// Full distribution of a non-negative integer: counts[v] = instances that had value v. Values are small for
// ordinary accesses (lanes, sectors, words of a warp: at most a few hundred) and are counted densely; the
// largest shared and bulk accesses reach 524,288 distinct words, and a dense array that long per node and per
// worker would let a short hostile trace (a few thousand such PCs) claim tens of GB, so those go to a map.
struct Histogram {
  static constexpr uint32_t kDense = 4096;
  std::vector<uint64_t> counts;        // values below kDense
  std::map<uint32_t, uint64_t> large;  // values from kDense on
  void add(uint32_t value, uint64_t n = 1) {
    if (value >= kDense) {
      large[value] += n;
      return;
    }
    if (value >= counts.size()) counts.resize(value + 1, 0);
    counts[value] += n;
  }
  void merge(const Histogram& o) {
    if (o.counts.size() > counts.size()) counts.resize(o.counts.size(), 0);
    for (size_t i = 0; i < o.counts.size(); ++i) counts[i] += o.counts[i];
    for (const auto& kv : o.large) large[kv.first] += kv.second;
  }
};

// What value mode learns of one PC's values per execution (docs/engine.md, "Value redundancy"); all zero
// without values.
struct ValueCounts {
  uint64_t lanes = 0;    // lanes whose value the trace holds
  uint64_t zero = 0;     // of those, lanes whose value was 0
  uint64_t silent = 0;   // store lanes that wrote the value the location held (shared, local: from its block)
  uint64_t uniform = 0;  // executions whose valued lanes (two or more) all had one value
  uint64_t spatial = 0;  // lanes whose value equals the lane's before it, which accessed the element before
  void merge(const ValueCounts& o) {
    lanes += o.lanes;
    zero += o.zero;
    silent += o.silent;
    uniform += o.uniform;
    spatial += o.spatial;
  }
};

struct NodeStats {
  uint64_t executions = 0;
  uint64_t bytes = 0;      // lane bytes = W_total(v)
  uint64_t irregular = 0;  // global executions whose lanes' addresses follow no stride (lanes_on_strides)
  Histogram lanes, addresses, sectors, sectors_ideal, wavefronts, wavefronts_ideal;
  ValueCounts values;
  void merge(const NodeStats& o) {
    executions += o.executions;
    bytes += o.bytes;
    irregular += o.irregular;
    values.merge(o.values);
    lanes.merge(o.lanes);
    addresses.merge(o.addresses);
    sectors.merge(o.sectors);
    sectors_ideal.merge(o.sectors_ideal);
    wavefronts.merge(o.wavefronts);
    wavefronts_ideal.merge(o.wavefronts_ideal);
  }
};

enum Label : uint8_t { kCold = 0, kThread, kWarpSame, kWarpDiff, kBlock, kGrid, kLabelCount };
constexpr uint32_t kNone = 0xffffffffu;

// An edge of PCDepGraph: current node -> origin node (0 = Cold Miss). Cold edges whose data was last touched
// by an earlier launch are kept apart per (prior kernel, prior node).
struct EdgeKey {
  uint32_t from = 0, to = 0;
  uint32_t prior_kernel = kNone, prior_node = 0;
  uint8_t label = kCold;
  bool operator==(const EdgeKey& o) const {  // branch-free: this runs once per lane-granule
    uint64_t a = (uint64_t(from) << 32 | to) ^ (uint64_t(o.from) << 32 | o.to);
    uint64_t b = (uint64_t(prior_kernel) << 32 | prior_node) ^ (uint64_t(o.prior_kernel) << 32 | o.prior_node);
    return (a | b | uint64_t(label ^ o.label)) == 0;
  }
  bool operator<(const EdgeKey& o) const {
    if (from != o.from) return from < o.from;
    if (to != o.to) return to < o.to;
    if (label != o.label) return label < o.label;
    if (prior_kernel != o.prior_kernel) return prior_kernel < o.prior_kernel;
    return prior_node < o.prior_node;
  }
};
struct EdgeKeyHash {
  size_t operator()(const EdgeKey& k) const {
    uint64_t h = (uint64_t(k.from) << 32 | k.to) * 0x9e3779b97f4a7c15ull;
    h ^= (uint64_t(k.prior_kernel) << 32 | k.prior_node) * 0xc2b2ae3d27d4eb4full + k.label;
    return size_t(h ^ (h >> 29));
  }
};

struct EdgeStats {
  uint64_t bytes = 0, accesses = 0;
  uint64_t kind[4] = {0, 0, 0, 0};        // index (current writes) * 2 + (prior wrote): rar, raw, war, waw
  uint64_t synced = 0, synced_bytes = 0;  // cross-thread accesses with a barrier between the pair
  // Value mode: load lane-granules whose granule's last loaded value was known, and of those, the ones that
  // loaded that value again (temporal redundancy, split by this edge's Topological Distance).
  // approx_value: of the others, those within config.value_approx of that value (read as floats).
  uint64_t value_loads = 0, same_value = 0, approx_value = 0;
  void merge(const EdgeStats& o) {
    value_loads += o.value_loads;
    same_value += o.same_value;
    approx_value += o.approx_value;
    bytes += o.bytes;
    accesses += o.accesses;
    for (int i = 0; i < 4; ++i) kind[i] += o.kind[i];
    synced += o.synced;
    synced_bytes += o.synced_bytes;
  }
};

struct SpanStats {
  uint64_t accesses = 0, bytes = 0;
};

struct BarrierStats {
  uint64_t executions = 0;
  std::map<EdgeKey, SpanStats> spans;  // cross-thread edges whose accesses this barrier separated
  void merge(const BarrierStats& o) {
    executions += o.executions;
    for (const auto& kv : o.spans) {
      spans[kv.first].accesses += kv.second.accesses;
      spans[kv.first].bytes += kv.second.bytes;
    }
  }
};

// What one launch (or one worker during one launch) accumulated, keyed by engine-wide node/barrier ids.
struct Accumulator {
  std::unordered_map<uint32_t, NodeStats> nodes;
  std::unordered_map<EdgeKey, EdgeStats, EdgeKeyHash> edges;
  std::unordered_map<uint32_t, BarrierStats> barriers;
  void merge(const Accumulator& o) {
    for (const auto& kv : o.nodes) nodes[kv.first].merge(kv.second);
    for (const auto& kv : o.edges) edges[kv.first].merge(kv.second);
    for (const auto& kv : o.barriers) barriers[kv.first].merge(kv.second);
  }
  void clear() {
    nodes.clear();
    edges.clear();
    barriers.clear();
  }
};

}  // namespace detail
}  // namespace reuselens
