// ktune-worker: the process in which generated code runs, so that a candidate that crashes, hangs
// or corrupts memory costs that candidate alone. It speaks the worker protocol
// (worker_protocol.h) on the two descriptors it is given, never on stdout or stderr, which
// belong to the kernels and are collected by the parent. Exit codes: 0 when the parent closes
// the request pipe, 2 on a usage error, 3 when the protocol breaks.
#include <fcntl.h>
#include <signal.h>

#include <charconv>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "worker/worker_loop.h"

namespace {

constexpr const char* kUsage =
    "usage: ktune-worker --in-fd N --out-fd M\n"
    "       ktune-worker --version | --help\n"
    "Reads length-prefixed JSON requests from descriptor N and answers on descriptor M.\n";

int usage_error(const std::string& what) {
  std::fprintf(stderr, "error: ktune-worker: %s\n%s", what.c_str(), kUsage);
  return 2;
}

// The descriptor named by `text`, when it is a number naming an open descriptor.
std::optional<int> parse_fd(std::string_view text) {
  int fd = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), fd);
  if (ec != std::errc() || end != text.data() + text.size() || fd < 0) return std::nullopt;
  if (::fcntl(fd, F_GETFD) < 0) return std::nullopt;
  return fd;
}

}  // namespace

int main(int argc, char** argv) {
  std::optional<int> in_fd;
  std::optional<int> out_fd;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--version") {
      std::printf("ktune-worker %s\n", KTUNE_WORKER_VERSION);
      return 0;
    }
    if (arg == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (arg != "--in-fd" && arg != "--out-fd") {
      return usage_error("unknown argument '" + std::string(arg) + "'");
    }
    if (i + 1 == argc) return usage_error(std::string(arg) + ": expected a descriptor number");
    std::optional<int> fd = parse_fd(argv[++i]);
    if (!fd) {
      return usage_error(std::string(arg) + ": expected an open descriptor number, got '" +
                         argv[i] + "'");
    }
    (arg == "--in-fd" ? in_fd : out_fd) = fd;
  }
  if (!in_fd || !out_fd) return usage_error("both --in-fd and --out-fd are required");

  // A kernel that writes to a closed stdout gets EPIPE rather than killing the worker.
  ::signal(SIGPIPE, SIG_IGN);
  // Processes a kernel might start must not hold the protocol pipes open: the parent sees the
  // worker's end by end of stream.
  ::fcntl(*in_fd, F_SETFD, FD_CLOEXEC);
  ::fcntl(*out_fd, F_SETFD, FD_CLOEXEC);
  return ktune::run_worker_loop(*in_fd, *out_fd);
}
