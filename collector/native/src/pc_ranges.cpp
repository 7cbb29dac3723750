#include "pc_ranges.h"

#include <algorithm>
#include <iterator>

namespace rlc {

std::vector<Range> function_ranges(const std::map<CUmodule, ModuleEntry>& modules,
                                   const std::vector<FunctionEntry>& functions) {
  std::vector<Range> r;
  for (auto& [mod, me] : modules) {
    for (uint32_t id : me.functions) {
      const FunctionEntry& f = functions[id];
      auto it = me.section_base.find(f.section);
      if (it == me.section_base.end() || f.size == 0) continue;
      r.push_back(Range{it->second + f.value, it->second + f.value + f.size, id, f.value});
    }
  }
  std::sort(r.begin(), r.end(),
            [](const Range& a, const Range& b) { return a.start != b.start ? a.start < b.start : a.end > b.end; });
  return r;
}

void resolve_records(const std::vector<Range>& ranges, reuselens::RlSlot* slots, size_t n, PackedCounts* counts) {
  uint64_t last_start = 1, last_end = 0, last_value = 0;
  uint32_t last_fid = 0;
  reuselens::PackedCursor cursor(slots, n);
  while (const reuselens::RlSlot* header = cursor.next()) {
    // The header slot holds an RlRecord's first 32 bytes: word 0 the type, word 1 the function id (low half) and
    // the mask, word 2 the pc. The stream is the caller's to change.
    uint64_t* w = const_cast<reuselens::RlSlot*>(header)->w;
    ++counts->records;
    if ((w[0] & RL_TYPE_MASK) == reuselens::RL_REC_VALUES) ++counts->companions;
    if ((uint32_t)w[1] != RL_UNRESOLVED_FUNCTION) continue;
    uint64_t pc = w[2];
    if (!(pc >= last_start && pc < last_end)) {
      auto it =
          std::upper_bound(ranges.begin(), ranges.end(), pc, [](uint64_t v, const Range& x) { return v < x.start; });
      bool found = false;
      // Nested ranges (a callee inside its kernel's symbol range): the innermost is the latest start.
      for (int k = 0; k < 64 && it != ranges.begin(); ++k) {
        --it;
        if (pc >= it->start && pc < it->end) {
          found = true;
          break;
        }
      }
      if (!found) {
        ++counts->unresolved;
        continue;
      }
      last_start = it->start;
      last_end = it->end;
      last_fid = it->fid;
      last_value = it->value;
      // A range that contains a nested one must not be cached for the whole span.
      auto nx = std::next(it);
      if (nx != ranges.end() && nx->start < last_end) {
        if (pc < nx->start) last_end = nx->start;
      }
    }
    w[1] = (w[1] & 0xFFFFFFFF00000000ull) | last_fid;
    w[2] = pc - last_start + last_value;
  }
  counts->malformed |= cursor.malformed();
}

}  // namespace rlc
