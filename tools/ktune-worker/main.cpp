// ktune-worker: the process in which generated code runs, so that a candidate that crashes, hangs
// or corrupts memory costs that candidate alone. It speaks the worker protocol
// (worker_protocol.h) on the two descriptors it is given, never on stdout or stderr, which
// belong to the kernels and are collected by the parent. Exit codes: 0 when the parent closes
// the request pipe, 2 on a usage error, 3 when the protocol breaks.
#include <fcntl.h>
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "worker/worker_guard.h"
#include "worker/worker_loop.h"

namespace {

constexpr const char* kUsage =
    "usage: ktune-worker --in-fd N --out-fd M [--parent-pid P]\n"
    "       ktune-worker --version | --help\n"
    "Reads length-prefixed JSON requests from descriptor N and answers on descriptor M;\n"
    "with P, exits as soon as process P is no longer its parent.\n";

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
  pid_t parent_pid = 0;
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
    if (arg == "--parent-pid" && i + 1 < argc) {
      const std::string_view text = argv[++i];
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), parent_pid);
      if (ec != std::errc() || end != text.data() + text.size() || parent_pid <= 0) {
        return usage_error("--parent-pid: expected a process id, got '" + std::string(text) + "'");
      }
      continue;
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
  if (*in_fd == *out_fd) return usage_error("--in-fd and --out-fd must differ");
  // Processes a kernel might start must not hold the protocol pipes open (the parent sees the
  // worker's end by end of stream): the moved descriptors are CLOEXEC.
  const ktune::ProtocolFds given{*in_fd, *out_fd};
  ktune::Result<ktune::HardenedFds> hardened = ktune::harden_worker(given, parent_pid);
  if (!hardened) {
    std::fprintf(stderr, "error: ktune-worker: %s\n", hardened.error().message.c_str());
    return 3;
  }
  ktune::CandidateGuard guard(given, hardened->decoy_reader);
  const int code = ktune::run_worker_loop(hardened->protocol.in, hardened->protocol.out, &guard,
                                          parent_pid, /*exit_at_end=*/true);
  if (code != 0) {
    // A worker ending on a fault leaves at once: its state is a candidate's, not to be trusted
    // with exit handlers, and a sanitizer's exit-time leak check (LeakSanitizer forks a tracer)
    // would show the parent a process the candidate never made.
    std::fflush(nullptr);
    ::_exit(code);
  }
  return 0;
}
