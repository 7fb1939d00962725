// The worker protocol: what the parent and a ktune-worker say to each other over the worker's own
// pipe pair (never its stdout/stderr, which kernels may write to). Each message is one frame: a
// 4-byte little-endian length, then that many bytes of JSON with a "type" field:
//   parent -> worker: {"type":"ping"}, {"type":"request", ...BenchmarkRequest}
//   worker -> parent: {"type":"pong","pid":N,"protocol":P,"version":"..."},
//                     {"type":"response", ...}
// A request has no pointers: the worker rebuilds the inputs from the TensorSpecs and the seed,
// loads the artifact itself and reads the reference's outputs from a file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "bench/candidate_check.h"
#include "ktune/bench/bench_options.h"
#include "ktune/bench/bench_stats.h"
#include "ktune/core/launch_spec.h"
#include "ktune/core/outcome.h"
#include "ktune/core/problem.h"
#include "ktune/tensor/compare.h"

namespace ktune {

// Largest frame either side accepts; a longer length prefix is a protocol error.
inline constexpr std::uint32_t kMaxFrameBytes = 64u << 20;

// The protocol's version, carried by the pong and checked by the parent before any request:
// bump it whenever a message changes (a field added, removed, renamed or re-typed), so that a
// parent and a ktune-worker of different builds refuse each other at the start instead of
// misreading a request. A pong without it is from before versioning: protocol 0.
inline constexpr int kWorkerProtocolVersion = 1;

struct BenchmarkRequest {
  std::uint64_t id = 0;
  std::string candidate;  // the choice's name, for messages
  LaunchSpec launch;      // what to run
  Problem problem;
  std::uint64_t seed = 0;
  // The reference's outputs, by one of two routes: a file written by the parent
  // (write_reference_file; the CPU, where the parent runs the reference), or a launch the
  // worker runs itself before the first candidate of a problem (devices: cuBLAS on the GPU,
  // where the inputs live and copying them through the parent would cost more than the run).
  // Neither: outputs are checked only for poison, NaN, redzones and modified inputs.
  std::filesystem::path expected;
  std::optional<LaunchSpec> reference;
  std::optional<Tolerance> tolerance;  // empty: default_tolerance() per output dtype
  BenchOptions bench;
  bool measure = true;  // false: verify only
  // false: measure without verifying first, for a candidate that already passed on this
  // problem (re-measuring close calls); a failing run is still a launch_error.
  bool verify = true;
};

struct BenchmarkResponse {
  std::uint64_t id = 0;
  Outcome outcome = Outcome::kOk;
  std::string message;
  std::optional<BenchStats> stats;  // when measured and ok
  std::string output_tail;          // the worker's stdout/stderr tail (filled in by the parent)
  // The worker cannot serve another request (a sticky device error such as a CUDA illegal
  // address poisons its context): it exits after this response and the pool starts a fresh one.
  bool restart = false;
};

[[nodiscard]] std::string encode_ping();
[[nodiscard]] std::string encode_pong(int pid);
[[nodiscard]] std::string encode_request(const BenchmarkRequest& request);
[[nodiscard]] std::string encode_response(const BenchmarkResponse& response);

// A decoded frame: exactly one of the members is set, by its "type".
struct WorkerMessage {
  bool ping = false;
  std::optional<int> pong_pid;
  // With a pong: the worker's protocol version and ktune version (KTUNE_VERSION).
  int pong_protocol = 0;
  std::string pong_version;
  std::optional<BenchmarkRequest> request;
  std::optional<BenchmarkResponse> response;
};
// kParse naming the field on bad input.
[[nodiscard]] Result<WorkerMessage> decode_message(std::string_view payload);

// The frame format itself, for readers and writers that do their own (non-blocking) I/O:
// encode_frame prepends the 4-byte little-endian length; frame_length reads it from the first
// 4 bytes of `header` (which must hold at least 4).
[[nodiscard]] std::string encode_frame(std::string_view payload);
[[nodiscard]] std::uint32_t frame_length(std::string_view header);

// Blocking frame I/O on a pipe; EINTR is retried. read_frame fails with kEndOfStream when the
// other side closed between frames, and with kIo when it closed inside one.
[[nodiscard]] Status write_frame(int fd, std::string_view payload);
[[nodiscard]] Result<std::string> read_frame(int fd);

// The reference's outputs as a file the worker can read: each out/inout argument's storage bytes,
// in argument order.
[[nodiscard]] Status write_reference_file(const std::filesystem::path& path, const Problem& problem,
                                          const ReferenceOutputs& outputs);
// Reads them back; tolerances from `tolerance`, else default_tolerance() per dtype.
[[nodiscard]] Result<ReferenceOutputs> read_reference_file(
    const std::filesystem::path& path, const Problem& problem,
    const std::optional<Tolerance>& tolerance);

}  // namespace ktune
