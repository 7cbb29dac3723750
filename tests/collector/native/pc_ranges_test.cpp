// The drain's walk of a packed stream (collector/native/src/pc_ranges.cpp): PCs resolved through nested function
// ranges, and, when asked, every record's first slot kept for the engine queue, which then needs no walk of its own.
#include <cstring>
#include <vector>

#include "expect.h"
#include "pc_ranges.h"

using reuselens::RlSlot;

namespace {

// A record's slots: form 0 full (9 slots), 1 header only, 2 strided (2 slots), 3 padding; its pc in word 2.
void append(std::vector<RlSlot>& out, unsigned form, uint64_t pc) {
  RlSlot head{};
  head.w[0] = (form == reuselens::RL_FORM_PADDING ? 0u : 1u) | uint64_t(form) << RL_FORM_SHIFT;
  head.w[1] = uint64_t(0xffffffffu) << 32 | RL_UNRESOLVED_FUNCTION;
  head.w[2] = pc;
  out.push_back(head);
  if (form == reuselens::RL_FORM_FULL) out.insert(out.end(), RL_FULL_SLOTS - 1, RlSlot{});
  if (form == reuselens::RL_FORM_STRIDED) out.push_back(RlSlot{{0x7000, 4, 0, 32}});
}

int walk(bool with_starts) {
  // Kernel 1 at [0x1000, 0x2000) with a callee, function 2, nested at [0x1800, 0x1900); function 3 at 0x3000.
  const std::vector<rlc::Range> ranges{{0x1000, 0x2000, 1, 0x100}, {0x1800, 0x1900, 2, 0x40}, {0x3000, 0x3100, 3, 0}};
  std::vector<RlSlot> slots;
  // The kernel's pcs before and after its callee alternate with the callee's: each lookup caches a span, and no
  // span may cover the other function's pcs.
  const uint64_t pcs[] = {0x1010, 0x1810, 0x1a00, 0x3020, 0x9000, 0x1020,
                          0x1a00, 0x1810, 0x1010, 0x18f0, 0x1900, 0x17fc};
  const unsigned forms[] = {2, 0, 1, 2, 2, 0, 2, 2, 2, 1, 2, 2};
  constexpr unsigned kRecords = sizeof pcs / sizeof pcs[0];
  for (unsigned i = 0; i < kRecords; ++i) {
    if (i == 3) append(slots, reuselens::RL_FORM_PADDING, 0);
    append(slots, forms[i], pcs[i]);
  }
  std::vector<const RlSlot*> starts{slots.data()};  // stale: the walk clears it first
  rlc::PackedCounts counts;
  rlc::resolve_records(ranges, slots.data(), slots.size(), &counts, with_starts ? &starts : nullptr);
  EXPECT(counts.records == kRecords && counts.unresolved == 1 && !counts.malformed && counts.packed);
  std::vector<const RlSlot*> want;
  reuselens::PackedCursor cursor(slots.data(), slots.size());
  while (const RlSlot* at = cursor.next()) want.push_back(at);
  EXPECT(want.size() == kRecords);
  if (with_starts) EXPECT(starts == want);
  const uint32_t fids[] = {1, 2, 1, 3, RL_UNRESOLVED_FUNCTION, 1, 1, 2, 1, 2, 1, 1};
  const uint64_t resolved[] = {0x110, 0x50, 0xb00, 0x20, 0x9000, 0x120, 0xb00, 0x50, 0x110, 0x130, 0xa00, 0x8fc};
  for (unsigned i = 0; i < kRecords; ++i) {
    EXPECT(uint32_t(want[i]->w[1]) == fids[i] && want[i]->w[1] >> 32 == 0xffffffffu);
    EXPECT(want[i]->w[2] == resolved[i]);
  }
  return 0;
}

// Full records alone are not packed; a record cut off by the end of the stream stops the walk, malformed, with
// the records before it kept.
int edges() {
  std::vector<RlSlot> slots;
  append(slots, reuselens::RL_FORM_FULL, 0x1000);
  append(slots, reuselens::RL_FORM_FULL, 0x1004);
  std::vector<const RlSlot*> starts;
  rlc::PackedCounts full;
  rlc::resolve_records({}, slots.data(), slots.size(), &full, &starts);
  EXPECT(full.records == 2 && !full.packed && !full.malformed && starts.size() == 2);
  append(slots, reuselens::RL_FORM_STRIDED, 0x1008);
  rlc::PackedCounts cut;
  rlc::resolve_records({}, slots.data(), slots.size() - 1, &cut, &starts);
  EXPECT(cut.malformed && cut.records == 2 && starts.size() == 2 && starts[1] == slots.data() + RL_FULL_SLOTS);
  return 0;
}

}  // namespace

int main() {
  if (walk(true) != 0 || walk(false) != 0 || edges() != 0) return 1;
  std::puts("ok");
  return 0;
}
