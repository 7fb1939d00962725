// Test helpers: run the real ktune CLI in a scratch cache folder and capture what it prints.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/subprocess.h"
#include "support/temp_dir.h"

namespace ktune::test {

using ScratchDir = TempDir;

struct CliResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs `ktune --cache-dir <cache> args...`.
inline CliResult run_cli(const std::filesystem::path& cache, std::vector<std::string> args) {
  // $KTUNE_TEST_CLI overrides the path compiled in, for binaries carried to another machine.
  const char* moved = std::getenv("KTUNE_TEST_CLI");
  std::vector<std::string> argv = {moved && *moved ? moved : KTUNE_CLI, "--cache-dir",
                                   cache.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessOptions options;
  options.timeout = std::chrono::minutes(5);
  options.max_output_bytes = 4 << 20;
  auto r = run_process(argv, options);
  if (!r) return {-1, r.error().message};
  return {r->timed_out ? -2 : r->exit_code, r->output};
}

// $KTUNE_TEST_SOURCE_DIR overrides the source folder compiled in, for test binaries carried to
// another machine (bench/gpu/run.sh).
inline std::string data_path(const std::string& rel) {
  const char* moved = std::getenv("KTUNE_TEST_SOURCE_DIR");
  return std::string(moved && *moved ? moved : KTUNE_SOURCE_DIR) + "/test/data/" + rel;
}

// $KTUNE_WORKER overrides the worker executable compiled in, likewise.
inline std::string worker_exe() {
  const char* moved = std::getenv("KTUNE_WORKER");
  return moved && *moved ? moved : KTUNE_WORKER_EXE;
}

// Number of compiled objects (".so" shared objects, ".cubin" CUDA binaries) in a cache folder's
// code cache.
inline int count_artifacts(const std::filesystem::path& cache, const std::string& ext = ".so") {
  int n = 0;
  if (!std::filesystem::exists(cache / "code")) return 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(cache / "code")) {
    if (e.path().extension() == ext) ++n;
  }
  return n;
}

// Writes `text` to dir/name and returns the path.
inline std::string write_text(const std::filesystem::path& dir, const std::string& name,
                              const std::string& text) {
  std::ofstream(dir / name) << text;
  return (dir / name).string();
}

}  // namespace ktune::test
