// The worker protocol: what the parent and a ktune-worker say to each other over the worker's own
// pipe pair (never its stdout/stderr, which kernels may write to). Each message is one frame: a
// 4-byte little-endian length, then that many bytes of JSON with a "type" field:
//   parent -> worker: {"type":"ping"}, {"type":"request","nonce":"<hex>", ...BenchmarkRequest}
//   worker -> parent: {"type":"pong","pid":N,"protocol":P,"version":"..."},
//                     {"type":"response","nonce":"<the request's>", ...}
// The nonce is fresh for each request (make_nonce); the parent takes only a response that
// echoes it, so that a candidate writing a well-formed answer into the pipe is not believed
// unless it also finds the nonce in the worker's memory.
// A request has no pointers: the worker rebuilds the inputs from the TensorSpecs and the seed,
// loads the artifact itself and reads the reference's outputs from a file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "bench/candidate_check.h"
#include "device/request.h"
#include "ktune/core/problem.h"
#include "ktune/tensor/compare.h"

namespace ktune {

// Largest frame either side accepts; a longer length prefix is a protocol error.
inline constexpr std::uint32_t kMaxFrameBytes = 64u << 20;

// The protocol's version, carried by the pong and checked by the parent before any request:
// bump it whenever a message changes (a field added, removed, renamed or re-typed), so that a
// parent and a ktune-worker of different builds refuse each other at the start instead of
// misreading a request. A pong without it is from before versioning: protocol 0.
// 2: the request's nonce; 3: the response's reference_ns (the worker runs the references of CPU
// problems too); 4: a problem's args may carry role scratch, an npy init (path and digest), an
// output's own tolerance and nan_ok; 5: the request's abandon_above_ns, and an abandoned
// response's stats.
inline constexpr int kWorkerProtocolVersion = 5;

[[nodiscard]] std::string encode_ping();
[[nodiscard]] std::string encode_pong(int pid);
[[nodiscard]] std::string encode_request(const BenchmarkRequest& request,
                                         std::string_view nonce = {});
[[nodiscard]] std::string encode_response(const BenchmarkResponse& response,
                                          std::string_view nonce = {});

// 128 bits from getrandom(), as 32 hex digits; kIo when the kernel has none to give.
[[nodiscard]] Result<std::string> make_nonce();

// A decoded frame: exactly one of the members is set, by its "type".
struct WorkerMessage {
  bool ping = false;
  std::optional<int> pong_pid;
  // With a pong: the worker's protocol version and ktune version (KTUNE_VERSION).
  int pong_protocol = 0;
  std::string pong_version;
  std::optional<BenchmarkRequest> request;
  std::optional<BenchmarkResponse> response;
  std::string nonce;  // a request's or response's "nonce"; empty when it has none
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
