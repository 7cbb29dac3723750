// Persistent worker threads: run(job) calls job(w) for w = 0..n-1, w = 0 on the caller's thread, and returns
// when all are done. The first exception any worker threw is rethrown on the caller's thread.
//
// consume() runs several short parallel steps per batch of records, back to back, so the hand-over between
// steps must cost microseconds, not a futex round trip per thread: workers spin on a generation counter for a
// while after each job (kSpinNanos) and only then sleep on a condition variable; the caller spins for the
// workers to finish. Between consume() calls (the drain thread waiting for the GPU) workers sleep and cost
// nothing.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif
#ifdef __linux__
#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace reuselens {
namespace detail {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

class WorkerPool {
 public:
  // How long an idle worker polls for the next job before it sleeps: longer than the serial work between two
  // steps of one batch, far shorter than a GPU kernel.
#ifndef REUSELENS_POOL_SPIN_NANOS
#define REUSELENS_POOL_SPIN_NANOS 200000
#endif
  static constexpr int64_t kSpinNanos = REUSELENS_POOL_SPIN_NANOS;

  // nice > 0: each worker thread lowers its own scheduling priority by that much (Linux: setpriority on its
  // thread id), so that the threads it shares the cores with (an app and its collector) run first.
  explicit WorkerPool(unsigned n, int nice = 0) : n_(n ? n : 1) {
    for (unsigned w = 1; w < n_; ++w)
      threads_.emplace_back([this, w, nice] {
        name_this_thread(w);
        lower_priority(nice);
        loop(w);
      });
  }
  // rl-engine-W in top -H, perf and /proc/PID/task/TID/comm (benchmarks/thread_times.py); worker 0 is the caller's
  // thread, which its owner names (the collector's engine queue: rl-engine-0).
  static void name_this_thread(unsigned w) {
#ifdef __linux__
    char name[16];
    std::snprintf(name, sizeof name, "rl-engine-%u", w);
    pthread_setname_np(pthread_self(), name);  // best effort
#else
    (void)w;
#endif
  }
  static void lower_priority(int nice) {
#ifdef __linux__
    if (nice > 0) setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), nice);  // best effort
#else
    (void)nice;
#endif
  }
  ~WorkerPool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_.store(true);
      generation_.fetch_add(1);
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }
  unsigned size() const { return n_; }

  void run(const std::function<void(unsigned)>& job) {
    if (n_ == 1) {
      job(0);
      return;
    }
    job_ = &job;
    error_ = nullptr;
    pending_.store(n_ - 1);
    generation_.fetch_add(1);  // seq_cst: ordered before the read of sleepers_ (see loop)
    if (sleepers_.load() > 0) {
      std::lock_guard<std::mutex> lock(mu_);
      wake_.notify_all();
    }
    std::exception_ptr mine;
    try {
      job(0);
    } catch (...) {
      mine = std::current_exception();
    }
    for (unsigned spins = 0; pending_.load(std::memory_order_acquire) != 0; ++spins) {
      if (spins < 4096) {
        cpu_relax();
      } else {
        std::this_thread::yield();
      }
    }
    job_ = nullptr;
    if (mine) std::rethrow_exception(mine);
    if (error_) std::rethrow_exception(error_);
  }

  // Every worker's share on the caller's thread, in order. For a batch too small to repay the hand-over: waking
  // the workers (asleep after a GPU wait) and spinning for them costs more than its work. Same results as run():
  // a step never depends on which thread runs a share, or on the order the shares run in.
  void run_inline(const std::function<void(unsigned)>& job) {
    for (unsigned w = 0; w < n_; ++w) job(w);
  }

 private:
  void loop(unsigned w) {
    uint64_t seen = 0;
    for (;;) {
      if (!await_generation(seen)) return;
      seen = generation_.load(std::memory_order_acquire);
      std::exception_ptr err;
      try {
        (*job_)(w);
      } catch (...) {
        err = std::current_exception();
      }
      if (err) {
        std::lock_guard<std::mutex> lock(mu_);
        if (!error_) error_ = err;
      }
      pending_.fetch_sub(1, std::memory_order_acq_rel);
    }
  }
  // Waits until the generation moves past `seen`: polls first, then sleeps. A worker counts itself in
  // sleepers_ before its last check under the mutex; run() bumps the generation before it reads sleepers_,
  // both sequentially consistent, so either run() sees the sleeper and notifies under the mutex, or the
  // sleeper sees the new generation and never waits. Returns false when the pool stops.
  bool await_generation(uint64_t seen) {
    auto start = std::chrono::steady_clock::now();
    for (unsigned spins = 0; generation_.load(std::memory_order_acquire) == seen; ++spins) {
      cpu_relax();
      if ((spins & 255) == 255 && std::chrono::steady_clock::now() - start > std::chrono::nanoseconds(kSpinNanos)) {
        std::unique_lock<std::mutex> lock(mu_);
        sleepers_.fetch_add(1);
        wake_.wait(lock, [&] { return generation_.load() != seen; });
        sleepers_.fetch_sub(1);
        break;
      }
    }
    return !stop_.load();
  }

  unsigned n_;
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable wake_;
  const std::function<void(unsigned)>* job_ = nullptr;
  std::exception_ptr error_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<unsigned> pending_{0};
  std::atomic<unsigned> sleepers_{0};
  std::atomic<bool> stop_{false};
};

}  // namespace detail
}  // namespace reuselens
