// Checks make_queued_sink (collector/native/src/queued_sink.cpp) without a GPU: events reach the wrapped sink
// in order and on another thread, records are copied (the caller may reuse its buffer at once), the queue
// bound makes the producer wait (with the ring, without it, and beside a batch larger than the bound), the ring
// keeps every record's contents and order through wrap-arounds and batches larger than itself, and the
// wrapped sink's errors surface at end_launch / finish, and a queue that never empties but stays short keeps its
// batches on the ring's warm first pages.
// Built and run by tests/collector/test_queued_sink.py. Prints "ok" and exits 0, or names the failed check.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "expect.h"
#include "sinks.h"

using reuselens::RlRecord;

// The queue carries packed streams (reuselens/packed_records.h); these checks feed it full records, which are one.
const RlRecord* as_records(const reuselens::RlSlot* slots) { return reinterpret_cast<const RlRecord*>(slots); }
void feed(rlc::RecordSink& sink, const RlRecord* records, size_t n) {
  sink.consume(reinterpret_cast<const reuselens::RlSlot*>(records), n * RL_FULL_SLOTS);
}
using rlc::LaunchMeta;
using rlc::RecordSink;

struct Recorder : RecordSink {
  std::mutex mu;
  std::vector<std::string> events;
  std::thread::id consume_thread;
  std::atomic<bool> hold{false};
  std::atomic<int> consumed{0};
  const char* name() const override { return "recorder"; }
  void note(const std::string& e) {
    std::lock_guard<std::mutex> g(mu);
    events.push_back(e);
  }
  void add_allocation(uint64_t a, uint64_t s) override { note("alloc " + std::to_string(a) + " " + std::to_string(s)); }
  void free_allocation(uint64_t a) override { note("free " + std::to_string(a)); }
  void begin_launch(const LaunchMeta& m) override { note("begin " + std::to_string(m.id) + " " + m.kernel); }
  void consume(const reuselens::RlSlot* slots, size_t count) override {
    const RlRecord* r = as_records(slots);
    const size_t n = count / RL_FULL_SLOTS;
    while (hold) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::string e = "records";
    for (size_t i = 0; i < n; ++i) e += " " + std::to_string(r[i].pc);
    note(e);
    consume_thread = std::this_thread::get_id();
    consumed += 1;
  }
  void end_launch(bool complete) override {
    note(std::string("end ") + (complete ? "complete" : "partial"));
    if (!complete) error = "launch was partial";
  }
  bool finish(const std::string& dir, std::string* err) override {
    note("finish " + dir);
    *err = "";
    return true;
  }
};

// Every record's contents arrive, in order, through a small ring: batches of 1 record up to more than the
// whole ring (those must go through on their own), a consumer that is sometimes slow (the producer then waits
// and the ring wraps at its end), the caller overwriting its buffer after each call, and the copy split among
// several threads (batches of odd sizes, so parts end inside records).
struct Checker : RecordSink {
  uint64_t next = 0;
  bool bad = false;
  int calls = 0;
  const char* name() const override { return "checker"; }
  void add_allocation(uint64_t, uint64_t) override {}
  void free_allocation(uint64_t) override {}
  void begin_launch(const LaunchMeta&) override {}
  void consume(const reuselens::RlSlot* slots, size_t count) override {
    const RlRecord* r = as_records(slots);
    const size_t n = count / RL_FULL_SLOTS;
    if (++calls % 5 == 0) std::this_thread::sleep_for(std::chrono::microseconds(300));
    for (size_t i = 0; i < n; ++i) {
      if (r[i].pc != next || r[i].block != next * 3) bad = true;
      for (int lane = 0; lane < 32; ++lane) bad |= r[i].addr[lane] != (~next ^ lane);
      ++next;
    }
  }
  void end_launch(bool) override {}
  bool finish(const std::string&, std::string* err) override {
    *err = "";
    return true;
  }
};

int ring_round_trip(size_t ring_records, size_t max_batch, int batches, unsigned copy_threads) {
  auto owned = std::make_unique<Checker>();
  Checker* inner = owned.get();
  auto sink = rlc::make_queued_sink(std::move(owned), ring_records * sizeof(RlRecord), copy_threads);
  std::vector<RlRecord> buf(max_batch);
  uint64_t pc = 0;
  unsigned seed = 12345;
  for (int batch = 0; batch < batches; ++batch) {
    seed = seed * 1103515245u + 12345u;
    size_t n = 1 + (seed >> 16) % max_batch;
    for (size_t i = 0; i < n; ++i) {
      std::memset(&buf[i], 0, sizeof(RlRecord));
      buf[i].pc = pc;
      for (int lane = 0; lane < 32; ++lane) buf[i].addr[lane] = ~pc ^ lane;
      buf[i].block = pc * 3;
      ++pc;
    }
    feed(*sink, buf.data(), n);
    for (auto& r : buf) r.pc = 0xdead;  // the sink must have copied
  }
  std::string err;
  EXPECT(sink->finish("/run", &err));
  EXPECT(!inner->bad);
  EXPECT(inner->next == pc);
  return 0;
}

// Packed streams (reuselens/packed_records.h) through the ring: strided records of one stride and of groups,
// broadcasts (stride 0), full ones, header-only ones and padding, in batches that wrap the ring or exceed it. With
// `unpack` the wrapped sink must get every record as the copy threads unpack it for the engine (unpack_for_engine:
// whole, but a barrier its header alone and a broadcast its one address), without it the packed forms; either way
// the same records, in order.
bool broadcast(uint64_t pc) { return pc % 7 == 3; }
RlRecord expected_record(uint64_t pc) {
  RlRecord r;
  std::memset(&r, 0, sizeof r);
  r.type = pc % 11 == 0 ? 2 : 1;
  r.pc = pc;
  r.block = pc * 3;
  r.active_mask = pc % 4 == 1 ? 0x00FF0F01u : ~0u;
  if (r.type == 1) {
    r.space = reuselens::RL_SPACE_GLOBAL;
    r.size = 4;
  }
  const uint32_t group = pc % 3 == 0 ? 32 : pc % 3 == 1 ? 8 : 4;
  for (uint32_t lane = 0; lane < 32; ++lane) {
    if (r.type != 1 || !((r.active_mask >> lane) & 1u)) continue;
    r.addr[lane] = pc % 5 == 0     ? (~pc ^ lane)
                   : broadcast(pc) ? pc << 12
                                   : (pc << 12) + 4 * (lane % group) + 4096 * (lane / group);
  }
  return r;
}
// Whether `got` is `want` as the engine reads it: the header (with the flag of a record handed over by some of its
// addresses, one stride over the warp: a broadcast by its one address, any other by its first and last active
// lanes'), then no address of a barrier, only the written slots of a flagged record, every lane of any other record.
bool as_the_engine_reads(const RlRecord& got, RlRecord want) {
  const bool one_stride = want.type == 1 && want.pc % 5 != 0 && want.pc % 3 == 0;  // strided, in one group of 32
  const uint32_t lo = (uint32_t)__builtin_ctz(want.active_mask), hi = 31u - (uint32_t)__builtin_clz(want.active_mask);
  const uint8_t flag = !one_stride          ? 0
                       : broadcast(want.pc) ? (uint8_t)reuselens::RL_FLAG_ONE_ADDRESS
                                            : (uint8_t)reuselens::RL_FLAG_ONE_STRIDE;
  want.flags |= flag;
  if (std::memcmp(&got, &want, offsetof(RlRecord, addr)) != 0) return false;
  if (want.type != 1) return true;
  if (flag == 0) return std::memcmp(got.addr, want.addr, sizeof want.addr) == 0;
  return got.addr[lo] == want.addr[lo] && (flag == reuselens::RL_FLAG_ONE_ADDRESS || got.addr[hi] == want.addr[hi]);
}

void append_packed(std::vector<reuselens::RlSlot>& out, uint64_t pc, unsigned padding) {
  reuselens::RlSlot pad{};
  pad.w[0] = (uint64_t)reuselens::RL_FORM_PADDING << RL_FORM_SHIFT;
  for (unsigned i = 0; i < padding; ++i) out.push_back(pad);
  const RlRecord r = expected_record(pc);
  reuselens::RlSlot head;
  std::memcpy(&head, &r, sizeof head);
  if (r.type != 1) {
    head.w[0] |= (uint64_t)reuselens::RL_FORM_NO_ADDRESSES << RL_FORM_SHIFT;
    out.push_back(head);
  } else if (pc % 5 == 0) {
    const auto* whole = reinterpret_cast<const reuselens::RlSlot*>(&r);
    out.insert(out.end(), whole, whole + RL_FULL_SLOTS);
  } else {
    head.w[0] |= (uint64_t)reuselens::RL_FORM_STRIDED << RL_FORM_SHIFT;
    reuselens::RlSlot payload{};
    payload.w[0] = pc << 12;
    payload.w[1] = broadcast(pc) ? 0 : 4;
    payload.w[2] = broadcast(pc) ? 0 : 4096;
    payload.w[3] = pc % 3 == 0 ? 32 : pc % 3 == 1 ? 8 : 4;
    out.push_back(head);
    out.push_back(payload);
  }
}

struct PackedChecker : RecordSink {
  uint64_t next = 0;
  uint64_t packed_seen = 0;  // records that arrived in a form other than FULL
  bool bad = false;
  int calls = 0;
  const char* name() const override { return "packed checker"; }
  void begin_launch(const LaunchMeta&) override {}
  void consume(const reuselens::RlSlot* slots, size_t count) override {
    if (++calls % 5 == 0) std::this_thread::sleep_for(std::chrono::microseconds(300));
    reuselens::PackedCursor cursor(slots, count);
    while (const reuselens::RlSlot* at = cursor.next()) {
      packed_seen += reuselens::packed_form(*at) != reuselens::RL_FORM_FULL;
      RlRecord r;
      reuselens::unpack_record(at, &r);
      const RlRecord want = expected_record(next++);
      bad |= std::memcmp(&r, &want, sizeof r) != 0;
    }
    bad |= cursor.malformed();
  }
  uint64_t full_records = 0;  // records handed over as known-full ones (consume_full): unpacked for the engine
  void consume_full(const RlRecord* records, size_t n) override {
    if (++calls % 5 == 0) std::this_thread::sleep_for(std::chrono::microseconds(300));
    full_records += n;
    for (size_t i = 0; i < n; ++i) bad |= !as_the_engine_reads(records[i], expected_record(next++));
  }
  void end_launch(bool) override {}
};

// `walked`: the batches come as the drain hands them on, with their records' first slots found by its walk
// (consume_walked), instead of the queue finding them itself.
int packed_round_trip(size_t ring_records, size_t max_batch, int batches, unsigned copy_threads, bool unpack,
                      bool walked) {
  auto owned = std::make_unique<PackedChecker>();
  PackedChecker* inner = owned.get();
  auto sink = rlc::make_queued_sink(std::move(owned), ring_records * sizeof(RlRecord), copy_threads, unpack);
  std::vector<reuselens::RlSlot> buf;
  uint64_t pc = 0, packed = 0, in_packed_batches = 0;  // the last: records of batches with one packed record or more
  unsigned seed = 777;
  for (int batch = 0; batch < batches; ++batch) {
    seed = seed * 1103515245u + 12345u;
    const size_t n = 1 + (seed >> 16) % max_batch;
    buf.clear();
    const uint64_t packed_before = packed;
    for (size_t i = 0; i < n; ++i, ++pc) {
      packed += pc % 5 != 0 || pc % 11 == 0;  // every record but the full ones (header-only ones included)
      append_packed(buf, pc, (unsigned)((seed >> (i % 16)) & 1u) * (unsigned)(i % 3));
    }
    if (packed != packed_before) in_packed_batches += n;  // a batch of full records alone is copied as it is
    if (walked) {
      std::vector<const reuselens::RlSlot*> starts;
      reuselens::PackedCursor cursor(buf.data(), buf.size());
      while (const reuselens::RlSlot* at = cursor.next()) starts.push_back(at);
      EXPECT(!cursor.malformed());
      sink->consume_walked(buf.data(), buf.size(), starts, packed != packed_before);
      // (starts goes away here: the ASan run catches a sink that keeps reading it)
    } else {
      sink->consume(buf.data(), buf.size());
    }
    for (auto& slot : buf) slot.w[2] = 0xdead;  // the sink must have copied (or unpacked)
  }
  std::string err;
  EXPECT(sink->finish("/run", &err));
  EXPECT(!inner->bad);
  EXPECT(inner->next == pc);
  EXPECT(unpack ? inner->packed_seen == 0 : inner->packed_seen == packed);
  EXPECT(inner->full_records == (unpack ? in_packed_batches : 0));  // the batches the queue unpacked say so
  return 0;
}

// A consumer that keeps up, one batch behind (the queue never empty when a batch comes, as when a launch's last
// records are drained while the next launch runs): the batches stay on the ring's first pages, which are warm,
// instead of walking the whole ring onto fresh ones.
struct Stepper : RecordSink {
  std::atomic<int> allowed{0}, consumed{0};
  const char* lowest = nullptr;
  const char* highest = nullptr;
  const char* name() const override { return "stepper"; }
  void begin_launch(const LaunchMeta&) override {}
  void consume(const reuselens::RlSlot* slots, size_t count) override {
    while (consumed >= allowed) std::this_thread::sleep_for(std::chrono::microseconds(50));
    const char* at = reinterpret_cast<const char*>(slots);
    const char* end = at + count * sizeof(reuselens::RlSlot);
    lowest = lowest == nullptr || at < lowest ? at : lowest;
    highest = end > highest ? end : highest;
    ++consumed;
  }
  void end_launch(bool) override {}
};

int ring_stays_on_warm_pages_when_the_consumer_keeps_up() {
  auto owned = std::make_unique<Stepper>();
  Stepper* inner = owned.get();
  constexpr size_t kRing = 1000, kBatch = 10;
  auto sink = rlc::make_queued_sink(std::move(owned), kRing * sizeof(RlRecord), 1, true);
  std::vector<RlRecord> buf(kBatch);
  for (auto& r : buf) std::memset(&r, 0, sizeof r);
  feed(*sink, buf.data(), kBatch);
  for (int i = 1; i <= 500; ++i) {
    feed(*sink, buf.data(), kBatch);  // the one before still queued
    inner->allowed = i;
    while (inner->consumed < i) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  inner->allowed = 1 << 30;
  std::string err;
  EXPECT(sink->finish("/run", &err));
  // One or two batches queued, at most an eighth of the touched part: the pages of some 16-24 batches, not the
  // 1000 records of the whole ring.
  EXPECT(size_t(inner->highest - inner->lowest) <= 30 * kBatch * sizeof(RlRecord));
  return 0;
}

// consume_walked takes the walk's word for it: a packed batch said to hold full records only is queued as it is, so
// the queue did not walk the batch itself (its consume() would have found the packed records and unpacked them).
int walked_batches_are_not_walked_again() {
  auto owned = std::make_unique<PackedChecker>();
  PackedChecker* inner = owned.get();
  auto sink = rlc::make_queued_sink(std::move(owned), 64 * sizeof(RlRecord), 2, true);
  std::vector<reuselens::RlSlot> buf;
  for (uint64_t pc = 0; pc < 20; ++pc) append_packed(buf, pc, 0);
  std::vector<const reuselens::RlSlot*> starts;
  reuselens::PackedCursor cursor(buf.data(), buf.size());
  while (const reuselens::RlSlot* at = cursor.next()) starts.push_back(at);
  sink->consume_walked(buf.data(), buf.size(), starts, false);
  std::string err;
  EXPECT(sink->finish("/run", &err));
  EXPECT(!inner->bad && inner->next == 20 && inner->packed_seen > 0 && inner->full_records == 0);
  return 0;
}

// Without a ring (a bound beyond the largest ring) batches still queue up to the bound instead of one at a time;
// with a ring, a batch larger than the bound still counts against it, so ring batches wait until it is done.
int bounds_without_and_beside_the_ring() {
  {
    auto owned = std::make_unique<Recorder>();
    Recorder* inner = owned.get();
    auto sink = rlc::make_queued_sink(std::move(owned), 1ull << 41);
    RlRecord buf[4];
    std::memset(buf, 0, sizeof buf);
    inner->hold = true;
    std::thread release([&] {  // a wrong bound must not hang the test: the sink is released after 300 ms
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      inner->hold = false;
    });
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 5; ++i) feed(*sink, buf, 4);
    const bool queued = std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(150);  // none waited
    release.join();
    EXPECT(queued);
    std::string err;
    EXPECT(sink->finish("/run", &err));
    EXPECT(inner->consumed == 5);
  }
  auto owned = std::make_unique<Recorder>();
  Recorder* inner = owned.get();
  auto sink = rlc::make_queued_sink(std::move(owned), 10 * sizeof(RlRecord));
  std::vector<RlRecord> big(20);
  for (auto& r : big) std::memset(&r, 0, sizeof r);
  inner->hold = true;
  feed(*sink, big.data(), 20);  // larger than the bound: goes through alone
  std::atomic<bool> returned{false};
  std::thread producer([&] {
    feed(*sink, big.data(), 5);
    returned = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const bool waited = !returned;  // 20 records are still queued: 5 more would pass the bound of 10
  inner->hold = false;
  producer.join();
  EXPECT(waited);
  std::string err;
  EXPECT(sink->finish("/run", &err));
  EXPECT(inner->consumed == 2);
  return 0;
}

int main() {
  if (ring_round_trip(7, 9, 3000, 1) != 0) return 1;       // record-sized wrap-arounds
  if (ring_round_trip(1500, 2000, 150, 4) != 0) return 1;  // parts of at least 64 KiB: up to 4 threads copy
  if (ring_round_trip(1500, 2000, 150, 3) != 0) return 1;
  if (bounds_without_and_beside_the_ring() != 0) return 1;
  if (walked_batches_are_not_walked_again() != 0) return 1;
  if (ring_stays_on_warm_pages_when_the_consumer_keeps_up() != 0) return 1;
  for (bool unpack : {true, false}) {
    for (bool walked : {false, true}) {
      if (packed_round_trip(7, 9, 3000, 1, unpack, walked) != 0) return 1;  // wrap-arounds, batches beyond the ring
      if (packed_round_trip(1500, 2000, 150, 4, unpack, walked) != 0) return 1;  // shares of 256 records: 4 threads
      if (packed_round_trip(1500, 2000, 150, 3, unpack, walked) != 0) return 1;
    }
  }
  auto owned = std::make_unique<Recorder>();
  Recorder* inner = owned.get();
  auto sink = rlc::make_queued_sink(std::move(owned), 2 * sizeof(RlRecord));  // room for two records
  EXPECT(std::string(sink->name()) == "recorder");

  RlRecord buf[2];
  std::memset(buf, 0, sizeof buf);
  LaunchMeta meta;
  meta.id = 7;
  meta.kernel = "_Z1kv";
  sink->add_allocation(4096, 256);
  sink->begin_launch(meta);
  buf[0].pc = 16;
  buf[1].pc = 32;
  feed(*sink, buf, 2);
  buf[0].pc = 999;  // the caller reuses its buffer at once: the sink must have copied it
  buf[1].pc = 999;

  // The bound: the next two records do not fit while the wrapped sink holds the first batch.
  inner->hold = true;
  buf[0].pc = 48;
  std::atomic<bool> returned{false};
  std::thread producer([&] {
    feed(*sink, buf, 1);
    feed(*sink, buf, 1);
    feed(*sink, buf, 1);  // waits: the first batch (2 records) plus these exceed 2 records
    returned = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT(!returned);
  inner->hold = false;
  producer.join();
  EXPECT(returned);

  sink->end_launch(false);
  sink->free_allocation(4096);
  std::string err;
  bool ok = sink->finish("/run", &err);
  EXPECT(inner->consumed == 4);
  EXPECT(inner->consume_thread != std::this_thread::get_id());
  const std::vector<std::string> want = {"alloc 4096 256", "begin 7 _Z1kv", "records 16 32", "records 48", "records 48",
                                         "records 48",     "end partial",   "free 4096",     "finish /run"};
  EXPECT(inner->events == want);
  // the wrapped sink's error, raised while its thread applied end_launch, reaches the caller: at the next
  // end_launch, or (here, nothing came after) from finish
  EXPECT(!ok && err.find("launch was partial") != std::string::npos);
  std::printf("ok\n");
  return 0;
}
