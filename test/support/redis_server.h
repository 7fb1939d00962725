// RedisServer: a real redis-server for one test process, on a free loopback port, with no
// persistence (--save '' --appendonly no), stopped (and its folder removed) when the object
// goes. Without redis-server installed, a test skips, except under CI=true, where that fails:
// CI installs it (make deps), so a missing server there is a broken setup, not a skip.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "support/temp_dir.h"

namespace ktune::test {

// redis-server's path from $PATH; empty when it is not installed.
inline std::string find_redis_server() {
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  dirs += ":/usr/sbin:/sbin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    std::size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const std::filesystem::path candidate =
        std::filesystem::path(dirs.substr(start, end - start)) / "redis-server";
    if (!candidate.parent_path().empty() && ::access(candidate.c_str(), X_OK) == 0) {
      return candidate.string();
    }
    start = end + 1;
  }
  return {};
}

inline bool running_in_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

// A loopback port that nothing listens on now (the kernel's pick for port 0).
inline int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  ::close(fd);
  return port;
}

// True when a server on 127.0.0.1:port answers PING with +PONG.
inline bool redis_answers(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  timeval tv{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  bool ok = false;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::send(fd, "PING\r\n", 6, MSG_NOSIGNAL) == 6) {
    char buf[16] = {};
    const ssize_t n = ::recv(fd, buf, sizeof buf - 1, 0);
    // A server that requires a password answers -NOAUTH: it is up all the same.
    ok = n > 0 && (std::strncmp(buf, "+PONG", 5) == 0 || std::strncmp(buf, "-NOAUTH", 7) == 0);
  }
  ::close(fd);
  return ok;
}

class RedisServer {
 public:
  // Starts redis-server with `extra` arguments (e.g. {"--requirepass", "pw"}). Nothing is
  // recorded here: require_redis() turns a server that is not running into a skip or a failure.
  explicit RedisServer(std::vector<std::string> extra = {}) {
    const std::string exe = find_redis_server();
    if (exe.empty()) {
      not_installed_ = true;
      why_not_ = "redis-server is not installed (Debian: redis-server)";
      return;
    }
    // Another process may take the port between the pick and the server's bind: try again.
    for (int attempt = 0; attempt < 5 && pid_ <= 0; ++attempt) start(exe, extra);
    if (pid_ > 0) why_not_.clear();
  }
  ~RedisServer() { stop(); }
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  [[nodiscard]] bool started() const { return pid_ > 0; }
  [[nodiscard]] bool not_installed() const { return not_installed_; }
  [[nodiscard]] const std::string& why_not() const { return why_not_; }
  [[nodiscard]] int port() const { return port_; }
  [[nodiscard]] std::string url(int db = 0) const {
    return "redis://127.0.0.1:" + std::to_string(port_) + "/" + std::to_string(db);
  }

  // Ends the server at once (SIGKILL): what a server that crashed or was stopped looks like.
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }

 private:
  void start(const std::string& exe, const std::vector<std::string>& extra) {
    port_ = free_loopback_port();
    std::vector<std::string> args = {
        exe,      "--port", std::to_string(port_), "--bind",     "127.0.0.1",
        "--save", "",       "--appendonly",        "no",         "--daemonize",
        "no",     "--dir",  dir_.path().string(),  "--loglevel", "warning"};
    args.insert(args.end(), extra.begin(), extra.end());
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlives a test that crashed
      const std::string log = (dir_.path() / "redis.log").string();
      if (std::FILE* f = std::freopen(log.c_str(), "w", stdout)) ::dup2(::fileno(f), 2);
      std::vector<char*> argv;
      for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(exe.c_str(), argv.data());
      ::_exit(127);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) {  // it ended: port taken, bad argument
        why_not_ = "exited; see its log in " + dir_.path().string();
        return;
      }
      if (redis_answers(port_)) {
        pid_ = pid;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    why_not_ = "no answer to PING within 10 s";
  }

  TempDir dir_{"redis"};
  pid_t pid_ = -1;
  int port_ = 0;
  bool not_installed_ = false;
  std::string why_not_;
};

// For a test body or SetUp: nothing when `server` runs; else a skip when redis-server is not
// installed (a failure under CI=true, whose setup installs it) or a failure when it did not
// start. The caller returns when !server.started().
inline void require_redis(const RedisServer& server) {
  if (server.started()) return;
  if (server.not_installed() && !running_in_ci()) {
    GTEST_SKIP() << server.why_not() << "; Redis tests skipped";
  }
  ADD_FAILURE() << "no redis-server for this test: " << server.why_not()
                << (server.not_installed()
                        ? " (CI=true: the Makefile's DEBIAN_PACKAGES installs it)"
                        : "");
}

// The redis-server of this test process, started on first use and shared by its tests (ctest
// runs each test in its own process; a binary run by hand shares one server). Check it with
// require_redis().
inline RedisServer& shared_redis_server() {
  static RedisServer server;
  return server;
}

}  // namespace ktune::test
