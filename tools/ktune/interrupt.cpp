// install_interrupt_handler and finish_interrupted (interrupt.h).
#include "interrupt.h"

#include <fmt/format.h>

#include <csignal>

#include "core/file_util.h"
#include "ktune/backend/code_cache.h"
#include "select/resume.h"

namespace ktune::cli {
namespace {

extern "C" void on_sigint(int) { note_interrupt(); }

}  // namespace

void install_interrupt_handler() {
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  // No SA_RESTART: a wait (the device lock's flock) returns EINTR and sees the flag.
  // SA_RESETHAND: the second Ctrl-C is the default action and ends ktune at once.
  sa.sa_flags = SA_RESETHAND;
  ::sigaction(SIGINT, &sa, nullptr);
}

int finish_interrupted(const CliContext& ctx) {
  // Every compile of this process has ended (the compile stage waits for its tasks), so every
  // temporary of this pid is an orphan; at the next start they would be swept only once stale.
  const std::size_t removed =
      CodeCache(ctx.cache_dir).remove_own_temporaries() + remove_own_temps(ctx.cache_dir);
  fmt::print(stderr, "ktune: interrupted; removed {} temporary file(s) of the code cache\n",
             removed);
  return kExitInterrupted;
}

}  // namespace ktune::cli
