// The libFuzzer entry point every harness in fuzz/ defines: one input, any bytes; returns 0.
// A harness must end (no abort, crash or hang) for every input: parse errors are answers, not
// failures. The same harness links either into an AFL++ binary (libAFLDriver's main, or
// replay_main.cpp under afl-fuzz's forkserver) or into the replay test that CI runs every time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace ktune::fuzz {

// A property a harness checks beyond "no crash" (a round trip) failed: abort, so that both AFL
// and the replay driver record the input as a crash.
[[noreturn]] inline void property_failed(const char* what, const char* detail) {
  std::fprintf(stderr, "fuzz: property failed: %s: %s\n", what, detail);
  std::abort();
}

}  // namespace ktune::fuzz
