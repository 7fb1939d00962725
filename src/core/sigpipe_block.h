// SigpipeBlock: a write to a pipe or socket whose reader is gone raises SIGPIPE, whose default
// action ends the process. Writers that must see EPIPE instead (the worker's frames, hiredis's
// socket writes) block SIGPIPE in the calling thread for the write and consume the signal it
// caused. Internal.
#pragma once

#include <pthread.h>
#include <signal.h>

#include <cerrno>
#include <ctime>

namespace ktune {

// Blocks SIGPIPE in this thread for its lifetime. SIGPIPE from write() is sent to the writing
// thread, so while blocked it stays pending; consume() takes it back unless it was already
// pending before (someone else's, left for them).
class SigpipeBlock {
 public:
  SigpipeBlock() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGPIPE);
    sigset_t pending;
    sigemptyset(&pending);
    ::pthread_sigmask(SIG_BLOCK, &set_, &old_);
    ::sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
  }
  ~SigpipeBlock() { ::pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
  SigpipeBlock(const SigpipeBlock&) = delete;
  SigpipeBlock& operator=(const SigpipeBlock&) = delete;

  void consume() {
    if (was_pending_) return;
    const timespec zero{};
    while (::sigtimedwait(&set_, nullptr, &zero) < 0 && errno == EINTR) {
    }
  }

 private:
  sigset_t set_;
  sigset_t old_;
  bool was_pending_ = false;
};

}  // namespace ktune
