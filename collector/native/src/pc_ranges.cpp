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

void resolve_records(const std::vector<Range>& ranges, reuselens::RlRecord* r, size_t n, uint64_t* unresolved) {
  uint64_t last_start = 1, last_end = 0, last_value = 0;
  uint32_t last_fid = 0;
  for (size_t i = 0; i < n; ++i) {
    if (r[i].function_id != RL_UNRESOLVED_FUNCTION) continue;
    uint64_t pc = r[i].pc;
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
        ++*unresolved;
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
    r[i].function_id = last_fid;
    r[i].pc = pc - last_start + last_value;
  }
}

}  // namespace rlc
