// A sink run on a thread of its own (sinks.h, make_queued_sink): the drain thread copies records into a bounded
// queue and hands the buffer back to the GPU at once, instead of waiting until a slow sink (the online engine)
// has consumed them. Events reach the wrapped sink in the order they were queued.
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "sinks.h"

namespace rlc {
namespace {

class QueuedSink : public RecordSink {
 public:
  QueuedSink(std::unique_ptr<RecordSink> inner, uint64_t limit_bytes)
      : inner_(std::move(inner)), limit_(limit_bytes ? limit_bytes : 1) {
    worker_ = std::thread([this] { run(); });
  }
  ~QueuedSink() override { stop(); }
  const char* name() const override { return inner_->name(); }

  void add_allocation(uint64_t address, uint64_t size) override { push(Op{Op::kAlloc, address, size}); }
  void free_allocation(uint64_t address) override { push(Op{Op::kFree, address, 0}); }
  void begin_launch(const LaunchMeta& meta) override {
    Op op{Op::kBegin, 0, 0};
    op.meta = meta;
    push(std::move(op));
  }
  void consume(const reuselens::RlRecord* records, size_t n) override {
    Op op{Op::kRecords, 0, 0};
    {
      // A vector the worker has finished with: its pages are already mapped, so the copy does not fault.
      std::lock_guard<std::mutex> lock(mu_);
      if (!spare_.empty()) {
        op.records = std::move(spare_.back());
        spare_.pop_back();
        spare_bytes_ -= op.records.capacity() * sizeof(reuselens::RlRecord);
      }
    }
    op.records.assign(records, records + n);
    push(std::move(op));
  }
  void end_launch(bool complete) override {
    push(Op{Op::kEnd, complete ? 1u : 0u, 0});
    take_errors();
  }
  bool finish(const std::string& run_dir, std::string* err) override {
    stop();
    take_errors();
    if (!error.empty()) {  // the wrapped sink's last errors: the caller of finish() reads only *err
      *err = error;
      error.clear();
      std::string more;
      if (!inner_->finish(run_dir, &more)) *err += "; " + more;
      return false;
    }
    return inner_->finish(run_dir, err);
  }

 private:
  struct Op {
    enum Kind { kAlloc, kFree, kBegin, kRecords, kEnd } kind;
    uint64_t a, b;
    LaunchMeta meta;
    std::vector<reuselens::RlRecord> records;
    Op(Kind k, uint64_t a_, uint64_t b_) : kind(k), a(a_), b(b_) {}
  };

  void push(Op op) {
    const uint64_t bytes = op.records.size() * sizeof(reuselens::RlRecord);
    std::unique_lock<std::mutex> lock(mu_);
    // Beyond the limit the caller waits (the GPU then waits, as without the queue); one batch larger than the
    // limit still goes through once the queue is empty.
    space_.wait(lock, [&] { return queued_ == 0 || queued_ + bytes <= limit_; });
    queued_ += bytes;
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
      queued_ -= op.records.size() * sizeof(reuselens::RlRecord);
      const uint64_t capacity = op.records.capacity() * sizeof(reuselens::RlRecord);
      if (capacity && spare_bytes_ + capacity <= limit_) {  // kept for reuse, at most the queue's bound
        op.records.clear();
        spare_bytes_ += capacity;
        spare_.push_back(std::move(op.records));
      }
      if (!inner_->error.empty()) {
        errors_ += (errors_.empty() ? "" : "; ") + inner_->error;
        inner_->error.clear();
      }
      space_.notify_all();
    }
  }

  void apply(const Op& op) {
    switch (op.kind) {
      case Op::kAlloc: inner_->add_allocation(op.a, op.b); break;
      case Op::kFree: inner_->free_allocation(op.a); break;
      case Op::kBegin: inner_->begin_launch(op.meta); break;
      case Op::kRecords: inner_->consume(op.records.data(), op.records.size()); break;
      case Op::kEnd: inner_->end_launch(op.a != 0); break;
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
  std::mutex mu_;
  std::condition_variable work_, space_;
  std::deque<Op> ops_;
  uint64_t queued_ = 0;
  std::vector<std::vector<reuselens::RlRecord>> spare_;
  uint64_t spare_bytes_ = 0;
  bool stopping_ = false;
  std::string errors_;
  std::thread worker_;
};

}  // namespace

std::unique_ptr<RecordSink> make_queued_sink(std::unique_ptr<RecordSink> inner, uint64_t limit_bytes) {
  return std::make_unique<QueuedSink>(std::move(inner), limit_bytes);
}

}  // namespace rlc
