#include "drain.h"

#include <atomic>
#include <chrono>

#include "support.h"

namespace rlc {

void Drainer::start() {
  thread_ = std::thread([this] { loop(); });
}

DrainJob* Drainer::current() {
  std::lock_guard<std::mutex> g(mu_);
  return job_;
}

void Drainer::publish(DrainJob* job) {
  {
    std::lock_guard<std::mutex> g(mu_);
    job_ = job;
  }
  cv_.notify_all();
}

void Drainer::finish(DrainJob* job, bool faulted, uint64_t total) {
  std::unique_lock<std::mutex> g(mu_);
  job->ended = true;
  job->faulted = faulted;
  job->total = total;
  cv_.notify_all();
  cv_.wait(g, [&] { return job->done; });
}

void Drainer::clear() {
  std::lock_guard<std::mutex> g(mu_);
  job_ = nullptr;
}

void Drainer::set_ranges(std::vector<Range> ranges) {
  std::lock_guard<std::mutex> g(mu_);
  ranges_ = std::move(ranges);
}

void Drainer::stop() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

// Caller holds mu_ (ranges_ is replaced only under it).
void Drainer::drain_generation(DrainJob& job, uint64_t gen, uint64_t count) {
  ContextState* cs = job.cs;
  uint32_t b = (uint32_t)(gen % cs->nbuf);
  reuselens::RlSlot* slots = cs->buffers + (uint64_t)b * cs->capacity;
  std::atomic_thread_fence(std::memory_order_acquire);
  const double t0 = now_s();
  PackedCounts counts;
  resolve_records(ranges_, slots, count, &counts, &starts_);
  const double t1 = now_s();
  // A malformed stream goes on as it is: the walk stopped at the bad record, and each sink reports it its own way.
  for (auto& s : sinks_) {
    if (counts.malformed)
      s->consume(slots, count);
    else
      s->consume_walked(slots, count, starts_, counts.packed);
  }
  job.resolve_s += t1 - t0;
  job.sinks_s += now_s() - t1;
  job.drained += count;
  job.records += counts.records;
  job.companions += counts.companions;
  job.unresolved += counts.unresolved;
  job.malformed |= counts.malformed;
  ++job.flushes;
}

void Drainer::loop() {
  std::unique_lock<std::mutex> g(mu_);
  while (!stop_) {
    cv_.wait(g, [&] { return stop_ || (job_ != nullptr && !job_->done); });
    if (stop_) break;
    DrainJob& job = *job_;
    ContextState* cs = job.cs;
    unsigned sleep_us = 1;
    while (true) {
      uint32_t b = (uint32_t)(job.next_gen % cs->nbuf);
      volatile uint64_t* ready = cs->host_ready + b;
      if (*ready == job.next_gen + 1) {
        drain_generation(job, job.next_gen, cs->capacity);
        ++job.next_gen;
        // Hand the buffer back to the GPU for generation next_gen - 1 + nbuf.
        std::atomic_thread_fence(std::memory_order_release);
        *(volatile uint64_t*)(cs->host_allowed + b) = job.next_gen - 1 + cs->nbuf;
        sleep_us = 1;
        continue;
      }
      if (job.ended) {
        if (!job.faulted) {
          uint64_t full = job.total / cs->capacity;
          if (job.next_gen < full) continue;  // a full generation whose flag is still in flight
          uint64_t rest = job.total - job.next_gen * cs->capacity;
          if (rest > 0) drain_generation(job, job.next_gen, rest);
        }
        job.done = true;
        cv_.notify_all();
        break;
      }
      // The GPU raises ready flags without a notification, so they are polled with back-off; the launch's end
      // (finish) notifies, and wakes this wait at once instead of after up to 200 us of sleep, which every
      // instrumented launch used to pay.
      cv_.wait_for(g, std::chrono::microseconds(sleep_us), [&] { return job.ended; });
      if (sleep_us < 200) sleep_us *= 2;
    }
  }
}

}  // namespace rlc
