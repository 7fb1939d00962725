// ThreadPool: a fixed set of threads running submitted jobs; used for parallel compilation.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ktune {

class ThreadPool {
 public:
  // threads == 0: std::thread::hardware_concurrency().
  explicit ThreadPool(unsigned threads = 0);
  ~ThreadPool();  // finishes queued jobs, then joins
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  void submit(std::function<void()> job);
  void wait_idle();  // blocks until the queue is empty and no job runs
  [[nodiscard]] unsigned size() const { return static_cast<unsigned>(threads_.size()); }

 private:
  void run();
  std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable idle_cv_;
  std::deque<std::function<void()>> queue_;
  std::vector<std::thread> threads_;
  unsigned active_ = 0;
  bool stop_ = false;
};

}  // namespace ktune
