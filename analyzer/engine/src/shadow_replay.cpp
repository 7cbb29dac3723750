// Topological Distance (paper section 3.1): each lane-granule access is labelled against the last access in its
// shadow entry, and the labels become PCDepGraph edges (3.2.1). Shared and local records are replayed in
// phase 3 by their block's owner, global ones in phase 4 by the owners of their granules' chunks.
#include "engine_impl.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace reuselens {
namespace {

constexpr uint64_t kLocalThreadShift = 48;
constexpr uint64_t kCodeSynced = 1ull << 31, kCodePriorWrote = 1ull << 56;  // Run::code bits
// Value mode (Run::code bits): a load lane-granule with a value, and one that returned its granule's last loaded
// value again, or one within config.value_approx of it (approximate).
constexpr uint64_t kCodeValueLoad = 1ull << 57, kCodeSameValue = 1ull << 58, kCodeApproxValue = 1ull << 59;
constexpr uint64_t kCodeValueBits = kCodeValueLoad | kCodeSameValue | kCodeApproxValue;

// Label (section 3.1) of an access against a prior access of the same block by another issue: same thread, same
// warp (synced when a warp barrier of that warp ran between them) or the block (synced by a block barrier).
// Both shadows share it: global entries after their grid test, shared entries (one block's) directly.
inline uint64_t label_in_block(uint32_t old_tid, uint32_t old_wsync, uint32_t old_bsync, const RlRecord& r,
                               const Ctx& c, uint32_t tid) {
  if (old_tid == tid) return kThread;
  if (old_tid / 32 == r.warp) {
    const uint32_t d = (c.sync.wsync - old_wsync) & kWsyncMask;
    return kWarpDiff | (d != 0 && d <= kWsyncMask / 2 ? 8 : 0);  // 8 << 28 = kCodeSynced
  }
  const uint32_t d = (c.sync.bsync - old_bsync) & kBsyncMask;
  return kBlock | (d != 0 && d <= kBsyncMask / 2 ? 8 : 0);
}

// The footprints of one record found so far, by first granule: an open-addressed table of 64 slots for at most 32
// keys, whose occupancy is one word, so a record starts with nothing to clear. Before it, each lane of a record whose
// lanes read scattered words that some lanes share (a binary search's probes, each level's words read by several
// lanes) searched the footprints found before it one by one: up to 496 comparisons a record.
class FootprintIndex {
 public:
  // The footprint whose first granule is g (an index into first[]), or `count` after noting that the caller adds
  // g there.
  unsigned find_or_add(uint64_t g, unsigned count, const uint64_t* first) {
    unsigned slot = unsigned((g * 0x9e3779b97f4a7c15ull) >> 58);
    while (used_ >> slot & 1) {
      if (first[footprint_[slot]] == g) return footprint_[slot];
      slot = (slot + 1) & 63;
    }
    used_ |= uint64_t(1) << slot;
    footprint_[slot] = uint8_t(count);
    return count;
  }

 private:
  uint64_t used_ = 0;
  uint8_t footprint_[64];
};

}  // namespace

RegionShadow* Engine::Impl::search_region(uint64_t granule, size_t& hint) {
  uint64_t addr = granule << 2;
  auto it = std::upper_bound(regions.begin(), regions.end(), addr,
                             [](uint64_t a, const std::unique_ptr<RegionShadow>& r) { return a < r->base(); });
  if (it == regions.begin()) return nullptr;
  --it;
  if (!(*it)->contains_granule(granule)) return nullptr;
  hint = size_t(it - regions.begin());
  return it->get();
}
// Granule's entry as it stands, through the worker's cached page window (a summarized segment not written out:
// global_entry is for reading).
Entry* Engine::Impl::global_slot(uint64_t granule, Worker& wk) {
  if (granule - wk.page_lo < wk.page_hi - wk.page_lo) {
    wk.entry_region = wk.page_region;
    return wk.page + (granule - wk.page_lo);
  }
  RegionShadow* reg = find_region(granule, wk.region_hint);
  wk.entry_region = reg;
  if (!reg) return wk.fallback.entry(0, granule);
  Entry* e = reg->entry(granule);
  reg->page_span(granule, wk.page_lo, wk.page_hi);
  wk.page = e - (granule - wk.page_lo);
  wk.page_region = reg;
  return e;
}
Entry* Engine::Impl::global_entry(uint64_t granule, Worker& wk) {
  Entry* e = global_slot(granule, wk);
  if (wk.entry_region) wk.entry_region->settle(granule);
  return e;
}

// Consecutive lane-granules of one record with the same outcome (edge, access kind, barrier span) are folded
// into a run before they reach the EdgeBuffer: most lanes of a warp hit the same edge. `code` packs the
// outcome: bits 0-27 node of the prior access (to / prior_node), bits 28-30 label, bit 31 separated by a
// barrier (synced), bits 32-55 generation of a prior access of an earlier launch (cold edge with a
// prior-kernel origin; 0 otherwise), bit 56 the prior access wrote, bits 57-59 value mode's load with a value and
// its comparison with the granule's last loaded value (kCodeValueLoad, kCodeSameValue, kCodeApproxValue). code 0 (value
// bits aside) = cold with no prior access (no access kind counted). The barrier an edge credits is a function of the
// label within one record (c.sync.bar_any / c.sync.bar_block), so it need not be part of the code. No member
// initialisers: the outcome table of a record (replay_lanes) would be cleared for every record (a `rep stos` of 192
// bytes, a sizeable part of a shared record's fixed cost); only its filled slots are read.
struct Engine::Impl::Run {
  uint64_t code;
  uint64_t accesses, bytes;
};

namespace {
// A record's runs folded by outcome before they reach the EdgeBuffer: lanes often alternate between a few outcomes
// (a compare-exchange step of a sorting network: every other lane last saw its own thread, the others a neighbour;
// a tile that asynchronous copies wrote word by word: each footprint's words alternate between same thread, warp and
// block), and one EdgeBuffer visit per distinct outcome costs less than one per run. Up to kOutcomes distinct
// outcomes, then all are spilled. Only sums, so the result does not depend on the folding. Its runs have no
// initialiser, as Run has none: only the filled slots are read.
template <class Run>
class OutcomeFold {
 public:
  template <class Spill>
  void add(const Run& run, Spill&& spill) {
    for (unsigned i = 0; i < n_; ++i) {
      if (runs_[i].code == run.code) {
        runs_[i].accesses += run.accesses;
        runs_[i].bytes += run.bytes;
        return;
      }
    }
    if (n_ == kOutcomes) spill_all(spill);
    runs_[n_++] = run;
  }
  template <class Spill>
  void spill_all(Spill&& spill) {
    for (unsigned i = 0; i < n_; ++i) spill(runs_[i]);
    n_ = 0;
  }

 private:
  static constexpr unsigned kOutcomes = 8;
  Run runs_[kOutcomes];
  unsigned n_ = 0;
};

// touch_shared's outcome codes (not same-issue) for the words of a record whose lanes touch no word twice. Words one
// issue wrote differ only in their thread field, so their outcome is one of three (label_in_block: the same thread,
// this warp, another warp), worked out once per run of such words: the sync arithmetic and the code's assembly, word
// by word, were most of a 16-byte fragment load's 128 words.
class SharedWordOutcomes {
 public:
  SharedWordOutcomes(const RlRecord& r, const Ctx& c) : warp_(r.warp), wsync_(c.sync.wsync), bsync_(c.sync.bsync) {}
  uint64_t code(uint64_t old, uint32_t tid) {
    if (old == 0) return 0;
    if (((old ^ issue_) & kAllButThread) != 0) learn(old);  // (node ids start at 1: no entry matches issue 0)
    const uint32_t old_tid = s_tid(old);
    return by_class_[old_tid == tid ? 0 : old_tid / 32 == warp_ ? 1 : 2];
  }

 private:
  static constexpr uint64_t kAllButThread = ~(uint64_t(0x3ff) << 28);
  void learn(uint64_t old) {
    issue_ = old;
    const uint64_t base = s_node(old) | uint64_t(s_write(old)) << 56;
    const uint32_t wd = (wsync_ - s_wsync(old)) & kWsyncMask, bd = (bsync_ - s_bsync(old)) & kBsyncMask;
    by_class_[0] = base | uint64_t(kThread) << 28;
    by_class_[1] = base | uint64_t(kWarpDiff | (wd != 0 && wd <= kWsyncMask / 2 ? 8 : 0)) << 28;
    by_class_[2] = base | uint64_t(kBlock | (bd != 0 && bd <= kBsyncMask / 2 ? 8 : 0)) << 28;
  }
  uint32_t warp_, wsync_, bsync_;
  uint64_t issue_ = 0, by_class_[3] = {0, 0, 0};
};

// Folds a record's lane-granule outcomes into runs (consecutive ones with one outcome), and the runs by outcome,
// before they reach the EdgeBuffer: the lane loop's and the closed forms' that label word by word.
template <class Run, class Spill>
class WordRuns {
 public:
  explicit WordRuns(Spill spill) : spill_(spill) {}
  void add(uint64_t code, uint64_t bytes) {
    if (code != run_.code) {
      if (run_.accesses) outcomes_.add(run_, spill_);
      run_ = Run{code, 0, 0};
    }
    run_.accesses += 1;
    run_.bytes += bytes;
  }
  void finish() {
    if (run_.accesses) outcomes_.add(run_, spill_);
    outcomes_.spill_all(spill_);
  }

 private:
  Spill spill_;
  Run run_{0, 0, 0};
  OutcomeFold<Run> outcomes_;
};
}  // namespace

// Turns a run into its edge key (section 3.2.1) and adds its counts to the worker's EdgeBuffer.
void Engine::Impl::flush_run(const Run& run, const RlRecord& r, const Ctx& c, Worker& wk) {
  if (!run.accesses) return;
  EdgeKey k;
  k.from = c.id;
  uint32_t node = uint32_t(run.code & kNodeMask);
  uint8_t label = uint8_t(run.code >> 28 & 7);
  uint32_t og = uint32_t(run.code >> 32 & kGenMask);
  uint32_t barrier = 0;
  if (label == kCold) {
    if (og) {
      k.prior_kernel = gen_kernel[og];  // data last touched by an earlier launch: cold, with its origin
      k.prior_node = node;
    }
  } else {
    k.to = node;
    k.label = label;
    barrier = label == kWarpDiff ? c.sync.bar_any : label == kBlock ? c.sync.bar_block : 0;
  }
  EdgeStats& s = wk.buffer.slot(k, barrier, wk.acc).stats;
  s.bytes += run.bytes;
  s.accesses += run.accesses;
  if ((run.code & ~kCodeValueBits) != 0) {  // a prior access exists: rar/raw/war/waw (current letter first)
    unsigned cw = (r.access & RL_ACCESS_WRITE) != 0, ow = (run.code & kCodePriorWrote) != 0;
    s.kind[cw * 2 + ow] += run.accesses;
  }
  if (run.code & kCodeSynced) {
    s.synced += run.accesses;
    s.synced_bytes += run.bytes;
  }
  if (run.code & kCodeValueLoad) {
    s.value_loads += run.accesses;
    if (run.code & kCodeSameValue) s.same_value += run.accesses;
    if (run.code & kCodeApproxValue) s.approx_value += run.accesses;
  }
}

// One lane-granule access against its shadow entry: classify (section 3.1), then install the current access.
// `same_issue` comes from the SameIssueTable; `global` selects whether older generations are origins
// (global memory) or stale (shared/local). Returns the outcome code (see Run).
inline uint64_t Engine::Impl::touch(Entry* e, uint64_t w0, uint64_t w1, bool global, const RlRecord& r, const Ctx& c,
                                    uint32_t tid, bool same_issue) const {
  Entry old = *e;
  e->w0 = w0;
  e->w1 = w1;
  uint32_t og = e_gen(old);
  uint64_t prior_wrote = (old.w1 >> 50 & 1) << 56;
  if (og == gen) {
    const uint64_t label = same_issue ? uint64_t(kWarpSame)
                           : e_block(old) != r.block
                               ? uint64_t(kGrid)
                               : label_in_block(e_tid(old), e_wsync(old), e_bsync(old), r, c, tid);
    return e_node(old) | label << 28 | prior_wrote;
  }
  if (og != 0 && global) return e_node(old) | uint64_t(og) << 32 | prior_wrote;
  return 0;
}

// The same classification for a shared-memory entry (shared_shadow.h): every entry of a block's array belongs to
// the open launch and to that block, so the generation and block tests of touch() are always true there.
inline uint64_t Engine::Impl::touch_shared(uint64_t* e, uint64_t now, const RlRecord& r, const Ctx& c, uint32_t tid,
                                           bool same_issue) const {
  const uint64_t old = *e;
  *e = now;
  if (!old) return 0;
  const uint64_t label =
      same_issue ? uint64_t(kWarpSame) : label_in_block(s_tid(old), s_wsync(old), s_bsync(old), r, c, tid);
  return s_node(old) | label << 28 | uint64_t(s_write(old)) << 56;
}

// The lanes after the first of a record whose lanes share one granule: each finds the entry the lane before it
// (this very issue) wrote, warp_same_inst, whatever the shadow held. Needs no entry, so whichever worker holds the
// record may count them.
void Engine::Impl::count_followers(const RlRecord& r, const Ctx& c, Worker& wk) {
  const uint64_t followers = uint64_t(popcount32(r.active_mask)) - 1;
  const bool write = (r.access & RL_ACCESS_WRITE) != 0;
  const uint64_t code = uint64_t(c.id) | uint64_t(kWarpSame) << 28 | uint64_t(write) << 56;
  const RlRecord* values = values_of(r);
  if (values && !write && (values->active_mask & r.active_mask) == r.active_mask) {
    // Value mode, every lane with a value (distribute_and_route keeps no other broadcast load): each follower
    // compares with the lane before it, which wrote the granule's value a moment earlier.
    const Repeats rep = broadcast_repeats(r, *values);
    const uint64_t other = followers - rep.same - rep.approx;
    flush_run(Run{code | kCodeValueLoad | kCodeSameValue, rep.same, rep.same * r.size}, r, c, wk);
    flush_run(Run{code | kCodeValueLoad | kCodeApproxValue, rep.approx, rep.approx * r.size}, r, c, wk);
    flush_run(Run{code | kCodeValueLoad, other, other * r.size}, r, c, wk);
    return;
  }
  flush_run(Run{code, followers, followers * r.size}, r, c, wk);
}

// A broadcast load's followers (the active lanes after the first) whose value equals the lane's before them, and
// (4-byte lanes, config.value_approx) those within the threshold of it otherwise.
Engine::Impl::Repeats Engine::Impl::broadcast_repeats(const RlRecord& r, const RlRecord& values) const {
  Repeats out;
  const bool approx = approx_on && r.size == 4;
  uint32_t before = granule_value(lane_value(values, __builtin_ctz(r.active_mask)), 0);
  for (uint32_t m = r.active_mask & (r.active_mask - 1); m; m &= m - 1) {
    const uint32_t now = granule_value(lane_value(values, __builtin_ctz(m)), 0);
    out.same += now == before;
    out.approx += approx && now != before && approx_float(before, now, config.value_approx);
    before = now;
  }
  return out;
}

// The label shared by every lane of a consecutive record (kConsecutive) whose entries one issue of this block wrote
// alike: lane j's prior thread is old_tid0 + j and its own tid0 + j, so the same thread for all or for none, and
// in this warp for all or for none unless the prior threads straddle the warp's bounds (a stencil's a[tid + 1]);
// then the labels differ per lane, and kMixedLabels says so.
constexpr uint64_t kMixedLabels = ~0ull;
inline uint64_t consecutive_label(uint32_t old_tid0, uint32_t tid0, unsigned lanes, uint32_t old_wsync,
                                  uint32_t old_bsync, const RlRecord& r, const Ctx& c) {
  const uint32_t lo = uint32_t(r.warp) * 32, hi = lo + 31, old_last = old_tid0 + lanes - 1;
  if (old_tid0 != tid0 && !(old_tid0 >= lo && old_last <= hi) && !(old_last < lo || old_tid0 > hi)) return kMixedLabels;
  return label_in_block(old_tid0, old_wsync, old_bsync, r, c, tid0);
}

// A global entry's thread field (pack_w1) is one more per lane in the entries one coalesced issue wrote:
// off_issue(x, ref, i, shift) is 0 when entry x, granule i of a run, is what the issue that wrote `ref` (granule 0)
// wrote there.
constexpr uint64_t kEntryTidStep = 1ull << 40;
inline uint64_t off_issue(const Entry& x, const Entry& ref, unsigned i, unsigned shift) {
  return (x.w0 ^ ref.w0) | (x.w1 - ref.w1 - uint64_t(i >> shift) * kEntryTidStep);
}

// A coalesced record (kConsecutive: lane first + j on the granules of footprint j, size / 4 of them) whose
// entries were all written by one issue laid out the same way (equal but for the thread, one more per footprint:
// an earlier coalesced access of those granules, in this launch or an earlier one), or are all empty. Every lane
// then has the same outcome, and the record is one run: the entries are read once to check that and written
// once, instead of each lane-granule's classification in turn. A stencil's a[tid + 1] and a[tid - 1] find their
// last or first lane's granule written by the neighbouring warp and the others by this one: two such runs, split
// at that lane (not in value mode, whose comparison walks the record's lanes from its first). Same counts and
// entries as the lane loop; false, with nothing done, when the entries differ otherwise or their threads straddle
// the warp's.
bool Engine::Impl::replay_consecutive(const RlRecord& r, const Ctx& c, uint32_t mask, unsigned w, Worker& wk,
                                      Entry* e) {
  const unsigned n = popcount32(mask), shift = consecutive_shift(r.size), granules = n << shift;
  // Value mode: the run's value slots, contiguous beside the entries; none (a region without a value shadow): the
  // lane loop, whose value table serves any address.
  const RlRecord* values = values_of(r);
  uint64_t* slots = values ? wk.page_region->value_slot(r.addr[__builtin_ctz(mask)] >> 2) : nullptr;
  if (values && !slots) return false;
  const unsigned first = unsigned(__builtin_ctz(mask));
  uint64_t head = 0, tail = 0;
  if (alike_entries(e, granules, shift)) {
    if (!consecutive_code(r, c, first, n, e, &head)) return false;
    write_consecutive(r, c, first, n, shift, e, head, w, wk);
    if (values) {
      flush_consecutive_values(
          r, c, head, n, shift, *values, [slots](unsigned i) { return slots + i; }, wk.page_region, w, wk);
    } else {
      flush_run(Run{head, uint64_t(granules), uint64_t(n) * r.size}, r, c, wk);
    }
    return true;
  }
  if (values) return false;
  // The first granule whose entry does not follow the first one's issue, at a lane's start, and the rest alike.
  unsigned split = 1;
  while (split < granules && !off_issue(e[split], e[0], split, shift)) ++split;
  const unsigned lanes = split >> shift;
  if (split & ((1u << shift) - 1) || !alike_entries(e + split, granules - split, shift)) return false;
  if (!consecutive_code(r, c, first, lanes, e, &head) ||
      !consecutive_code(r, c, first + lanes, n - lanes, e + split, &tail)) {
    return false;
  }
  write_consecutive(r, c, first, lanes, shift, e, head, w, wk);
  write_consecutive(r, c, first + lanes, n - lanes, shift, e + split, tail, w, wk);
  flush_run(Run{head, uint64_t(split), uint64_t(lanes) * r.size}, r, c, wk);
  flush_run(Run{tail, uint64_t(granules - split), uint64_t(n - lanes) * r.size}, r, c, wk);
  return true;
}

// Whether `count` entries, `1 << shift` per lane, were written by one issue laid out the same way (equal but for
// the thread, one more per lane), or are all empty.
bool Engine::Impl::alike_entries(const Entry* e, unsigned count, unsigned shift) {
  const Entry ref = e[0];
  uint64_t differ = 0, held = 0;
  // Granule i belongs to lane i >> shift (a flat loop the compiler vectorises for the 32-bit case).
  for (unsigned i = 0; i < count; ++i) {
    differ |= off_issue(e[i], ref, i, shift);
    held |= e[i].w0 | e[i].w1;
  }
  return differ == 0 || held == 0;
}

// The outcome code shared by lanes first .. first + n - 1 of the record, whose alike entries start at `e` (0: all
// empty, every lane's first touch). False when one outcome does not hold them all.
bool Engine::Impl::consecutive_code(const RlRecord& r, const Ctx& c, unsigned first, unsigned n, const Entry* e,
                                    uint64_t* code) {
  const Entry ref = e[0];
  *code = 0;
  if (!(ref.w0 | ref.w1)) return true;
  const uint32_t tid0 = uint32_t(r.warp) * 32 + first, old_tid0 = e_tid(ref);
  if (old_tid0 + n - 1 > 0x3ff) return false;  // the thread field cannot hold them: not one issue's entries
  const uint32_t og = e_gen(ref);
  const uint64_t prior_wrote = (ref.w1 >> 50 & 1) << 56;
  if (og == gen) {
    uint64_t label = kGrid;
    if (e_block(ref) == r.block) {
      label = consecutive_label(old_tid0, tid0, n, e_wsync(ref), e_bsync(ref), r, c);
      if (label == kMixedLabels) return false;
    }
    *code = e_node(ref) | label << 28 | prior_wrote;
  } else if (og != 0) {
    *code = e_node(ref) | uint64_t(og) << 32 | prior_wrote;
  }
  return true;
}

// Lanes first .. first + n - 1 of the record write their entries (`1 << shift` each, from `e`); with `code` 0,
// each granule's first touch counts.
void Engine::Impl::write_consecutive(const RlRecord& r, const Ctx& c, unsigned first, unsigned n, unsigned shift,
                                     Entry* e, uint64_t code, unsigned w, Worker& wk) {
  const bool write = (r.access & RL_ACCESS_WRITE) != 0;
  const uint64_t w0 = pack_w0(gen, c.id, c.sync.wsync);
  const uint64_t w1 = pack_w1(r.block, uint32_t(r.warp) * 32 + first, write, c.sync.bsync);
  for (unsigned i = 0; i < n << shift; ++i) {
    e[i].w0 = w0;
    e[i].w1 = w1 + uint64_t(i >> shift) * kEntryTidStep;
  }
  if (code == 0) {
    for (unsigned i = 0; i < n << shift; ++i) wk.page_region->count_first_touch(w);
  }
}

// A warp's 4-byte access of one aligned 128-byte segment, lane i on granule i (RegionShadow, "coalesced segments"),
// whose segment is summarized or whose entries one such issue wrote alike (or none did): one outcome for all 32
// lanes, from the segment's first entry (consecutive_code), and only that entry written, the segment flagged
// summarized. 16 bytes read and written where the closed form (replay_consecutive) reads and writes 512; the counts
// and, once written out, the entries are the same. False, with nothing done, for other entries (a stencil's
// neighbouring access wrote part of the segment): the closed form or the lane loop then replays the record.
bool Engine::Impl::replay_segment(const RlRecord& r, const Ctx& c, unsigned w, Worker& wk, Entry* e) {
  RegionShadow* reg = wk.page_region;
  const uint64_t g = r.addr[0] >> 2;
  uint8_t& flag = reg->summarized(g);
  uint64_t code = 0;
  if (!flag && !alike_entries(e, 32, 0)) return false;
  if (!consecutive_code(r, c, 0, 32, e, &code)) {  // cannot fail for warp-aligned threads; kept exact regardless
    if (flag) reg->expand(g, flag);
    return false;
  }
  e->w0 = pack_w0(gen, c.id, c.sync.wsync);
  e->w1 = pack_w1(r.block, uint32_t(r.warp) * 32, (r.access & RL_ACCESS_WRITE) != 0, c.sync.bsync);
  if (code == 0) {
    for (unsigned i = 0; i < 32; ++i) reg->count_first_touch(w);
  }
  if (!flag) reg->summarize(flag);
  ++wk.segment_records;
  flush_run(Run{code, 32, 128}, r, c, wk);
  return true;
}

// Value mode's share of a coalesced record replayed in closed form: granule i of the run belongs to lane
// first + (i >> shift), and slot_of(i) is its value-shadow entry; each load granule with a value is compared as
// compare_value compares, and the record's one outcome is split into its redundant, its other valued and its
// unvalued granules (a run each). Stores only write their entries (the value shadow remembers loads). `region`:
// the global record's allocation, which counts its loads (null for shared memory).
template <class SlotOf>
void Engine::Impl::flush_consecutive_values(const RlRecord& r, const Ctx& c, uint64_t code, unsigned n, unsigned shift,
                                            const RlRecord& values, SlotOf slot_of, RegionShadow* region, unsigned w,
                                            Worker& wk) {
  const uint64_t granules = uint64_t(n) << shift;
  uint64_t valued = 0, same = 0, approx = 0;
  if (!(r.access & RL_ACCESS_WRITE)) {
    const unsigned first = unsigned(__builtin_ctz(r.active_mask)), part = (1u << shift) - 1;
    const bool approx_test = approx_on && code != 0 && (r.size == 4 || r.size == 8);  // as compare_value
    for (unsigned i = 0; i < granules; ++i) {
      const unsigned lane = first + (i >> shift);
      if (!(values.active_mask >> lane & 1)) continue;
      const uint64_t now = kValueSeen | granule_value(lane_value(values, lane), i & part);
      uint64_t* slot = slot_of(i);
      const uint64_t old = *slot;
      const bool equal = code != 0 && old == now;
      ++valued;
      same += equal;
      if (approx_test && !equal && (old & kValueSeen)) {
        // a double's high granule (odd i) decides for both; the low one reads its sibling, not yet replaced
        const uint64_t high = r.size == 8 && !(i & 1) ? *slot_of(i + 1) : old;
        approx += near_value(r.size, high, now, lane_value(values, lane));
      }
      *slot = now;
    }
    if (region) region->count_value_loads(w, valued, same);
  }
  const uint64_t other = valued - same - approx;
  flush_run(Run{code | kCodeValueLoad | kCodeSameValue, same, same * 4}, r, c, wk);
  flush_run(Run{code | kCodeValueLoad | kCodeApproxValue, approx, approx * 4}, r, c, wk);
  flush_run(Run{code | kCodeValueLoad, other, other * 4}, r, c, wk);
  flush_run(Run{code, granules - valued, (granules - valued) * 4}, r, c, wk);
}

// The same for a consecutive shared record (4-, 8- or 16-byte lanes), against its block's shared entries
// (shared_shadow.h: no generation, no block). Entries that one issue did not write alike (a GEMM's tile that 4-byte
// asynchronous copies of several warps wrote, read back as 16-byte fragments; a tile written by such fragments,
// overwritten word by word) are labelled word by word in this one pass, outside value mode: the lane loop's
// outcomes, without its per-granule lookups (the lanes' footprints are consecutive, so no lane meets another's
// word of this issue). False, with nothing done, when the words are not one run of the block's flat array (offsets
// beyond it are kept one by one), and in value mode when the entries differ, whose comparison the lane loop makes.
bool Engine::Impl::replay_shared_consecutive(const RlRecord& r, const Ctx& c, uint32_t mask, Worker& wk) {
  const unsigned n = popcount32(mask), shift = consecutive_shift(r.size);  // word i belongs to lane i >> shift
  const unsigned words = n << shift;
  const unsigned first = unsigned(__builtin_ctz(mask));
  const uint64_t g0 = r.addr[first] >> 2;
  // Words past the flat array are map nodes, which may lie back to back in memory: their addresses prove nothing.
  if (g0 + words > SharedShadow::kMaxFlatWords) return false;
  const RlRecord* values = values_of(r);
  BlockState& bs = wk.block_state(r.block);
  bs.shared.entry(g0 + words - 1, wk.shared_words);  // grows the array first, if it must
  uint64_t* e = bs.shared.entry(g0, wk.shared_words);
  constexpr uint64_t kTidStep = 1ull << 28;
  const uint64_t ref = e[0];
  uint64_t differ = 0, held = 0;
  for (unsigned i = 0; i < words; ++i) {
    differ |= e[i] - ref - uint64_t(i >> shift) * kTidStep;
    held |= e[i];
  }
  const uint32_t tid0 = uint32_t(r.warp) * 32 + first;
  const bool write = (r.access & RL_ACCESS_WRITE) != 0;
  const uint64_t now = pack_shared(c.id, tid0, write, c.sync.wsync, c.sync.bsync);
  uint64_t code = 0;
  bool alike = differ == 0 || held == 0;
  if (alike && held != 0) {
    const uint32_t old_tid0 = s_tid(ref);
    const uint64_t label = old_tid0 + n - 1 > 0x3ff
                               ? kMixedLabels
                               : consecutive_label(old_tid0, tid0, n, s_wsync(ref), s_bsync(ref), r, c);
    alike = label != kMixedLabels;
    if (alike) code = s_node(ref) | label << 28 | uint64_t(s_write(ref)) << 56;
  }
  if (!alike) {
    if (values) return false;
    const auto spill = [&](const Run& o) { flush_run(o, r, c, wk); };
    WordRuns<Run, decltype(spill)> runs(spill);
    SharedWordOutcomes outcomes(r, c);
    for (unsigned i = 0; i < words; ++i) {
      const uint64_t lane = i >> shift;
      runs.add(outcomes.code(e[i], tid0 + uint32_t(lane)), 4);
      e[i] = now + lane * kTidStep;
    }
    runs.finish();
    return true;
  }
  for (unsigned i = 0; i < words; ++i) e[i] = now + uint64_t(i >> shift) * kTidStep;
  if (values) {
    if (write && !(r.access & RL_ACCESS_READ) && code != 0) {  // silent against the block's own data (replay_lanes)
      wk.stats_for(c.id)->values.silent += unsigned(popcount32(uint32_t(values->pc) & values->active_mask & mask));
    }
    flush_consecutive_values(
        r, c, code, n, shift, *values, [&bs, g0](unsigned i) { return bs.shared_values.entry(0, g0 + i); }, nullptr, 0,
        wk);
  } else {
    flush_run(Run{code, words, uint64_t(n) * r.size}, r, c, wk);
  }
  return true;
}

// A shared record whose lanes' footprints share no word (kNoOverlap: a padded tile's column stored by a warp, a
// swizzled fragment load) outside value mode: the lane loop's outcomes and entries in one pass over the lanes, each
// word labelled by SharedWordOutcomes instead of label_in_block. False, with nothing done, when a footprint reaches
// past the block's flat array (offsets beyond it are kept one by one), and for a record with no lane (which makes
// no entry).
bool Engine::Impl::replay_shared_disjoint(const RlRecord& r, const Ctx& c, uint32_t mask, Worker& wk,
                                          uint64_t granules) {
  if (mask == 0) return false;
  uint64_t top = 0;  // the highest footprint start
  for (uint32_t m = mask; m; m &= m - 1) top = std::max(top, r.addr[__builtin_ctz(m)] >> 2);
  if (top + granules > SharedShadow::kMaxFlatWords) return false;
  BlockState& bs = wk.block_state(r.block);
  const uint64_t last = top + granules - 1;
  uint64_t* const words = bs.shared.entry(last, wk.shared_words) - last;  // grows the array first, if it must
  const uint64_t shared_base = pack_shared(c.id, 0, (r.access & RL_ACCESS_WRITE) != 0, c.sync.wsync, c.sync.bsync);
  const uint32_t warp_tid = uint32_t(r.warp) * 32;
  const auto spill = [&](const Run& o) { flush_run(o, r, c, wk); };
  WordRuns<Run, decltype(spill)> runs(spill);
  SharedWordOutcomes outcomes(r, c);
  for (uint32_t m = mask; m; m &= m - 1) {
    const unsigned lane = unsigned(__builtin_ctz(m));
    const uint32_t tid = warp_tid + lane;
    const uint64_t now = shared_base | uint64_t(tid) << 28;
    uint64_t* e = words + (r.addr[lane] >> 2);
    for (uint64_t k = 0; k < granules; ++k) {  // a lane's granules cover its size bytes: 4 per word, the rest last
      runs.add(outcomes.code(e[k], tid), r.size <= 4 ? r.size : std::min<uint64_t>(4, r.size - 4 * k));
      e[k] = now;
    }
  }
  runs.finish();
  return true;
}

// Lanes of a shared record that share their address (a tile's row or column read by several lanes of a warp, as
// GEMM fragments are, or all of them: a broadcast), in closed form: per distinct footprint, its first lane
// against the entries, the other lanes warp_same_inst on what the lane before them wrote. Only when the
// footprints are pairwise disjoint, so that no lane meets another footprint's write of this issue: the counts and
// the final entries are then the lane loop's (sums of runs do not depend on their order). Any number of
// footprints, up to one per lane: cuBLAS's 64 x 64-tile SGEMM reads 16-byte fragments that lanes share in pairs
// (16 footprints), which the lane loop replayed word by word, 128 lookups of the same-issue table. False, with
// nothing done, otherwise.
bool Engine::Impl::replay_shared_groups(const RlRecord& r, const Ctx& c, uint32_t mask, Worker& wk, uint64_t granules) {
  uint64_t first[RL_WARP_SIZE];  // each footprint's first granule (the lane loop's g0)
  uint32_t lanes[RL_WARP_SIZE];  // the lanes on it
  unsigned n = 0, at = 0;        // at: the footprint of the lane before
  FootprintIndex index;
  for (uint32_t m = mask; m; m &= m - 1) {
    const unsigned lane = unsigned(__builtin_ctz(m));
    const uint64_t g = r.addr[lane] >> 2;
    // GEMM fragments put a lane on its predecessor's footprint (lanes 4i..4i+3 on one) or on the next one (lane i
    // on the (i mod 4)-th of four): those two are tried before the index.
    unsigned i = at;
    if (n == 0 || first[i] != g) {
      i = at + 1 < n ? at + 1 : 0;
      if (i >= n || first[i] != g) {
        i = index.find_or_add(g, n, first);
        if (i == n) {
          first[n] = g;
          lanes[n++] = 0;
        }
      }
    }
    lanes[i] |= 1u << lane;
    at = i;
  }
  if (n == unsigned(popcount32(mask))) return false;  // no lane shares its address: the overlap is partial
  if (granules > 1) {  // one-word footprints are disjoint when distinct; wider ones when sorted ends keep apart
    uint64_t sorted[RL_WARP_SIZE];
    for (unsigned i = 0; i < n; ++i) {
      unsigned j = i;
      for (; j > 0 && sorted[j - 1] > first[i]; --j) sorted[j] = sorted[j - 1];
      sorted[j] = first[i];
    }
    for (unsigned i = 1; i < n; ++i) {
      if (sorted[i] - sorted[i - 1] < granules) return false;
    }
  }
  const bool write = (r.access & RL_ACCESS_WRITE) != 0;
  const uint64_t shared_base = pack_shared(c.id, 0, write, c.sync.wsync, c.sync.bsync);
  const uint32_t warp_tid = uint32_t(r.warp) * 32;
  BlockState& bs = wk.block_state(r.block);
  OutcomeFold<Run> outcomes;  // as the lane loop folds them
  const auto spill = [&](const Run& o) { flush_run(o, r, c, wk); };
  const auto add = [&](uint64_t code, uint64_t accesses, uint64_t bytes) {
    outcomes.add(Run{code, accesses, bytes}, spill);
  };
  for (unsigned i = 0; i < n; ++i) {
    const unsigned lead = unsigned(__builtin_ctz(lanes[i])), last = 31u - unsigned(__builtin_clz(lanes[i]));
    const uint32_t tid0 = warp_tid + lead, tid1 = warp_tid + last;
    const uint64_t now = shared_base | uint64_t(tid0) << 28, after = shared_base | uint64_t(tid1) << 28;
    bs.shared.entry(first[i] + granules - 1, wk.shared_words);  // grows the array first
    uint64_t* e = bs.shared.entry(first[i], wk.shared_words);
    // The footprint's words are consecutive entries of the flat array. (Words past it are map nodes, which may lie
    // back to back in memory: their addresses prove nothing.)
    if (first[i] + granules <= SharedShadow::kMaxFlatWords) {
      // A footprint one earlier access wrote or read whole (a fragment stored by one lane) holds the same entry in
      // each of its words: one outcome for all of them, as the loop below would find word by word.
      uint64_t differ = 0;
      for (uint64_t k = 1; k < granules; ++k) differ |= e[k] ^ e[0];
      if (differ == 0) {
        const uint64_t code = touch_shared(e, now, r, c, tid0, false);
        for (uint64_t k = 0; k < granules; ++k) e[k] = after;  // the footprint's last lane wrote it last
        add(code, granules, r.size);  // granules cover the lane's size bytes: 4 per word, the rest in the last
        continue;
      }
      for (uint64_t k = 0; k < granules; ++k) {
        const uint64_t code = touch_shared(e + k, now, r, c, tid0, false);
        e[k] = after;
        add(code, 1, std::min<uint64_t>(4, r.size - 4 * k));
      }
      continue;
    }
    for (uint64_t k = 0; k < granules; ++k) {  // words past the flat array, kept one by one (shared_shadow.h)
      e = bs.shared.entry(first[i] + k, wk.shared_words);
      const uint64_t code = touch_shared(e, now, r, c, tid0, false);
      *e = after;
      add(code, 1, std::min<uint64_t>(4, r.size - 4 * k));
    }
  }
  outcomes.spill_all(spill);
  const uint64_t followers = uint64_t(popcount32(mask)) - n;
  const Run same{uint64_t(c.id) | uint64_t(kWarpSame) << 28 | uint64_t(write) << 56, followers * granules,
                 followers * r.size};
  flush_run(same, r, c, wk);
  return true;
}

// Value mode: where global granule g's value lives: beside its entry inside an allocation (`region`, when it has a
// value shadow), else in the worker's sparse table.
uint64_t* Engine::Impl::global_value_slot(uint64_t g, RegionShadow* region, Worker& wk) {
  if (region) {
    if (uint64_t* slot = region->value_slot(g)) return slot;
  }
  return wk.global_values.entry(0, g);
}

// Value mode, one load lane-granule with a value (LoadSpy's temporal redundancy, seeds/001 section 3;
// docs/engine.md "Value redundancy"): counted (kCodeValueLoad, the redundancy's denominator, so that launches
// sampled without values do not dilute it), and redundant (kCodeSameValue) when it returns the value the
// granule's last load returned, a prior access of the granule existing (code != 0: the same allocation's data;
// memory freed and allocated again starts cold); approximately redundant (kCodeApproxValue) when it did not but
// its lane's value is within config.value_approx of the last one (near_value). The granule then remembers this
// load's value.
// Value mode's approximate test (value_shadow.h), for 4- and 8-byte lanes: a 4-byte granule's remembered value
// `old` against `now`, as floats; for an 8-byte lane, the remembered high granule `old` (0 when none was
// remembered) against the high word of the lane's `value`, as doubles.
bool Engine::Impl::near_value(uint32_t size, uint64_t old, uint64_t now, uint64_t value) const {
  if (size == 4) return approx_float(uint32_t(old), uint32_t(now), config.value_approx);
  return (old & kValueSeen) && approx_double_high(uint32_t(old), granule_value(value, 1), config.value_approx);
}

template <unsigned kSpace>
uint64_t* Engine::Impl::value_slot(uint64_t g, uint32_t tid, BlockState* bs, Worker& wk, RegionShadow* region) const {
  return kSpace == RL_SPACE_SHARED  ? bs->shared_values.entry(0, g)
         : kSpace == RL_SPACE_LOCAL ? bs->local_values.entry(uint64_t(tid) << kLocalThreadShift, g)
                                    : global_value_slot(g, region, wk);
}

template <unsigned kSpace>
uint64_t Engine::Impl::compare_value(uint64_t code, const RlRecord& values, unsigned lane, uint64_t g, uint64_t k,
                                     uint32_t size, uint32_t tid, BlockState* bs, Worker& wk, RegionShadow* region,
                                     unsigned w) const {
  uint64_t* seen = value_slot<kSpace>(g, tid, bs, wk, region);
  const uint64_t old = *seen, now = kValueSeen | granule_value(lane_value(values, lane), k);
  const bool same = code != 0 && old == now;  // now has kValueSeen: equal only to a remembered load
  bool approx = false;
  if (!same && code != 0 && approx_on && (old & kValueSeen) && (size == 4 || size == 8)) {
    // granule 1 of a double holds the high word; granule 0 reads its sibling's, not yet replaced
    const uint64_t high = size == 8 && k == 0 ? *value_slot<kSpace>(g + 1, tid, bs, wk, region) : old;
    approx = near_value(size, high, now, lane_value(values, lane));
  }
  code |= kCodeValueLoad | (same ? kCodeSameValue : 0) | (approx ? kCodeApproxValue : 0);
  *seen = now;
  if (region) region->count_value_loads(w, 1, same);  // the object's share (object touches)
  return code;
}

// All lane-granules of one record (or of the lanes `mask` routed to this worker), specialised per space, for
// one-granule accesses (size <= 4, the common case: a run's bytes are accesses * size) and for global records
// whose granules all lie in one shadow page of a region (kDirect: `page` + (g - `page_lo`), no lookup).
template <unsigned kSpace, bool kOneGranule, bool kDirect>
void Engine::Impl::replay_lanes(const RlRecord& r, const Ctx& c, uint32_t mask, unsigned w, Worker& wk, Entry* page,
                                uint64_t page_lo) {
  constexpr bool global = kSpace == RL_SPACE_GLOBAL;
  const bool write = (r.access & RL_ACCESS_WRITE) != 0;
  const uint32_t size = r.size;
  const uint64_t granules = kOneGranule ? 1 : (size + 3) / 4;
  const uint64_t w0 = pack_w0(gen, c.id, c.sync.wsync);
  const uint64_t w1_base = pack_w1(r.block, 0, write, c.sync.bsync);
  const uint64_t shared_base = pack_shared(c.id, 0, write, c.sync.wsync, c.sync.bsync);
  const bool check_same = kSpace != RL_SPACE_LOCAL && !(c.flags & kNoOverlap);
  // Lanes of other owners may lie in `mask` only when a lane spans granules of two owners: a lane of at most 4 bytes
  // has one granule, and route_global gave it to that granule's owner alone. Without wide allocations that takes two
  // chunks; with them, a lane across a wide allocation's bound may do it inside one chunk.
  const WideUnits& wide = batch_slots[step_slot].wide;
  const bool filter = global && !kDirect && !kOneGranule && W > 1 && (!(c.flags & kOneChunk) || wide.count);
  if constexpr (kOneGranule && global) {
    // All lanes on one granule (a broadcast read of a scalar, a tile row read by a whole warp): the lanes after
    // the first find the entry the previous lane of this very issue wrote, so their outcome is known without
    // touching the entry 31 times. Same counts and same final entry as the lane loop below. The distributions
    // flag such records (kSharedGranule) and count those later lanes themselves, so that the granule's owner,
    // which every warp reading that scalar meets, only touches the entry. (Shared records
    // take replay_shared_groups below, of which a broadcast is the one-footprint case.)
    if (c.flags & kSharedGranule) {
      const unsigned first = unsigned(__builtin_ctz(mask)), last = 31u - unsigned(__builtin_clz(mask));
      const uint64_t g = r.addr[first] >> 2;
      const uint32_t tid0 = uint32_t(r.warp) * 32 + first, tid1 = uint32_t(r.warp) * 32 + last;
      Run lead{0, 1, size};
      if (kDirect) wk.page_region->settle(g);
      Entry* e = kDirect ? page + (g - page_lo) : global_entry(g, wk);
      if (RegionShadow* reg = kDirect ? wk.page_region : wk.entry_region) {
        reg->note_accesses(r.access, g, w, uint64_t(popcount32(mask)));
      }
      lead.code = touch(e, w0, w1_base | uint64_t(tid0) << 40, true, r, c, tid0, false);
      e->w1 = w1_base | uint64_t(tid1) << 40;
      RegionShadow* region = kDirect ? wk.page_region : wk.entry_region;
      if (region && lead.code == 0) region->count_first_touch(w);
      if (const RlRecord* values = values_of(r); values && !write && (values->active_mask >> first & 1)) {
        // Value mode (every lane with a value: distribute_and_route): the first lane compares, the granule then
        // remembers the last lane's value, and the object counts the followers as count_followers does.
        lead.code = compare_value<RL_SPACE_GLOBAL>(lead.code, *values, first, g, 0, size, tid0, nullptr, wk, region, w);
        *global_value_slot(g, region, wk) = kValueSeen | granule_value(lane_value(*values, last), 0);
        if (region) region->count_value_loads(w, uint64_t(popcount32(mask)) - 1, broadcast_repeats(r, *values).same);
      }
      flush_run(lead, r, c, wk);  // the lanes after the first: count_followers, in the distributions
      return;
    }
  }
  if constexpr (kSpace == RL_SPACE_SHARED) {
    if ((c.flags & kConsecutive) && mask == r.active_mask && replay_shared_consecutive(r, c, mask, wk)) return;
    if (check_same && (mask & (mask - 1)) && !batch_values && replay_shared_groups(r, c, mask, wk, granules)) return;
    if (!check_same && !values_of(r) && replay_shared_disjoint(r, c, mask, wk, granules)) return;
  }
  // Value mode: each lane's value (its companion, null without one), compared per lane-granule below.
  const RlRecord* values = values_of(r);
  const bool plain_load = !(r.access & RL_ACCESS_WRITE);
  // Value mode, shared and local stores: the silent lanes (the companion's pc) whose granule this block (thread)
  // had accessed before. Shared and local memory start with whatever an earlier block left there: a store that
  // happens to match those stale bytes is no silent store of the program.
  const uint32_t silent =
      !global && values && !plain_load && !(r.access & RL_ACCESS_READ) ? uint32_t(values->pc) & values->active_mask : 0;
  uint64_t silent_known = 0;
  if (check_same) wk.same.begin(size_t(popcount32(mask)) * granules);
  if constexpr (kDirect) {  // every lane lies in that region's page, and so in one of its slices
    RegionShadow* reg = wk.page_region;
    reg->note_accesses(r.access, page_lo, w, uint64_t(popcount32(mask)) * granules);
    if ((c.flags & kConsecutive) && one_run_of_lanes(mask)) {
      const uint64_t lo = r.addr[__builtin_ctz(mask)] >> 2;
      if (kOneGranule && mask == ~0u && r.size == 4 && !(lo & 31) && reg->whole_segment(lo) &&
          replay_segment(r, c, w, wk, page + (lo - page_lo))) {
        return;
      }
      if (reg->any_summary()) {  // the entries it reads, written out (at most four segments: 16-byte lanes)
        const uint64_t hi = (r.addr[31 - __builtin_clz(mask)] >> 2) + granules - 1;
        for (uint64_t g = lo & ~uint64_t(31); g <= hi; g += 32) reg->settle(std::max(g, lo));
      }
      if (replay_consecutive(r, c, mask, w, wk, page + (lo - page_lo))) return;
    }
  }
  BlockState* bs = global ? nullptr : &wk.block_state(r.block);
  uint64_t scratch[RL_WARP_SIZE];
  const uint64_t* addr = lane_addresses(r, scratch);  // shared and local records are always whole
  RegionShadow* lane_region = nullptr;  // global, not kDirect: the region of the last lane (see the lane loop)
  const uint32_t warp_tid = uint32_t(r.warp) * 32;
  const auto spill = [&](const Run& o) { flush_run(o, r, c, wk); };
  WordRuns<Run, decltype(spill)> runs(spill);
  for (uint32_t m = mask; m; m &= m - 1) {
    if constexpr (global && !kDirect) wk.lines_ahead.ask_one();
    unsigned lane = unsigned(__builtin_ctz(m));
    uint32_t tid = warp_tid + lane;
    uint64_t w1 = w1_base | uint64_t(tid) << 40;
    uint64_t g0 = addr[lane] >> 2;
    for (uint64_t k = 0; k < granules; ++k) {
      uint64_t g = g0 + k;
      bool same;
      uint64_t code;
      if constexpr (kSpace == RL_SPACE_SHARED) {
        uint64_t* e = bs->shared.entry(g, wk.shared_words);
        same = check_same && wk.same.seen(g);
        code = touch_shared(e, shared_base | uint64_t(tid) << 28, r, c, tid, same);
      } else {
        Entry* e;
        if (kDirect) {
          wk.page_region->settle(g);
          e = page + (g - page_lo);
        } else if (global) {
          if (filter && wide.owner(g, W) != w) continue;
          // Lanes of a strided or gathered record land on a new shadow page each but mostly in one allocation:
          // the region of the lane before is tried first, without the page cache and the region search.
          if (lane_region != nullptr && lane_region->contains_granule(g)) {
            e = lane_region->entry(g);
            lane_region->settle(g);
            wk.entry_region = lane_region;
          } else {
            e = global_entry(g, wk);
            lane_region = wk.entry_region;
          }
          if (wk.entry_region) wk.entry_region->note_accesses(r.access, g, w, 1);
        } else {
          e = bs->local.entry(uint64_t(tid) << kLocalThreadShift, g);
        }
        same = check_same && wk.same.seen(g);
        code = touch(e, w0, w1, global, r, c, tid, same);
        if constexpr (global) {  // global code 0: the entry was empty, the granule's first touch
          if (RegionShadow* reg = kDirect ? wk.page_region : wk.entry_region; reg && code == 0) {
            reg->count_first_touch(w);
          }
        }
      }
      if (!global && k == 0 && code != 0) silent_known += silent >> lane & 1;
      if (values && plain_load && (values->active_mask >> lane & 1)) {
        RegionShadow* region = !global ? nullptr : kDirect ? wk.page_region : wk.entry_region;
        code = compare_value<kSpace>(code, *values, lane, g, k, size, tid, bs, wk, region, w);
      }
      runs.add(code, kOneGranule ? size : std::min<uint64_t>(4, size - 4 * k));
    }
  }
  runs.finish();
  if (silent_known) wk.stats_for(c.id)->values.silent += silent_known;
}

template <unsigned kSpace>
void Engine::Impl::replay_space(const RlRecord& r, const Ctx& c, uint32_t mask, unsigned w, Worker& wk) {
  if (r.size <= 4) {
    replay_lanes<kSpace, true, false>(r, c, mask, w, wk, nullptr, 0);
  } else {
    replay_lanes<kSpace, false, false>(r, c, mask, w, wk, nullptr, 0);
  }
}

// Whether a one-chunk global record may index the worker's cached window of a region's shadow directly (kDirect:
// every granule it touches lies in the window, so in one region and one object slice). The window is a shadow
// page, aligned to the region's first granule, while chunks are aligned to 256 absolute granules: in a region whose
// base is not 1 KiB-aligned (cudaMalloc put PolyBench fdtd2d's 1 MiB array 512 bytes behind a 400-byte one; a pool
// allocator's blocks lie anywhere) every chunk straddles two pages, and such a record used to take the lane loop
// through global_entry lane by lane, without the coalesced closed form. A record that reaches into the page after
// the window widens the window to both pages: the shadow is contiguous, and the record touches both pages, so
// charging the second is what the lane loop would do. Not when the pages lie in different slices of the object
// (the direct path counts the window's one slice) or regions.
bool Engine::Impl::direct_window(const RlRecord& r, const Ctx& c, uint32_t mask, Worker& wk) {
  const uint64_t g = r.addr[__builtin_ctz(mask)] >> 2, chunk_lo = chunk_of(g) << 8;
  global_slot(g, wk);  // charges g's page exactly as the lane itself would
  if (chunk_lo - wk.page_lo < wk.page_hi - wk.page_lo && chunk_lo + 256 <= wk.page_hi) return true;
  RegionShadow* reg = wk.entry_region;
  if (reg == nullptr || reg != wk.page_region || g - wk.page_lo >= wk.page_hi - wk.page_lo) return false;
  uint64_t lo = g, hi = g;
  if (c.flags & kConsecutive) {
    hi = r.addr[31 - __builtin_clz(mask)] >> 2;
  } else if (!(r.flags & RL_FLAG_ONE_ADDRESS)) {  // (one address: lo = hi)
    uint64_t scratch[RL_WARP_SIZE];
    const uint64_t* addr = lane_addresses(r, scratch);
    for (uint32_t m = mask & (mask - 1); m; m &= m - 1) {
      const uint64_t x = addr[__builtin_ctz(m)] >> 2;
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
  }
  hi += (r.size + 3) / 4 - 1;
  if (lo < wk.page_lo) return false;
  if (hi < wk.page_hi) return true;
  if (!reg->contains_granule(hi) || reg->slice_of(hi) != reg->slice_of(wk.page_lo)) return false;
  uint64_t next_lo, next_hi;
  reg->page_span(hi, next_lo, next_hi);
  if (next_lo != wk.page_hi) return false;  // more than one page further (a record spans one chunk, 256 granules)
  reg->entry(hi);
  wk.page_hi = next_hi;
  return true;
}

// The global lanes of `mask` replayed through the shadow window direct_window has just set (wk.page): a lane of
// at most 4 bytes touches one granule, which spares the lane loop its per-granule walk.
void Engine::Impl::replay_in_window(const RlRecord& r, const Ctx& c, uint32_t mask, unsigned w, Worker& wk) {
  if (r.size <= 4) return replay_lanes<RL_SPACE_GLOBAL, true, true>(r, c, mask, w, wk, wk.page, wk.page_lo);
  replay_lanes<RL_SPACE_GLOBAL, false, true>(r, c, mask, w, wk, wk.page, wk.page_lo);
}

// A global record over several chunks whose lanes come in runs of consecutive lanes on consecutive footprints: a
// tile's rows (cuBLAS's sm80_xmma SGEMM reads 4 rows of 8 lanes, 4 KiB apart: a fifth of the engine's time on its
// slice went to the lane loop, which looks each lane's region up), or a coalesced access that crosses a chunk's
// bound. Each run of two or more lanes inside one chunk is replayed as a coalesced record of that chunk is
// (direct_window, then replay_consecutive or the direct lane loop); the lanes left over take the lane loop together.
// Same counts and entries as the lane loop over the whole mask: no two lanes share a granule (kNoOverlap), so the
// lanes' order across runs changes nothing, and each run keeps its own lanes' order. False, with nothing done, when
// the record's first two lanes of `mask` are not such a pair (a gather, a column walk: their cost stays one test), in
// value mode (whose comparisons walk a record's lanes in order), and for a record handed over by its first and last
// addresses (the closed forms read a run's first and last lanes' slots).
bool Engine::Impl::replay_lane_runs(const RlRecord& r, const Ctx& c, uint32_t mask, unsigned w, Worker& wk) {
  if (!(c.flags & kNoOverlap) || !consecutive_size(r.size) || (r.flags & kHandedOverFlags) || values_of(r) ||
      (mask & (mask - 1)) == 0) {
    return false;
  }
  const unsigned first = unsigned(__builtin_ctz(mask));
  if (!(mask >> (first + 1) & 1) || r.addr[first + 1] != r.addr[first] + r.size) return false;
  const uint64_t last_granule = r.size / 4 - 1;  // whole granules: consecutive_size
  Ctx run_ctx = c;
  run_ctx.flags = uint8_t((c.flags & ~kSharedGranule) | kOneChunk | kConsecutive);  // true of each run replayed
  uint32_t left = mask, lone = 0;
  while (left) {
    const unsigned lo = unsigned(__builtin_ctz(left));
    const uint64_t chunk = chunk_of(r.addr[lo] >> 2);
    unsigned hi = lo;
    while (hi < 31 && (left >> (hi + 1) & 1) && r.addr[hi + 1] == r.addr[hi] + r.size &&
           chunk_of((r.addr[hi + 1] >> 2) + last_granule) == chunk) {
      ++hi;
    }
    const uint32_t run = (hi == 31 ? ~0u : (2u << hi) - 1) & ~((1u << lo) - 1);
    left &= ~run;
    if (hi == lo || chunk_of((r.addr[lo] >> 2) + last_granule) != chunk || !direct_window(r, run_ctx, run, wk)) {
      lone |= run;
      continue;
    }
    replay_in_window(r, run_ctx, run, w, wk);
  }
  if (lone) replay_space<RL_SPACE_GLOBAL>(r, c, lone, w, wk);
  return true;
}

void Engine::Impl::replay_record(const RlRecord& r, const Ctx& c, uint32_t mask, unsigned w, Worker& wk) {
  switch (r.space) {
    case RL_SPACE_GLOBAL:
      if ((c.flags & kOneChunk) && mask && direct_window(r, c, mask, wk)) return replay_in_window(r, c, mask, w, wk);
      if (!(c.flags & kOneChunk) && replay_lane_runs(r, c, mask, w, wk)) return;
      return replay_space<RL_SPACE_GLOBAL>(r, c, mask, w, wk);
    case RL_SPACE_SHARED:
      return replay_space<RL_SPACE_SHARED>(r, c, mask, w, wk);
    default:
      return replay_space<RL_SPACE_LOCAL>(r, c, mask, w, wk);
  }
}

// Irregular records (lanes in several chunks: gathers, column walks) touch one shadow line per lane, spread over
// the whole shadow: replayed one after another, every lane waits for its own cache (and TLB) miss. Asking for the
// lines of a record ahead lets the misses overlap. A coalesced record (consecutive lanes in one chunk) reads and
// writes 8 consecutive shadow lines per 128 bytes of data, but consecutive records of a walk are other warps'
// rows, which the hardware prefetcher cannot guess: its lines are asked for too, first to last (H200 host, sixty
// PolyBench fdtd2d launches: global step 0.51 -> 0.30 s at one worker, 16.2 -> 17.1 M records/s at twelve;
// benchmarks/results/h200-2026-12-03-s20, call 2). Only mapped region shadow is asked for; nothing is charged or
// committed here.
void Engine::Impl::prefetch_lanes(const RlRecord& r, const Ctx& c, uint32_t mask, size_t& hint, LinesAhead& lines) {
  if (r.type != RL_REC_MEM || r.space != RL_SPACE_GLOBAL || !mask) return;
  if ((c.flags & (kOneChunk | kConsecutive)) == (kOneChunk | kConsecutive)) {
    const uint64_t lo = r.addr[__builtin_ctz(mask)] >> 2;
    const uint64_t hi = (r.addr[31 - __builtin_clz(mask)] >> 2) + (r.size + 3) / 4 - 1;
    if (const RegionShadow* reg = find_region(lo, hint)) {
      if (!reg->contains_granule(hi)) return;
      if (reg->any_summary() && !(lo & 31) && hi == lo + 31 && reg->is_summarized(lo)) {
        __builtin_prefetch(reg->slot(lo), 1);  // a summarized segment: its first entry is all replay_segment reads
        return;
      }
      const char* from = reinterpret_cast<const char*>(reg->slot(lo));
      const char* to = reinterpret_cast<const char*>(reg->slot(hi));
      for (const char* p = from; p <= to; p += 64) __builtin_prefetch(p, 1);
      __builtin_prefetch(to, 1);
    }
    return;
  }
  if (c.flags & kSharedGranule) {  // a broadcast (SHOC BFS's levels[v]): its one entry, which one lane replays
    const uint64_t g = r.addr[__builtin_ctz(mask)] >> 2;
    if (const RegionShadow* reg = find_region(g, hint)) __builtin_prefetch(reg->slot(g), 1);
    return;
  }
  if (c.flags & kOneChunk) return;
  uint64_t scratch[RL_WARP_SIZE];
  const uint64_t* addr = lane_addresses(r, scratch);
  for (uint32_t m = mask; m; m &= m - 1) {
    uint64_t g = addr[__builtin_ctz(m)] >> 2;
    if (const RegionShadow* reg = find_region(g, hint)) lines.add(reg->slot(g));
  }
}

// await: phases 3 and 4 run fused (consume.cpp): a record's Sync is read once its block owner has announced the
// record's piece done.
void Engine::Impl::phase4(const RlRecord* recs, size_t n, unsigned w, bool await) {
  Worker& wk = *workers[w];
  const std::vector<Ctx>& ctx = step_ctx();
  constexpr size_t kAhead = 2;
  static_assert(kAhead < kWalkAhead, "the walk has asked for that item's lines already");
  if (W == 1) {
    size_t hint = 0;
    for (size_t i = 0; i < n; ++i) {
      if (i + kAhead < n) {
        wk.lines_ahead.ask_rest();
        prefetch_lanes(recs[i + kAhead], ctx[i + kAhead], recs[i + kAhead].active_mask, hint, wk.lines_ahead);
      }
      const RlRecord& r = recs[i];
      if (r.type == RL_REC_MEM && r.space == RL_SPACE_GLOBAL) replay_record(r, ctx[i], r.active_mask, 0, wk);
    }
  } else {
    size_t hint = 0;
    size_t known[kMaxWorkers] = {};  // await: pieces each block owner is known to have done
    const std::vector<PieceRef>& piece_map = batch_slots[step_slot].piece_map;
    const unsigned slot = step_slot;
    // Where the block owner left a record's barrier counters: a line another core wrote, read once per item.
    const auto sync_of = [&](size_t piece, unsigned owner, uint32_t at) {
      return &workers[piece_map[piece].worker]->routing[slot].by_block[owner].sync[at];
    };
    for_each_routed(
        &Worker::Routing::by_chunk, n, w, recs, [&](const Item& it, Routed<Item>&, uint32_t, RoutedAhead<Item> ahead) {
          if (const Item* later = ahead.item(kAhead)) {  // the walk asked for that record's lines kAhead items ago
            wk.lines_ahead.ask_rest();
            const uint32_t at = record_index(*later);
            const RlRecord& ra = recs[at];
            prefetch_lanes(ra, ctx[at], later->mask, hint, wk.lines_ahead);
            // Its counters too, once its block owner is known to have written them: asked for earlier, the line
            // would come before the owner's write and have to come again.
            const unsigned owner = block_owner(ra.block);
            const size_t piece = at / kPiece;
            if (!await || piece < known[owner]) __builtin_prefetch(sync_of(piece, owner, later->slot));
          }
          const uint32_t i = record_index(it);
          const RlRecord& r = recs[i];
          const unsigned owner = block_owner(r.block);
          const size_t piece = i / kPiece;
          if (await && piece >= known[owner]) await_block_owner(owner, piece, &known[owner], wk);
          Ctx full = ctx[i];
          full.sync = *sync_of(piece, owner, it.slot);
          replay_record(r, full, it.mask, w, wk);
        });
  }
  wk.lines_ahead.drop();
}
}  // namespace reuselens
