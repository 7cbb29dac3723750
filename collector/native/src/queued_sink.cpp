// A sink run on a thread of its own (sinks.h, make_queued_sink): the drain thread copies records into a bounded
// queue and hands the buffer back to the GPU at once, instead of waiting until a slow sink (the online engine)
// has consumed them. Events reach the wrapped sink in the order they were queued.
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "parallel_copy.h"
#include "sinks.h"
#include "support.h"

namespace rlc {
namespace {

constexpr uint64_t kHugeBytes = 2ull << 20;
constexpr uint64_t kMaxRing = 1ull << 40;  // a larger bound gets no ring (each batch its own vector)

// Queued records live in one ring of `limit` bytes, reserved once (MAP_NORESERVE) and advised to come as
// transparent huge pages: fresh heap memory per batch page-faulted on every 4 KiB, and the GPU waited for those
// faults. Ring pages, once touched, are reused for the rest of the run. Several threads share each copy
// (parallel_copy.h), and they also take the first-touch faults of fresh ring pages side by side. (A thread that
// committed the ring 64 MiB ahead with MADV_POPULATE_WRITE cut matmul_256's kernel time by a further 15-20% on
// the H200 host, but made the whole run 35-70 ms longer: docs/collector.md, Overhead.)
class QueuedSink : public RecordSink {
 public:
  QueuedSink(std::unique_ptr<RecordSink> inner, uint64_t limit_bytes, unsigned copy_threads, bool unpack)
      : inner_(std::move(inner)), limit_(limit_bytes ? limit_bytes : 1), copy_(copy_threads), unpack_(unpack) {
    arena_bytes_ = (std::min(limit_, kMaxRing) + kHugeBytes - 1) / kHugeBytes * kHugeBytes;
    void* p = limit_ <= kMaxRing ? mmap(nullptr, arena_bytes_, PROT_READ | PROT_WRITE,
                                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
                                 : MAP_FAILED;
    if (p != MAP_FAILED) {
      arena_ = static_cast<char*>(p);
#ifdef MADV_HUGEPAGE
      madvise(p, arena_bytes_, MADV_HUGEPAGE);  // best effort: without THP, 4 KiB pages, still reused
#endif
    }
    worker_ = std::thread([this] {
      name_this_thread("rl-engine-0");  // the engine's worker 0: it consumes the queue (WorkerPool names the rest)
      run();
    });
  }
  ~QueuedSink() override {
    stop();
    if (arena_) munmap(arena_, arena_bytes_);
  }
  const char* name() const override { return inner_->name(); }

  void add_allocation(uint64_t address, uint64_t size) override { push_in_order(Op{Op::kAlloc, address, size}); }
  void free_allocation(uint64_t address) override { push_in_order(Op{Op::kFree, address, 0}); }
  void begin_launch(const LaunchMeta& meta) override {
    Op op{Op::kBegin, 0, 0};
    op.meta = meta;
    push_in_order(std::move(op));
    std::lock_guard<std::mutex> lock(mu_);
    backlog_at_begin_ = queued_;  // records of earlier launches the engine has not consumed yet
    wait_s_ = copy_s_ = 0;
  }
  void consume(const reuselens::RlSlot* slots, size_t n) override {
    if (n == 0) return;  // nothing for the engine, and a 0-byte batch has no place in the ring
    // One producer at a time: places are taken in queue order, and the copy runs outside mu_ so that the
    // worker can go on popping and releasing meanwhile.
    std::lock_guard<std::mutex> producing(produce_mu_);
    const bool unpacking = unpack_ && find_packed(slots, n);
    produce(slots, n, starts_, unpacking);
  }
  void consume_walked(const reuselens::RlSlot* slots, size_t n, const std::vector<const reuselens::RlSlot*>& starts,
                      bool packed) override {
    if (n == 0) return;
    std::lock_guard<std::mutex> producing(produce_mu_);
    produce(slots, n, starts, unpack_ && packed);
  }
  void end_launch(bool complete) override {
    push_in_order(Op{Op::kEnd, complete ? 1u : 0u, 0});
    take_errors();
    // The drain's "sinks" time of a launch is the copy plus the wait for queue space; that wait is the engine
    // finishing records queued before (by earlier launches too), not this launch's own analysis time, which the
    // engine reports once it gets there (the "engine:" notes, possibly of earlier launches).
    char note[200];
    std::lock_guard<std::mutex> lock(mu_);
    snprintf(note, sizeof note,
             "queue: %.3f s waiting for space, %.3f s copying; %llu MiB queued ahead at launch start; %llu MiB of the "
             "ring touched",
             wait_s_, copy_s_, (unsigned long long)(backlog_at_begin_ >> 20), (unsigned long long)(touched_ >> 20));
    launch_note = note;
    if (!inner_notes_.empty()) launch_note += "\n" + inner_notes_;
    inner_notes_.clear();
  }
  bool finish(const std::string& run_dir, std::string* err) override {
    using Clock = std::chrono::steady_clock;
    const auto seconds_since = [](Clock::time_point t) {
      return std::to_string(std::chrono::duration<double>(Clock::now() - t).count());
    };
    const auto t0 = Clock::now();
    stop();
    const auto t1 = Clock::now();
    finish_note = "queue emptied in " + seconds_since(t0) + " s";
    std::string notes;  // the engine's notes of the launches it analysed after the last end, a line each
    {
      std::lock_guard<std::mutex> lock(mu_);
      notes.swap(inner_notes_);
    }
    take_errors();
    if (!error.empty()) {  // the wrapped sink's last errors: the caller of finish() reads only *err
      *err = error;
      error.clear();
      std::string more;
      if (!inner_->finish(run_dir, &more)) *err += "; " + more;
      if (!notes.empty()) finish_note += "\n" + notes;
      return false;
    }
    const bool ok = inner_->finish(run_dir, err);
    finish_note += ", then " + std::string(inner_->name()) + " results in " + seconds_since(t1) + " s";
    if (!notes.empty()) finish_note += "\n" + notes;
    if (!inner_->finish_note.empty()) finish_note += "\n" + inner_->finish_note;
    return ok;
  }

 private:
  struct Op {
    enum Kind { kAlloc, kFree, kBegin, kRecords, kEnd } kind;
    uint64_t a, b;  // kRecords: slot count, bytes
    LaunchMeta meta;
    bool in_ring = false;                  // kRecords: the slots are in the ring, not in `slots`
    bool full = false;                     // kRecords: unpacked here, every record full (consume_full)
    uint64_t offset = 0, end = 0;          // kRecords in the ring: byte offset, and ring position after it
    std::vector<reuselens::RlSlot> slots;  // kRecords larger than the ring
    Op(Kind k, uint64_t a_, uint64_t b_) : kind(k), a(a_), b(b_) {}
  };

  // Under produce_mu_: the batch into the queue. Packed records are unpacked on their way into the ring, by the
  // copy threads, when asked (unpack_): the engine then gets them whole, but for the bytes it never reads
  // (unpack_for_engine), and spends nothing on them. `starts`: the records' first slots, read only when unpacking.
  void produce(const reuselens::RlSlot* slots, size_t n, const std::vector<const reuselens::RlSlot*>& starts,
               bool unpacking) {
    const uint64_t records = unpacking ? starts.size() : 0;
    const uint64_t bytes = unpacking ? records * sizeof(reuselens::RlRecord) : n * sizeof(reuselens::RlSlot);
    Op op{Op::kRecords, unpacking ? records * RL_FULL_SLOTS : n, bytes};
    op.full = unpacking;
    using Clock = std::chrono::steady_clock;
    const auto t0 = Clock::now();
    Clock::time_point t1;
    if (arena_ && bytes <= limit_) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        // Beyond the bound the caller waits (the GPU then waits, as without the queue).
        space_.wait(lock, [&] { return place(bytes, op); });
      }
      t1 = Clock::now();
      if (unpacking)
        copy_.unpack(reinterpret_cast<reuselens::RlRecord*>(arena_ + op.offset), starts.data(), records);
      else
        copy_.copy(arena_ + op.offset, slots, bytes);
    } else {
      // No ring, or a batch larger than the whole bound (which then goes through alone, once the queue is
      // empty): a vector of its own, within the same bound.
      {
        std::unique_lock<std::mutex> lock(mu_);
        space_.wait(lock, [&] { return queued_ == 0 || queued_ + bytes <= limit_; });
      }
      t1 = Clock::now();
      if (unpacking) {
        op.slots.resize(records * RL_FULL_SLOTS);
        for (uint64_t i = 0; i < records; ++i)
          reuselens::unpack_for_engine(starts[i], reinterpret_cast<reuselens::RlRecord*>(op.slots.data()) + i);
      } else {
        op.slots.assign(slots, slots + n);
      }
    }
    wait_s_ += std::chrono::duration<double>(t1 - t0).count();  // produce_mu_ held: one producer at a time
    copy_s_ += std::chrono::duration<double>(Clock::now() - t1).count();
    push(std::move(op));
  }
  // Under produce_mu_: the records of a packed stream into starts_; false (copy the slots as they are) when there is
  // nothing to unpack (full records only) or the stream is malformed (the engine then reports it).
  bool find_packed(const reuselens::RlSlot* slots, size_t n) {
    starts_.clear();
    reuselens::PackedCursor cursor(slots, n);
    bool packed = false;
    while (const reuselens::RlSlot* r = cursor.next()) {
      starts_.push_back(r);
      packed |= reuselens::packed_form(*r) != reuselens::RL_FORM_FULL;
    }
    return packed && !cursor.malformed();
  }

  // Ring positions grow while the queue is not empty; position p lies at byte p % limit_. Live records span
  // [read_pos_, write_pos_); a batch never wraps around the end, so it may skip the rest of the lap. An empty
  // queue starts at the start again. A queue that seldom empties (an engine a little behind, launch after launch,
  // as when a launch's last records are drained while the next launch runs) would walk the whole ring, and a
  // record unpacked onto a page touched for the first time cost 5 times one onto a warm page (the page's fault
  // and zeroing: 162-169 against 30 ns a record on the development machine). So a batch that would reach past the
  // pages touched so far goes to the next lap's start instead, when that is free and the queue, this batch
  // included, holds at most an eighth of the touched part. Until the engine has taken that eighth, the queue can
  // hold only about the touched part (the reader is still in the old lap); an engine further behind never skips,
  // and gets the whole ring, touching more as it needs it. (Skipping whenever the start was free, session 25,
  // cut the capacity down to the part touched so far for good: with the engine behind, the drain then waited.)
  // Called with mu_ held; false = no room yet.
  bool place(uint64_t bytes, Op& op) {
    if (queued_ + bytes > limit_) return false;               // also waits out a batch larger than the ring
    if (read_pos_ == write_pos_) read_pos_ = write_pos_ = 0;  // empty: start again at the (warm) start
    uint64_t pos = write_pos_, off = pos % limit_;
    const uint64_t next_lap = pos - off + limit_;
    const bool start_free = next_lap + bytes - read_pos_ <= limit_;  // the reader is past the lap's first `bytes`
    if (off + bytes > limit_ || (off + bytes > touched_ && start_free && queued_ + bytes <= touched_ / 8)) {
      pos = next_lap;
      off = 0;
    }
    if (pos + bytes - read_pos_ > limit_) return false;
    touched_ = std::max(touched_, off + bytes);
    op.in_ring = true;
    op.offset = off;
    op.end = pos + bytes;
    write_pos_ = op.end;
    queued_ += bytes;
    return true;
  }

  // Events enter the queue in the order their callers came in, a record batch included (its copy holds
  // produce_mu_ from placing to pushing).
  void push_in_order(Op op) {
    std::lock_guard<std::mutex> producing(produce_mu_);
    push(std::move(op));
  }
  void push(Op op) {
    std::lock_guard<std::mutex> lock(mu_);
    if (op.kind == Op::kRecords && !op.in_ring) queued_ += op.b;
    ops_.push_back(std::move(op));
    work_.notify_one();
  }

  void run() {
    for (;;) {
      Op op(Op::kEnd, 0, 0);
      {
        std::unique_lock<std::mutex> lock(mu_);
        work_.wait(lock, [&] { return stopping_ || !ops_.empty(); });
        if (ops_.empty()) return;  // stopping and drained
        op = std::move(ops_.front());
        ops_.pop_front();
      }
      apply(op);
      std::lock_guard<std::mutex> lock(mu_);
      if (op.kind == Op::kRecords) {
        queued_ -= op.b;
        if (op.in_ring) read_pos_ = op.end;  // ring batches are applied in the order they were placed
      }
      if (!inner_->error.empty()) {
        errors_ += (errors_.empty() ? "" : "; ") + inner_->error;
        inner_->error.clear();
      }
      if (!inner_->launch_note.empty()) {
        inner_notes_ += (inner_notes_.empty() ? "" : "\n") + inner_->launch_note;
        inner_->launch_note.clear();
      }
      space_.notify_all();
    }
  }

  void apply(const Op& op) {
    switch (op.kind) {
      case Op::kAlloc:
        inner_->add_allocation(op.a, op.b);
        break;
      case Op::kFree:
        inner_->free_allocation(op.a);
        break;
      case Op::kBegin:
        inner_->begin_launch(op.meta);
        break;
      case Op::kRecords: {
        const auto* slots =
            op.in_ring ? reinterpret_cast<const reuselens::RlSlot*>(arena_ + op.offset) : op.slots.data();
        if (op.full)
          inner_->consume_full(reinterpret_cast<const reuselens::RlRecord*>(slots), op.a / RL_FULL_SLOTS);
        else
          inner_->consume(slots, op.a);
        break;
      }
      case Op::kEnd:
        inner_->end_launch(op.a != 0);
        break;
    }
  }

  // Errors the wrapped sink reported since the last call, surfaced on the caller's thread.
  void take_errors() {
    std::lock_guard<std::mutex> lock(mu_);
    if (!errors_.empty()) {
      error += (error.empty() ? "" : "; ") + errors_;
      errors_.clear();
    }
  }

  void stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) return;
      stopping_ = true;
    }
    work_.notify_all();
    if (worker_.joinable()) worker_.join();
  }

  std::unique_ptr<RecordSink> inner_;
  const uint64_t limit_;
  ParallelCopy copy_;                             // used under produce_mu_ only
  const bool unpack_;                             // unpack packed records into the ring (make_queued_sink)
  std::vector<const reuselens::RlSlot*> starts_;  // find_packed's records (produce_mu_)
  char* arena_ = nullptr;  // the ring; null if the reservation failed (every batch then gets its own vector)
  uint64_t arena_bytes_ = 0;
  std::mutex produce_mu_, mu_;
  std::condition_variable work_, space_;
  std::deque<Op> ops_;
  uint64_t queued_ = 0;                    // record bytes queued, ring or not
  uint64_t write_pos_ = 0, read_pos_ = 0;  // ring positions (see place)
  uint64_t touched_ = 0;                   // the ring's bytes written so far, from its start (see place)
  bool stopping_ = false;
  std::string errors_;
  std::string inner_notes_;         // the wrapped sink's launch notes since the last end_launch (mu_)
  uint64_t backlog_at_begin_ = 0;   // queued_ when the open launch began (mu_)
  double wait_s_ = 0, copy_s_ = 0;  // the open launch's drain time in consume: waiting / copying
  std::thread worker_;
};

}  // namespace

std::unique_ptr<RecordSink> make_queued_sink(std::unique_ptr<RecordSink> inner, uint64_t limit_bytes,
                                             unsigned copy_threads, bool unpack) {
  return std::make_unique<QueuedSink>(std::move(inner), limit_bytes, copy_threads, unpack);
}

}  // namespace rlc
