// The worker protocol's messages as JSON, and the reference-output file. Framing lives in
// worker_frames.cpp; the fields' types are encoded and decoded by the shared codec
// (core/json_codec.h, bench/bench_json.h), which the tuning-cache export uses too.
//
// A request carries the BenchmarkRequest's fields at the top level beside "type". Members are
// written sorted by name (nlohmann::json), as they always were.
#include "worker/worker_protocol.h"

#include <fmt/format.h>
#include <sys/random.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>

#include "bench/bench_json.h"
#include "core/json_codec.h"

namespace ktune {
namespace {

// The one adapter for nlohmann::json's exceptions: parsing is the only call here that throws
// (dumps replace invalid UTF-8 instead).
Result<Json> parse_json(std::string_view payload) {
  try {
    return Json::parse(payload.begin(), payload.end());
  } catch (const Json::exception& e) {
    return make_error(ErrorCode::kParse, fmt::format("worker message: not JSON; {} ({} bytes)",
                                                     e.what(), payload.size()));
  }
}

Error protocol_error(const JsonFailure& f) {
  return Error{ErrorCode::kParse, fmt::format("worker message: bad field '{}'; {}",
                                              f.path.empty() ? "<message>" : f.path, f.what)};
}

// The member `key` of `j` decoded into `out`, when it is present and not null.
template <class T>
void decode_optional(JsonReader& r, const Json& j, std::string_view key, std::optional<T>& out) {
  if (!JsonReader::has(j, key)) return;
  out.emplace();
  decode_json(r, j.at(key), std::string(key), *out);
}

// The object member `key` of `j` decoded into `out`.
template <class T>
void decode_member(JsonReader& r, const Json& j, std::string_view key, T& out) {
  if (const Json* m = r.object(j, "", key)) decode_json(r, *m, std::string(key), out);
}

BenchmarkRequest decode_request(JsonReader& r, const Json& j) {
  BenchmarkRequest q;
  q.id = r.u64(j, "", "id");
  q.candidate = r.str(j, "", "candidate");
  decode_member(r, j, "launch", q.launch);
  decode_member(r, j, "problem", q.problem);
  q.seed = r.u64(j, "", "seed");
  q.expected = r.str(j, "", "expected");
  decode_optional(r, j, "reference", q.reference);
  decode_optional(r, j, "tolerance", q.tolerance);
  decode_member(r, j, "bench", q.bench);
  q.measure = r.boolean(j, "", "measure");
  q.verify = r.boolean(j, "", "verify");
  q.abandon_above_ns = r.f64(j, "", "abandon_above_ns");
  return q;
}

BenchmarkResponse decode_response(JsonReader& r, const Json& j) {
  BenchmarkResponse s;
  s.id = r.u64(j, "", "id");
  s.outcome = decode_outcome(r, j, "", "outcome");
  s.message = r.str(j, "", "message");
  decode_optional(r, j, "stats", s.stats);
  s.output_tail = r.str(j, "", "output_tail");
  s.restart = r.boolean(j, "", "restart");
  if (JsonReader::has(j, "reference_ns")) s.reference_ns = r.f64(j, "", "reference_ns");
  return s;
}

}  // namespace

std::string encode_ping() { return json_dump(Json{{"type", "ping"}}); }

std::string encode_pong(int pid) {
  return json_dump(Json{{"type", "pong"},
                        {"pid", pid},
                        {"protocol", kWorkerProtocolVersion},
                        {"version", KTUNE_VERSION}});
}

Result<std::string> make_nonce() {
  unsigned char bytes[16];
  std::size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return make_error(ErrorCode::kIo,
                        fmt::format("make_nonce: getrandom failed; {}", std::strerror(errno)));
    }
    got += static_cast<std::size_t>(n);
  }
  std::string hex;
  for (unsigned char b : bytes) hex += fmt::format("{:02x}", b);
  return hex;
}

std::string encode_request(const BenchmarkRequest& request, std::string_view nonce) {
  Json j = {{"type", "request"},
            {"id", request.id},
            {"candidate", request.candidate},
            {"launch", Json(encode_json(request.launch))},
            {"problem", Json(encode_json(request.problem))},
            {"seed", request.seed},
            {"expected", request.expected.string()},
            {"bench", Json(encode_json(request.bench))},
            {"measure", request.measure},
            {"verify", request.verify},
            {"abandon_above_ns", request.abandon_above_ns}};
  if (request.tolerance) j["tolerance"] = Json(encode_json(*request.tolerance));
  if (request.reference) j["reference"] = Json(encode_json(*request.reference));
  if (!nonce.empty()) j["nonce"] = std::string(nonce);
  return json_dump(j);
}

std::string encode_response(const BenchmarkResponse& response, std::string_view nonce) {
  Json j = {{"type", "response"},
            {"id", response.id},
            {"outcome", Json(encode_json(response.outcome))},
            {"message", response.message},
            {"output_tail", response.output_tail},
            {"restart", response.restart},
            {"reference_ns", response.reference_ns}};
  if (response.stats) j["stats"] = Json(encode_json(*response.stats));
  if (!nonce.empty()) j["nonce"] = std::string(nonce);
  return json_dump(j);
}

Result<WorkerMessage> decode_message(std::string_view payload) {
  Result<Json> parsed = parse_json(payload);
  if (!parsed) return std::unexpected(parsed.error());
  const Json& j = *parsed;
  JsonReader r(JsonWording::kProtocol);
  const std::string type = r.str(j, "", "type");
  WorkerMessage m;
  if (!r.ok()) return std::unexpected(protocol_error(*r.failure()));
  if (type == "ping") {
    m.ping = true;
  } else if (type == "pong") {
    m.pong_pid = r.i32(j, "", "pid");
    // Both optional here: a pong of another build must decode, so that the parent can say
    // which versions differ.
    if (JsonReader::has(j, "protocol")) m.pong_protocol = r.i32(j, "", "protocol");
    if (JsonReader::has(j, "version")) m.pong_version = r.str(j, "", "version");
  } else if (type == "request") {
    m.request = decode_request(r, j);
    if (JsonReader::has(j, "nonce")) m.nonce = r.str(j, "", "nonce");
  } else if (type == "response") {
    m.response = decode_response(r, j);
    if (JsonReader::has(j, "nonce")) m.nonce = r.str(j, "", "nonce");
  } else {
    r.fail("type", fmt::format("expected ping, pong, request or response, got '{}'", type));
  }
  if (!r.ok()) return std::unexpected(protocol_error(*r.failure()));
  return m;
}

}  // namespace ktune
