#include "drain.h"

#include <atomic>
#include <chrono>

#include "support.h"

namespace rlc {

void Drainer::start() {
  thread_ = std::thread([this] {
    name_this_thread("rl-drain");
    loop();
  });
}

DrainJob* Drainer::current() {
  std::lock_guard<std::mutex> g(mu_);
  return current_;
}

void Drainer::publish(DrainJob* job) {
  {
    std::lock_guard<std::mutex> g(mu_);
    job->next_gen = job->base_gen;
    jobs_.push_back(job);
    current_ = job;
  }
  cv_.notify_all();
}

void Drainer::end(DrainJob* job, const KernelEnd& end) {
  {
    std::lock_guard<std::mutex> g(mu_);
    job->end = end;
    job->ended = true;
    job->ended_at = now_s();
    if (current_ == job) current_ = nullptr;
  }
  cv_.notify_all();
}

bool Drainer::done(DrainJob* job) {
  std::lock_guard<std::mutex> g(mu_);
  return job->done;
}

double Drainer::wait_done(DrainJob* job) {
  std::unique_lock<std::mutex> g(mu_);
  const double t0 = now_s();
  cv_.wait(g, [&] { return job->done; });
  return now_s() - t0;
}

void Drainer::set_ranges(std::vector<Range> ranges) {
  auto fresh = std::make_shared<const std::vector<Range>>(std::move(ranges));
  std::lock_guard<std::mutex> g(mu_);
  ranges_ = std::move(fresh);
}

void Drainer::stop() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

// Without mu_ (the app publishes and ends launches meanwhile); `ranges` is the snapshot of the caller.
void Drainer::drain_generation(DrainJob& job, const std::vector<Range>& ranges, uint64_t gen, uint64_t count) {
  ContextState* cs = job.cs;
  uint32_t b = (uint32_t)(gen % cs->nbuf);
  reuselens::RlSlot* slots = cs->buffers + (uint64_t)b * cs->capacity;
  std::atomic_thread_fence(std::memory_order_acquire);
  const double t0 = now_s();
  PackedCounts counts;
  resolve_records(ranges, slots, count, &counts, &starts_);
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
  // Hand the buffer back to the GPU for generation gen + nbuf.
  std::atomic_thread_fence(std::memory_order_release);
  *(volatile uint64_t*)(cs->host_allowed + b) = gen + cs->nbuf;
}

void Drainer::loop() {
  std::unique_lock<std::mutex> g(mu_);
  for (;;) {
    cv_.wait(g, [&] { return stop_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stopping, and every job published is done
    DrainJob& job = *jobs_.front();
    drain_job(job, g);
    jobs_.pop_front();
    job.done_at = now_s();
    job.done = true;
    cv_.notify_all();
  }
}

// Called and returns with mu_ held; releases it while the sinks and the records are worked on.
void Drainer::drain_job(DrainJob& job, std::unique_lock<std::mutex>& g) {
  ContextState* cs = job.cs;
  std::shared_ptr<const std::vector<Range>> ranges = ranges_;
  g.unlock();
  for (auto& s : sinks_) s->begin_launch(job.meta);
  g.lock();
  unsigned sleep_us = 1;
  while (true) {
    volatile uint64_t* ready = cs->host_ready + (uint32_t)(job.next_gen % cs->nbuf);
    // A launch that ended on a generation's boundary has no generation there: the next launch starts in it, and
    // its flag may already be up.
    const bool past_end = job.ended && !job.end.faulted && job.next_gen * cs->capacity >= job.end.end_ticket;
    if (!past_end && *ready == job.next_gen + 1) {
      ranges = ranges_;
      g.unlock();
      drain_generation(job, *ranges, job.next_gen, cs->capacity);
      g.lock();
      ++job.next_gen;
      sleep_us = 1;
      continue;
    }
    if (job.ended) {
      if (job.taken_at == 0) job.taken_at = now_s();  // once: a full generation's flag may still be in flight
      const KernelEnd& end = job.end;
      if (!end.faulted) {
        const uint64_t full = end.end_ticket / cs->capacity;
        if (job.next_gen < full) continue;  // a full generation whose flag is still in flight
        const uint64_t rest = end.end_ticket - job.next_gen * cs->capacity;
        ranges = ranges_;
        g.unlock();
        if (rest > 0) drain_generation(job, *ranges, job.next_gen++, rest);
      } else {
        g.unlock();
      }
      close_job(job);  // the sinks' end (a trace file's header written, closed) is part of the last generation
      job.last_s = now_s() - job.taken_at;
      g.lock();
      return;
    }
    // The GPU raises ready flags without a notification, so they are polled with back-off; the launch's end
    // (end()) notifies, and wakes this wait at once instead of after up to 200 us of sleep, which every
    // instrumented launch used to pay.
    cv_.wait_for(g, std::chrono::microseconds(sleep_us), [&] { return job.ended; });
    if (sleep_us < 200) sleep_us *= 2;
  }
}

// Without mu_: the sinks told of the launch's end, and what they said kept for the app's thread to log.
void Drainer::close_job(DrainJob& job) {
  const KernelEnd& end = job.end;
  job.complete = !end.faulted && job.drained == end.total && end.committed == end.total && !job.malformed;
  for (auto& s : sinks_) {
    s->end_launch(job.complete);
    if (!s->launch_note.empty() || !s->error.empty()) job.reports.push_back({s->name(), s->launch_note, s->error});
    s->launch_note.clear();
    s->error.clear();
  }
}

}  // namespace rlc
