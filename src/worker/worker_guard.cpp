// The worker's own defences (worker_guard.h).
//
// Candidate code runs in this process, so nothing here is out of its reach: it can find the
// moved descriptors in /proc/self/fd, unblock SIGTERM or kill the guardian thread. What these
// measures buy is that a candidate can no longer disturb the protocol, the next candidate or
// the machine by accident or by the obvious means (writing to descriptor 4, leaving the rounding
// mode set, a child in its own session); the parent's checks (worker_checks.h) do not depend on
// them.
#include "worker/worker_guard.h"

#include <fcntl.h>
#include <fenv.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <thread>

#include "worker/process_tree.h"

namespace ktune {
namespace {

// The signals whose default action the parent relies on to classify a lost worker.
constexpr int kDefaultSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGXCPU, SIGTRAP};

sigset_t guarded_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  return set;
}

// An unused descriptor number drawn at random from [64, min(RLIMIT_NOFILE, 65536)), so that a
// candidate cannot write to the protocol by number; a plain F_DUPFD above 64 if none is found.
Result<int> move_to_random_fd(int fd) {
  rlimit nofile{};
  ::getrlimit(RLIMIT_NOFILE, &nofile);
  const unsigned long hi = std::min<unsigned long>(nofile.rlim_cur, 65536);
  constexpr unsigned long kLow = 64;
  for (int attempt = 0; hi > kLow + 64 && attempt < 32; ++attempt) {
    unsigned int r = 0;
    if (::getrandom(&r, sizeof r, 0) != sizeof r) break;
    const int target = static_cast<int>(kLow + r % (hi - kLow));
    if (::fcntl(target, F_GETFD) >= 0 || errno != EBADF) continue;  // in use
    if (::dup3(fd, target, O_CLOEXEC) == target) return target;
  }
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, static_cast<int>(kLow));
  if (moved < 0) {
    return make_error(ErrorCode::kIo,
                      fmt::format("cannot move descriptor {}: {}", fd, std::strerror(errno)));
  }
  return moved;
}

// The guardian: waits for SIGTERM (blocked in every other thread) or for the parent to vanish,
// then kills the tree and the worker. Its thread exists before any candidate runs, so the
// parent counts it among the worker's own threads.
[[noreturn]] void guard(pid_t parent_pid) {
  const sigset_t set = guarded_set();
  const timespec second{1, 0};
  for (;;) {
    const int sig = ::sigtimedwait(&set, nullptr, &second);
    if (sig == SIGTERM || (parent_pid > 0 && ::getppid() != parent_pid)) break;
  }
  worker_detail::kill_tree(::getpid(), /*include_root=*/false);
  // Die of SIGTERM, as the worker did before it had a guardian.
  ::signal(SIGTERM, SIG_DFL);
  ::pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  ::raise(SIGTERM);
  ::_exit(128 + SIGTERM);
}

bool same_file(int fd, dev_t dev, ino_t ino) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

}  // namespace

Result<HardenedFds> harden_worker(ProtocolFds fds, pid_t parent_pid) {
  // The parent may have died between its fork and the death signal taking effect.
  if (parent_pid > 0 && ::getppid() != parent_pid) ::_exit(3);
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  ProtocolFds moved;
  Result<int> in = move_to_random_fd(fds.in);
  if (!in) return std::unexpected(in.error());
  Result<int> out = move_to_random_fd(fds.out);
  if (!out) return std::unexpected(out.error());
  moved = {*in, *out};
  // The decoys, at the old numbers: reading gives end of file, writing fills a pipe that
  // CandidateGuard::check() drains (non-blocking, so a flood gets EAGAIN, not a hang).
  const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  int pipe_fds[2];
  if (null < 0 || ::pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) != 0 ||
      ::dup3(null, fds.in, O_CLOEXEC) != fds.in ||
      ::dup3(pipe_fds[1], fds.out, O_CLOEXEC) != fds.out) {
    return make_error(ErrorCode::kIo,
                      fmt::format("cannot place decoy descriptors: {}", std::strerror(errno)));
  }
  ::close(null);
  ::close(pipe_fds[1]);
  Result<int> reader = move_to_random_fd(pipe_fds[0]);
  ::close(pipe_fds[0]);
  if (!reader) return std::unexpected(reader.error());
  ::fcntl(*reader, F_SETFL, O_NONBLOCK);

  const sigset_t set = guarded_set();
  ::pthread_sigmask(SIG_BLOCK, &set, nullptr);  // inherited by the guardian and every thread
  std::thread(guard, parent_pid).detach();
  return HardenedFds{moved, *reader};
}

CandidateGuard::CandidateGuard(ProtocolFds old_fds, int decoy_reader)
    : old_(old_fds), decoy_reader_(decoy_reader) {
  std::error_code ec;
  cwd_path_ = std::filesystem::current_path(ec).string();
  cwd_.reset(::open(".", O_PATH | O_DIRECTORY | O_CLOEXEC));
  umask_ = ::umask(022);
  ::umask(umask_);
  int at = 0;
  for (int fd : {old_.in, old_.out}) {
    struct stat st {};
    if (fd >= 0 && ::fstat(fd, &st) == 0) {
      decoy_dev_[at] = st.st_dev;
      decoy_ino_[at] = st.st_ino;
    }
    ++at;
  }
}

void CandidateGuard::reset() const {
  // FE_DFL_ENV restores the x87 control word and MXCSR alike on glibc (MXCSR 0x1f80: round to
  // nearest, all exceptions masked, FTZ and DAZ off).
  ::fesetenv(FE_DFL_ENV);
  if (!cwd_ || ::fchdir(cwd_.get()) != 0) {
    if (!cwd_path_.empty() && ::chdir(cwd_path_.c_str()) != 0) {
      std::fprintf(stderr, "ktune-worker: cannot return to %s\n", cwd_path_.c_str());
    }
  }
  ::umask(umask_);
  struct sigaction action {};
  action.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &action, nullptr);
  action.sa_handler = SIG_DFL;
  for (int sig : kDefaultSignals) ::sigaction(sig, &action, nullptr);
  const sigset_t set = guarded_set();
  ::pthread_sigmask(SIG_SETMASK, &set, nullptr);
}

std::string CandidateGuard::check() {
  while (::waitpid(-1, nullptr, WNOHANG) > 0) {
  }
  std::string problem;
  if (decoy_reader_) {
    char buf[4096];
    std::size_t forged = 0;
    ssize_t n;
    while ((n = ::read(decoy_reader_.get(), buf, sizeof buf)) > 0) {
      forged += static_cast<std::size_t>(n);
    }
    if (forged > 0) {
      problem = fmt::format(
          "forged worker answer: the candidate wrote {} bytes to descriptor {}, where the "
          "worker's answers used to go",
          forged, old_.out);
    }
  }
  const int fds[2] = {old_.in, old_.out};
  for (int i = 0; i < 2 && problem.empty(); ++i) {
    if (fds[i] >= 0 && !same_file(fds[i], decoy_dev_[i], decoy_ino_[i])) {
      problem = fmt::format(
          "tampered with the worker's descriptors: descriptor {} was closed or replaced", fds[i]);
    }
  }
  return problem;
}

}  // namespace ktune
