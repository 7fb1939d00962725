// Ctrl-C: the handler only sets the selection's flag (select/resume.h), which the selection checks
// between candidates; the command then returns, and main() removes this process's temporaries
// from the code cache and exits 130 (128 + SIGINT, as shells report it). A second Ctrl-C is the
// default action: it ends ktune at once.
#pragma once

#include "cli.h"

namespace ktune::cli {

inline constexpr int kExitInterrupted = 130;

void install_interrupt_handler();
// After the command returned because of Ctrl-C: the cleanup, a line on stderr, kExitInterrupted.
[[nodiscard]] int finish_interrupted(const CliContext& ctx);

}  // namespace ktune::cli
