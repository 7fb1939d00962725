// One tuner per device: a selection holds <lock_dir>/<device>.lock (flock) while it compiles and
// measures, so that two ktune processes on one machine never measure at the same time (each would
// slow the other's kernels and both would record wrong times). The second waits, says so, and
// then looks the tuning cache up again: when the first tuned the same problem, its pick is served.
#pragma once

#include <cstdio>
#include <filesystem>
#include <string>

#include "core/unique_fd.h"
#include "ktune/backend/backend.h"
#include "ktune/core/status.h"

namespace ktune {

// "cpu" (the measurements of every CPU tuning share the cores), else the device kind and a digest
// of the backend's device fingerprint ("cuda-3f9a0c1b2d4e"): one lock per GPU.
[[nodiscard]] std::string device_lock_name(const Backend& backend);

class DeviceLock {
 public:
  DeviceLock() = default;  // holds nothing
  // Empty `dir`: holds nothing. Else takes <dir>/<name>.lock, waiting (with one line on `progress`)
  // while another process holds it. The folder is created 0700 and must be this user's alone (as
  // the code cache's); the file is opened with O_NOFOLLOW and mode 0600. A lock that cannot be
  // taken for those reasons is a warning on `progress` and nothing held: tuning goes on, only
  // unserialized. Fails only when Ctrl-C ends the wait (kUnavailable).
  [[nodiscard]] static Result<DeviceLock> acquire(const std::filesystem::path& dir,
                                                  const std::string& name, std::FILE* progress);
  [[nodiscard]] bool held() const { return fd_.get() >= 0; }
  // Whether another process held it first: what it stored may answer now.
  [[nodiscard]] bool waited() const { return waited_; }

 private:
  UniqueFd fd_;  // the lock goes with the descriptor
  bool waited_ = false;
};

}  // namespace ktune
