// Persistent worker threads: run(job) calls job(w) for w = 0..n-1, w = 0 on the caller's thread, and returns
// when all are done. The first exception any worker threw is rethrown on the caller's thread.
#pragma once

#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace reuselens {
namespace detail {

class WorkerPool {
 public:
  explicit WorkerPool(unsigned n) : n_(n ? n : 1) {
    for (unsigned w = 1; w < n_; ++w) threads_.emplace_back([this, w] { loop(w); });
  }
  ~WorkerPool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    start_.notify_all();
    for (auto& t : threads_) t.join();
  }
  unsigned size() const { return n_; }

  void run(const std::function<void(unsigned)>& job) {
    if (n_ == 1) {
      job(0);
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      job_ = &job;
      pending_ = n_ - 1;
      error_ = nullptr;
      ++generation_;
    }
    start_.notify_all();
    std::exception_ptr mine;
    try {
      job(0);
    } catch (...) {
      mine = std::current_exception();
    }
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [this] { return pending_ == 0; });
    job_ = nullptr;
    if (mine) std::rethrow_exception(mine);
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void loop(unsigned w) {
    uint64_t seen = 0;
    for (;;) {
      const std::function<void(unsigned)>* job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        start_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
        job = job_;
      }
      std::exception_ptr err;
      try {
        (*job)(w);
      } catch (...) {
        err = std::current_exception();
      }
      std::lock_guard<std::mutex> lock(mu_);
      if (err && !error_) error_ = err;
      if (--pending_ == 0) done_.notify_one();
    }
  }

  unsigned n_;
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable start_, done_;
  const std::function<void(unsigned)>* job_ = nullptr;
  unsigned pending_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
};

}  // namespace detail
}  // namespace reuselens
