// The worker's own defences (the ktune-worker side of docs/architecture.md's "What ktune
// guarantees against hostile candidates and files"): set up once before any candidate runs, and
// renewed before each request. The parent does not rely on them alone: it checks answers with a
// nonce and its own clock, and the worker's tree and threads through /proc (worker_checks.h).
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <string>

#include "core/unique_fd.h"
#include "ktune/core/status.h"

namespace ktune {

struct ProtocolFds {
  int in = -1;
  int out = -1;
};

struct HardenedFds {
  ProtocolFds protocol;   // where the worker now talks to the parent
  int decoy_reader = -1;  // the other end of the decoy left at the old response descriptor
};

// Before the first request: exits the process (status 3) when the parent is already gone
// (getppid() != parent_pid, when parent_pid > 0); becomes a child subreaper, so that descendants
// a candidate double-forks or setsid()s stay in this process's tree; moves the protocol's
// descriptors to unpredictable numbers, keeping decoys at the old ones (see CandidateGuard);
// blocks SIGTERM and starts the guardian thread, which on SIGTERM (the parent's, or the parent
// death signal set by the parent) or when the parent is gone kills every descendant, then the
// worker. kIo when a descriptor cannot be moved.
[[nodiscard]] Result<HardenedFds> harden_worker(ProtocolFds fds, pid_t parent_pid);

// What a candidate may leave behind in the worker process, reset before each request, and the
// decoy descriptors checked after it.
class CandidateGuard {
 public:
  // Captures the working directory and umask as the worker starts, and the decoys that
  // harden_worker() left at the old descriptor numbers (`old_fds`; it owns `decoy_reader`).
  CandidateGuard(ProtocolFds old_fds, int decoy_reader);

  // Before each request: the default floating-point environment (rounding to nearest, FTZ and
  // DAZ off, exceptions masked), the starting working directory and umask, SIGPIPE ignored, the
  // signals that end a crashing or over-limit worker at their default, the signal mask.
  void reset() const;

  // After each request: a message when the candidate wrote to the decoy where answers used to
  // go (a forged answer) or closed or replaced a decoy; empty otherwise. Also reaps zombie
  // children (the worker is a subreaper: orphans of candidates end up its children).
  [[nodiscard]] std::string check();

 private:
  ProtocolFds old_;
  UniqueFd cwd_;
  std::string cwd_path_;
  mode_t umask_ = 022;
  UniqueFd decoy_reader_;  // the other end of the pipe left at old_.out
  dev_t decoy_dev_[2] = {};
  ino_t decoy_ino_[2] = {};
};

}  // namespace ktune
