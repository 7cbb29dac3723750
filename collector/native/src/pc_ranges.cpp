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

void resolve_records(const std::vector<Range>& ranges, reuselens::RlSlot* slots, size_t n, PackedCounts* counts,
                     std::vector<const reuselens::RlSlot*>* starts) {
  // The last range found, and the span around its pc where no other range begins or ends (cached_lo..cached_hi):
  // every pc in that span resolves to the same range.
  uint64_t last_start = 0, last_value = 0, cached_lo = 1, cached_hi = 0;
  uint32_t last_fid = 0;
  if (starts) starts->clear();
  reuselens::PackedCursor cursor(slots, n);
  while (const reuselens::RlSlot* header = cursor.next()) {
    // The header slot holds an RlRecord's first 32 bytes: word 0 the type, word 1 the function id (low half) and
    // the mask, word 2 the pc. The stream is the caller's to change.
    uint64_t* w = const_cast<reuselens::RlSlot*>(header)->w;
    ++counts->records;
    counts->packed |= reuselens::packed_form(*header) != reuselens::RL_FORM_FULL;
    if (starts) starts->push_back(header);
    if ((w[0] & RL_TYPE_MASK) == reuselens::RL_REC_VALUES) ++counts->companions;
    if ((uint32_t)w[1] != RL_UNRESOLVED_FUNCTION) continue;
    uint64_t pc = w[2];
    if (!(pc >= cached_lo && pc < cached_hi)) {
      const auto after =
          std::upper_bound(ranges.begin(), ranges.end(), pc, [](uint64_t v, const Range& x) { return v < x.start; });
      // Nested ranges (a callee inside its kernel's symbol range): the innermost is the latest start. The ranges
      // passed on the way back lie before pc (they start at or before it and do not hold it), so the span cached
      // begins after the last of them ends, and it ends where the next range begins: a pc of the kernel after its
      // callee must not resolve a later pc of the callee to the kernel, nor one before it.
      auto it = after;
      uint64_t lo = 0;
      bool found = false;
      for (int k = 0; k < 64 && it != ranges.begin(); ++k) {
        --it;
        if (pc >= it->start && pc < it->end) {
          found = true;
          break;
        }
        lo = std::max(lo, it->end);
      }
      if (!found) {
        ++counts->unresolved;
        continue;
      }
      last_start = it->start;
      last_fid = it->fid;
      last_value = it->value;
      cached_lo = std::max(it->start, lo);
      cached_hi = after != ranges.end() ? std::min(it->end, after->start) : it->end;
    }
    w[1] = (w[1] & 0xFFFFFFFF00000000ull) | last_fid;
    w[2] = pc - last_start + last_value;
  }
  counts->malformed |= cursor.malformed();
}

}  // namespace rlc
