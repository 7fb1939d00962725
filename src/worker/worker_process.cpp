// Finding and starting ktune-worker, and ending it (worker_process.h).
//
// fork + execve rather than posix_spawn: the child needs its pipes at fixed descriptors and an
// RLIMIT_CPU, which posix_spawn cannot express. Between fork and execve the child makes only
// async-signal-safe calls, since the parent may have other threads (compiles, thread pools);
// everything it needs (argv, envp, limits) is built before fork.
#include "worker/worker_process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "core/measurement_env.h"
#include "worker/process_tree.h"

extern char** environ;

namespace ktune {
namespace fs = std::filesystem;

namespace {

bool is_executable_file(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec) && ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

Result<fs::path> find_worker_executable() {
  // An explicit $KTUNE_WORKER is the only place looked at: silently running another worker
  // than the one asked for would hide the mistake.
  if (const char* env = std::getenv("KTUNE_WORKER"); env != nullptr && *env != '\0') {
    if (is_executable_file(env)) return fs::path(env);
    return make_error(ErrorCode::kNotFound,
                      fmt::format("find_worker_executable: $KTUNE_WORKER={} is not an executable "
                                  "file; unset it to search {} and the running program's folder",
                                  env, KTUNE_INSTALL_LIBEXECDIR));
  }
  std::vector<fs::path> tried = {fs::path(KTUNE_INSTALL_LIBEXECDIR) / "ktune-worker"};
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    tried.push_back(self.parent_path() / "ktune-worker");
    // An install moved to another prefix: <prefix>/bin/ktune next to <prefix>/libexec/.
    tried.push_back(self.parent_path().parent_path() / "libexec" / "ktune-worker");
  }
  for (const fs::path& candidate : tried) {
    if (is_executable_file(candidate)) return candidate;
  }
  std::string places = "$KTUNE_WORKER (unset)";
  for (const fs::path& p : tried) places += ", " + p.string();
  return make_error(ErrorCode::kNotFound,
                    fmt::format("find_worker_executable: no ktune-worker executable; tried {}. "
                                "Set KTUNE_WORKER to its path",
                                places));
}

WorkerOptions worker_options_for(const WorkerOptions& base, const DeviceSlot& slot) {
  WorkerOptions out = base;
  for (const auto& [name, value] : slot.env) {
    std::erase_if(out.env, [&](const auto& entry) { return entry.first == name; });
    out.env.emplace_back(name, value);
  }
  if (!slot.cpus.empty()) out.cpus = slot.cpus;
  return out;
}

namespace worker_detail {
namespace {

std::string errno_text(int e) { return std::error_code(e, std::generic_category()).message(); }

// ktune's environment, then options.env (replacing), then the benchmark defaults (if unset).
std::vector<std::string> worker_environment(const WorkerOptions& options) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) env.emplace_back(*e);
  auto set = [&env](const std::string& name, const std::string& value, bool overwrite) {
    const std::string prefix = name + "=";
    for (std::string& entry : env) {
      if (entry.starts_with(prefix)) {
        if (overwrite) entry = prefix + value;
        return;
      }
    }
    env.push_back(prefix + value);
  };
  for (const auto& [name, value] : options.env) set(name, value, true);
  for (const auto& [name, value] : kMeasurementEnvironment) {
    set(std::string(name), std::string(value), false);
  }
  // A worker pinned to some cores runs as many threads as it has cores, unless told otherwise.
  if (!options.cpus.empty()) {
    const std::string count = std::to_string(options.cpus.size());
    set("OMP_NUM_THREADS", count, false);
    set("OPENBLAS_NUM_THREADS", count, false);
  }
  return env;
}

// What the child needs, prepared before fork.
struct ChildPlan {
  const char* path = nullptr;
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  int request_read = -1;
  int response_write = -1;
  int output_write = -1;
  int exec_error_write = -1;
  bool set_cpu_limit = false;
  rlimit cpu_limit{};
  bool set_affinity = false;
  cpu_set_t affinity{};
  pid_t parent_pid = -1;
};

[[noreturn]] void child_fail(int report_fd) {
  const int e = errno;
  [[maybe_unused]] ssize_t n = ::write(report_fd, &e, sizeof e);
  ::_exit(127);
}

// In the child, between fork and execve: async-signal-safe calls only.
[[noreturn]] void exec_child(const ChildPlan& plan) {
  ::setpgid(0, 0);
  // The worker dies with ktune: SIGTERM, which its guardian thread turns into killing the
  // worker's whole tree (descendants do not inherit a death signal). The signal follows the
  // thread that forked, so the worker also checks its parent by pid, at start and each request.
  // A parent already gone before prctl is caught here.
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != plan.parent_pid) ::_exit(127);
  // Move every source above the targets first, so that no dup2 overwrites one still needed.
  const int report = ::fcntl(plan.exec_error_write, F_DUPFD_CLOEXEC, 10);
  if (report < 0) child_fail(plan.exec_error_write);
  const int request = ::fcntl(plan.request_read, F_DUPFD_CLOEXEC, 10);
  const int response = ::fcntl(plan.response_write, F_DUPFD_CLOEXEC, 10);
  const int output = ::fcntl(plan.output_write, F_DUPFD_CLOEXEC, 10);
  const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (request < 0 || response < 0 || output < 0 || null < 0) child_fail(report);
  // dup2 clears CLOEXEC on the target; the report pipe is moved to 5 and stays CLOEXEC, so
  // that a successful execve closes it.
  if (::dup2(null, 0) < 0 || ::dup2(output, 1) < 0 || ::dup2(output, 2) < 0 ||
      ::dup2(request, kChildRequestFd) < 0 || ::dup2(response, kChildResponseFd) < 0 ||
      ::dup3(report, 5, O_CLOEXEC) < 0) {
    child_fail(report);
  }
  if (::close_range(6, ~0U, 0) != 0) {
    for (int fd = 6; fd < 65536; ++fd) ::close(fd);
  }
  if (plan.set_cpu_limit && ::setrlimit(RLIMIT_CPU, &plan.cpu_limit) != 0) child_fail(5);
  if (plan.set_affinity && ::sched_setaffinity(0, sizeof plan.affinity, &plan.affinity) != 0) {
    child_fail(5);
  }
  // Ignored signals and the signal mask survive execve; the worker starts from the defaults.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::execve(plan.path, plan.argv, plan.envp);
  child_fail(5);
}

bool make_pipe(UniqueFd& read_end, UniqueFd& write_end) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  read_end.reset(fds[0]);
  write_end.reset(fds[1]);
  return true;
}

}  // namespace

Result<SpawnedWorker> spawn_worker(const fs::path& executable, const WorkerOptions& options) {
  const std::string where = "Worker::start: " + executable.string();
  UniqueFd request_read, request_write, response_read, response_write, output_read, output_write,
      report_read, report_write;
  if (!make_pipe(request_read, request_write) || !make_pipe(response_read, response_write) ||
      !make_pipe(output_read, output_write) || !make_pipe(report_read, report_write)) {
    return make_error(ErrorCode::kIo, where + ": pipe2 failed; " + errno_text(errno));
  }

  const pid_t self = ::getpid();
  std::vector<std::string> args = {executable.string(),
                                   "--in-fd",
                                   std::to_string(kChildRequestFd),
                                   "--out-fd",
                                   std::to_string(kChildResponseFd),
                                   "--parent-pid",
                                   std::to_string(self)};
  std::vector<std::string> env = worker_environment(options);
  std::vector<char*> argv, envp;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);

  ChildPlan plan;
  plan.path = args.front().c_str();
  plan.argv = argv.data();
  plan.envp = envp.data();
  plan.request_read = request_read.get();
  plan.response_write = response_write.get();
  plan.output_write = output_write.get();
  plan.exec_error_write = report_write.get();
  plan.parent_pid = self;
  if (options.cpu_limit_s > 0) {
    // Soft limit: SIGXCPU, which the parent reports; the hard limit a second later: SIGKILL.
    rlimit current{};
    ::getrlimit(RLIMIT_CPU, &current);
    const rlim_t soft = static_cast<rlim_t>(options.cpu_limit_s);
    plan.cpu_limit.rlim_max = std::min(current.rlim_max, soft + 1);
    plan.cpu_limit.rlim_cur = std::min(soft, plan.cpu_limit.rlim_max);
    plan.set_cpu_limit = true;
  }
  if (!options.cpus.empty()) {
    CPU_ZERO(&plan.affinity);
    for (int c : options.cpus) {
      if (c < 0 || c >= CPU_SETSIZE) {
        return make_error(ErrorCode::kInvalidArgument,
                          fmt::format("{}: core {} is outside 0-{}", where, c, CPU_SETSIZE - 1));
      }
      CPU_SET(c, &plan.affinity);
    }
    plan.set_affinity = true;
  }

  const pid_t pid = ::fork();
  if (pid < 0) return make_error(ErrorCode::kIo, where + ": fork failed; " + errno_text(errno));
  if (pid == 0) exec_child(plan);
  ::setpgid(pid, pid);  // also in the child: whichever runs first, the group exists at once
  request_read.reset();
  response_write.reset();
  output_write.reset();
  report_write.reset();

  int child_errno = 0;
  ssize_t got;
  while ((got = ::read(report_read.get(), &child_errno, sizeof child_errno)) < 0 &&
         errno == EINTR) {
  }
  if (got > 0) {
    int status = 0;
    kill_group(pid, status);
    const ErrorCode code = (child_errno == ENOENT || child_errno == EACCES ||
                            child_errno == ENOTDIR || child_errno == ENOEXEC)
                               ? ErrorCode::kNotFound
                               : ErrorCode::kIo;
    return make_error(code, where + ": cannot execute it; " + errno_text(child_errno));
  }
  for (int fd : {request_write.get(), response_read.get(), output_read.get()}) {
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  }
  return SpawnedWorker{pid, std::move(request_write), std::move(response_read),
                       std::move(output_read)};
}

bool try_reap(pid_t pid, int& status) {
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return true;
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && errno == ECHILD) {  // reaped by someone else (a SIGCHLD handler)
      status = 0;
      return true;
    }
    return false;
  }
}

bool reap_until(pid_t pid, int& status, Clock::time_point deadline) {
  auto nap = std::chrono::microseconds(100);
  while (!try_reap(pid, status)) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(nap);
    nap = std::min<std::chrono::microseconds>(nap * 2, std::chrono::milliseconds(5));
  }
  return true;
}

void kill_group(pid_t pid, int& status, const std::vector<ProcessId>& known) {
  kill_tree(pid, /*include_root=*/true, known);
  ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);  // in case it never reached setpgid
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

void terminate_group(pid_t pid, std::chrono::milliseconds grace, int& status,
                     const std::vector<ProcessId>& known) {
  // Descendants first, while they are still the worker's: once it exits they are re-parented
  // out of its tree. Those in its group die by the group's signals too.
  kill_tree(pid, /*include_root=*/false, known);
  ::kill(-pid, SIGTERM);
  ::kill(-pid, SIGCONT);
  if (reap_until(pid, status, Clock::now() + grace)) {
    ::kill(-pid, SIGKILL);  // stragglers the leader left behind
    return;
  }
  kill_group(pid, status, known);
}

std::string signal_text(int signal) {
  const char* abbrev = ::sigabbrev_np(signal);
  const char* descr = ::sigdescr_np(signal);
  std::string text =
      abbrev != nullptr ? "SIG" + std::string(abbrev) : fmt::format("signal {}", signal);
  if (descr != nullptr) text += fmt::format(" ({})", descr);
  return text;
}

void OutputTail::append(std::string_view data) {
  if (capacity_ == 0) return;
  if (data.size() >= capacity_) {
    ring_.assign(data.substr(data.size() - capacity_));
    head_ = 0;
    return;
  }
  if (ring_.size() < capacity_) {
    const std::size_t fits = std::min(capacity_ - ring_.size(), data.size());
    ring_.append(data.substr(0, fits));
    data.remove_prefix(fits);
  }
  while (!data.empty()) {  // full: overwrite the oldest bytes
    const std::size_t chunk = std::min(capacity_ - head_, data.size());
    ring_.replace(head_, chunk, data.substr(0, chunk));
    head_ = (head_ + chunk) % capacity_;
    data.remove_prefix(chunk);
  }
}

std::string OutputTail::str() const {
  if (ring_.size() < capacity_ || head_ == 0) return ring_;
  return ring_.substr(head_) + ring_.substr(0, head_);
}

}  // namespace worker_detail
}  // namespace ktune
