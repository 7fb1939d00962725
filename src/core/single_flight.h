// SingleFlight: one computation per key at a time. A caller that asks for a key whose
// computation is under way waits for that one's result instead of computing it again (as Go's
// singleflight). Used where identical work is asked for concurrently: the CUDA backend's
// compiles, where the candidates of one problem share an epilogue kernel and a graph's problems
// are compiled side by side.
#pragma once

#include <exception>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace ktune {

template <class T>
class SingleFlight {
 public:
  // `compute()`'s result, computed here, or the result of the call for `key` already running
  // (`*shared` set to true then).
  T run(const std::string& key, const std::function<T()>& compute, bool* shared = nullptr) {
    std::promise<T> promise;
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (auto it = running_.find(key); it != running_.end()) {
        std::shared_future<T> other = it->second;
        lock.unlock();
        if (shared != nullptr) *shared = true;
        return other.get();
      }
      running_.emplace(key, promise.get_future().share());
    }
    if (shared != nullptr) *shared = false;
    // Whatever happens, the waiters get it and the key is free again.
    struct Done {
      SingleFlight* self;
      const std::string& key;
      ~Done() {
        std::lock_guard<std::mutex> lock(self->mu_);
        self->running_.erase(key);
      }
    } done{this, key};
    try {
      T result = compute();
      promise.set_value(result);
      return result;
    } catch (...) {
      promise.set_exception(std::current_exception());
      throw;
    }
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::shared_future<T>> running_;
};

}  // namespace ktune
