// run_process: posix_spawnp into a fresh process group with stdout+stderr on one pipe, a poll loop
// against the deadline that keeps the output's tail, and SIGTERM -> grace -> SIGKILL of the whole
// group on timeout. Every fd is owned by a UniqueFd; the child sees only stdin, stdout and stderr.
#include "core/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "core/unique_fd.h"

extern char** environ;

namespace ktune {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::chrono::milliseconds kKillGrace{500};

// posix_spawn attributes and file actions with destructors.
class SpawnSetup {
 public:
  SpawnSetup() {
    posix_spawnattr_init(&attr_);
    posix_spawn_file_actions_init(&actions_);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions_);
    posix_spawnattr_destroy(&attr_);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;

  // Returns 0 or an errno value.
  int configure(int out_fd, const std::string& working_dir) {
    sigset_t empty;
    sigset_t all;
    sigemptyset(&empty);
    sigfillset(&all);
    short flags = POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
    if (int rc = posix_spawnattr_setflags(&attr_, flags)) return rc;
    if (int rc = posix_spawnattr_setpgroup(&attr_, 0)) return rc;  // its own group
    if (int rc = posix_spawnattr_setsigmask(&attr_, &empty)) return rc;
    if (int rc = posix_spawnattr_setsigdefault(&attr_, &all)) return rc;
    if (int rc = posix_spawn_file_actions_addopen(&actions_, 0, "/dev/null", O_RDONLY, 0))
      return rc;
    if (int rc = posix_spawn_file_actions_adddup2(&actions_, out_fd, 1)) return rc;
    if (int rc = posix_spawn_file_actions_adddup2(&actions_, out_fd, 2)) return rc;
    if (int rc = posix_spawn_file_actions_addclosefrom_np(&actions_, 3)) return rc;
    if (!working_dir.empty()) {
      if (int rc = posix_spawn_file_actions_addchdir_np(&actions_, working_dir.c_str())) return rc;
    }
    return 0;
  }
  const posix_spawnattr_t* attr() const { return &attr_; }
  const posix_spawn_file_actions_t* actions() const { return &actions_; }

 private:
  posix_spawnattr_t attr_;
  posix_spawn_file_actions_t actions_;
};

// Appends to `out`, keeping at most `max_bytes` of the tail (trimmed lazily to stay linear).
void append_tail(std::string& out, const char* data, std::size_t n, std::size_t max_bytes) {
  out.append(data, n);
  if (out.size() > 2 * max_bytes + 4096) out.erase(0, out.size() - max_bytes);
}

int remaining_ms(Clock::time_point deadline) {
  auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left < 0 ? 0 : static_cast<int>(left);
}

// Non-blocking reap; true when the child was reaped into `status`.
bool try_reap(pid_t pid, int& status) {
  for (;;) {
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return true;
    if (r < 0 && errno == EINTR) continue;
    return false;
  }
}

// Polls for the child's exit until `deadline`; true when reaped.
bool reap_until(pid_t pid, int& status, Clock::time_point deadline) {
  auto nap = std::chrono::microseconds(200);
  while (!try_reap(pid, status)) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(nap);
    nap = std::min<std::chrono::microseconds>(nap * 2, std::chrono::milliseconds(10));
  }
  return true;
}

void reap_blocking(pid_t pid, int& status) {
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

// SIGTERM to the group, a grace period, then SIGKILL; always reaps.
void terminate_group(pid_t pid, int& status) {
  ::kill(-pid, SIGTERM);
  if (reap_until(pid, status, Clock::now() + kKillGrace)) {
    ::kill(-pid, SIGKILL);  // stragglers the leader left behind
    return;
  }
  ::kill(-pid, SIGKILL);
  reap_blocking(pid, status);
}

}  // namespace

Result<ProcessResult> run_process(const std::vector<std::string>& argv,
                                  const ProcessOptions& options) {
  if (argv.empty()) return make_error(ErrorCode::kInvalidArgument, "run_process: empty argv");
  const std::string& program = argv.front();

  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return make_error(ErrorCode::kIo, "run_process: pipe: " + std::string(std::strerror(errno)));
  }
  UniqueFd read_end(fds[0]);
  UniqueFd write_end(fds[1]);

  SpawnSetup setup;
  if (int rc = setup.configure(write_end.get(), options.working_dir)) {
    return make_error(ErrorCode::kIo,
                      "run_process: posix_spawn setup: " + std::string(std::strerror(rc)));
  }
  std::vector<char*> cargv;
  cargv.reserve(argv.size() + 1);
  for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);

  const auto start = Clock::now();
  const auto deadline = start + options.timeout;
  pid_t pid = -1;
  int rc =
      ::posix_spawnp(&pid, program.c_str(), setup.actions(), setup.attr(), cargv.data(), environ);
  if (rc != 0) {
    ErrorCode code =
        (rc == ENOENT || rc == EACCES || rc == ENOTDIR) ? ErrorCode::kNotFound : ErrorCode::kIo;
    return make_error(code, "run_process: cannot start '" + program + "': " + std::strerror(rc));
  }
  write_end.reset();  // only the child holds the write end now: EOF when it (and its kids) exit

  ProcessResult result;
  int status = 0;
  bool reaped = false;
  char buf[16384];
  for (;;) {
    pollfd pfd{read_end.get(), POLLIN, 0};
    int left = remaining_ms(deadline);
    int n = left == 0 ? 0 : ::poll(&pfd, 1, left);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) {
      result.timed_out = true;
      break;
    }
    ssize_t got = ::read(read_end.get(), buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;  // EOF (or an error reading: treat as EOF)
    append_tail(result.output, buf, static_cast<std::size_t>(got), options.max_output_bytes);
  }
  if (!result.timed_out) {
    // The pipe closed; the child normally exits right after, but the deadline still holds.
    reaped = reap_until(pid, status, deadline);
    if (!reaped) result.timed_out = true;
  }
  if (result.timed_out) terminate_group(pid, status);

  if (result.output.size() > options.max_output_bytes) {
    result.output.erase(0, result.output.size() - options.max_output_bytes);
  }
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.term_signal = WTERMSIG(status);
  result.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

}  // namespace ktune
