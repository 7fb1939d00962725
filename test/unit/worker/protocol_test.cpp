// Worker protocol messages: every field of a request and a response survives encode/decode
// (strided and offset TensorSpecs, both scalar alternatives, absent optional fields, values JSON
// cannot hold), and bad input fails with kParse naming the field.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "worker/worker_protocol.h"

namespace ktune {
namespace {

using json = nlohmann::json;

ProblemArg buffer_arg(std::string name, ArgRole role, TensorSpec spec) {
  ProblemArg a;
  a.param = {std::move(name), role, spec.dtype};
  a.tensor = std::move(spec);
  return a;
}

ProblemArg scalar_arg(std::string name, DType dtype, ScalarValue value) {
  ProblemArg a;
  a.param = {std::move(name), ArgRole::kScalar, dtype};
  a.scalar = value;
  return a;
}

BenchmarkRequest full_request() {
  BenchmarkRequest q;
  q.id = (std::uint64_t{1} << 63) + 17;  // beyond int64
  q.candidate = "matmul_TILE_M32 \"quoted\" é";
  q.launch.artifact = "/cache/ab/abcdef.so";
  // A library GEMM with its own epilogue, then a kernel: LaunchSpec::then nests.
  LaunchSpec then;
  then.kind = LaunchKind::kCudaCubin;
  then.artifact = "/cache/cd/epilogue.cubin";
  then.entry = "gemm_epilogue";
  then.grid = {64, 1, 1};
  then.block = {256, 1, 1};
  q.launch.then = {then, then};
  q.launch.then[1].library_epilogue = 6;
  q.launch.alpha = -2.5;
  q.problem.op = "matmul";
  q.problem.name = "M=3,N=4";
  TensorSpec strided;
  strided.dtype = DType::kF16;
  strided.device = {DeviceKind::kCuda, 1};
  strided.sizes = {3, 4};
  strided.strides = {1, 5};  // column-major with a padded leading dimension
  strided.offset = 7;
  q.problem.args = {
      buffer_arg("A", ArgRole::kIn, strided),
      buffer_arg("B", ArgRole::kIn, TensorSpec::contiguous(DType::kBF16, {4, 2})),
      buffer_arg("C", ArgRole::kOut, TensorSpec::contiguous(DType::kF32, {3, 2})),
      buffer_arg("D", ArgRole::kInOut,
                 TensorSpec::contiguous(DType::kI32, {2}, Device{DeviceKind::kOpenCL, 2})),
      scalar_arg("n", DType::kI64, std::int64_t{-(std::int64_t{1} << 62)}),
      scalar_arg("alpha", DType::kF64, 0.1),
      scalar_arg("beta", DType::kF32, 2.0),  // integral value, still a double
      scalar_arg("eps", DType::kF64, std::numeric_limits<double>::infinity()),
  };
  q.problem.args[0].init = {InitKind::kNormal, -0.25, 3.5};
  q.problem.args[3].init = {InitKind::kArange, 0, 0};
  q.seed = ~std::uint64_t{0};
  q.expected = "/tmp/ref 1.bin";
  q.tolerance = Tolerance{1e-3, 0, std::numeric_limits<double>::infinity()};
  q.bench = {.warmup_runs = 4,
             .budget_ms = 12.5,
             .min_runs = 6,
             .max_runs = 77,
             .flush_cache = false,
             .flush_bytes = std::size_t{3} << 33};
  q.measure = false;
  q.verify = false;
  q.abandon_above_ns = 1234.5;
  return q;
}

void expect_same_problem(const Problem& a, const Problem& b) {
  EXPECT_EQ(a.op, b.op);
  EXPECT_EQ(a.name, b.name);
  ASSERT_EQ(a.args.size(), b.args.size());
  for (std::size_t i = 0; i < a.args.size(); ++i) {
    SCOPED_TRACE(a.args[i].param.name);
    EXPECT_EQ(a.args[i].param.name, b.args[i].param.name);
    EXPECT_EQ(a.args[i].param.role, b.args[i].param.role);
    EXPECT_EQ(a.args[i].param.dtype, b.args[i].param.dtype);
    if (a.args[i].param.role == ArgRole::kScalar) {
      EXPECT_EQ(a.args[i].scalar.index(), b.args[i].scalar.index());  // the alternative
      EXPECT_EQ(a.args[i].scalar, b.args[i].scalar);
    } else {
      EXPECT_EQ(a.args[i].tensor, b.args[i].tensor);
      EXPECT_EQ(a.args[i].init, b.args[i].init);
    }
  }
}

BenchmarkRequest round_trip(const BenchmarkRequest& q) {
  auto m = decode_message(encode_request(q));
  EXPECT_TRUE(m.has_value()) << m.error().message;
  EXPECT_TRUE(m->request.has_value());
  return *m->request;
}

TEST(ProtocolTest, RequestRoundTripKeepsEveryField) {
  const BenchmarkRequest q = full_request();
  auto m = decode_message(encode_request(q));
  ASSERT_TRUE(m.has_value()) << m.error().message;
  EXPECT_FALSE(m->ping);
  EXPECT_FALSE(m->pong_pid);
  EXPECT_FALSE(m->response);
  ASSERT_TRUE(m->request);
  const BenchmarkRequest& d = *m->request;
  EXPECT_EQ(d.id, q.id);
  EXPECT_EQ(d.candidate, q.candidate);
  EXPECT_EQ(d.launch, q.launch);
  expect_same_problem(d.problem, q.problem);
  EXPECT_EQ(d.seed, q.seed);
  EXPECT_EQ(d.expected, q.expected);
  ASSERT_TRUE(d.tolerance);
  EXPECT_EQ(d.tolerance->rtol, 1e-3);
  EXPECT_EQ(d.tolerance->atol, 0);
  EXPECT_EQ(d.tolerance->max_rel_l2, std::numeric_limits<double>::infinity());
  EXPECT_EQ(d.bench.warmup_runs, 4);
  EXPECT_EQ(d.bench.budget_ms, 12.5);
  EXPECT_EQ(d.bench.min_runs, 6);
  EXPECT_EQ(d.bench.max_runs, 77);
  EXPECT_FALSE(d.bench.flush_cache);
  EXPECT_EQ(d.bench.flush_bytes, std::size_t{3} << 33);
  EXPECT_FALSE(d.measure);
  EXPECT_FALSE(d.verify);
  EXPECT_EQ(d.abandon_above_ns, 1234.5);
}

TEST(ProtocolTest, RequestDefaultsRoundTripWithAbsentTolerance) {
  BenchmarkRequest q;  // every default: no tolerance, no reference, empty problem
  q.bench.flush_cache = true;
  const BenchmarkRequest d = round_trip(q);
  EXPECT_FALSE(d.tolerance);
  EXPECT_TRUE(d.expected.empty());
  EXPECT_TRUE(d.problem.args.empty());
  EXPECT_TRUE(d.measure);
  EXPECT_TRUE(d.verify);
  EXPECT_TRUE(d.bench.flush_cache);
  EXPECT_EQ(d.bench.budget_ms, BenchOptions{}.budget_ms);
  EXPECT_FALSE(json::parse(encode_request(q)).contains("tolerance"));
}

TEST(ProtocolTest, NanScalarStaysNan) {
  BenchmarkRequest q;
  q.problem.args = {scalar_arg("x", DType::kF64, std::numeric_limits<double>::quiet_NaN())};
  const BenchmarkRequest d = round_trip(q);
  ASSERT_EQ(d.problem.args.size(), 1u);
  ASSERT_TRUE(std::holds_alternative<double>(d.problem.args[0].scalar));
  EXPECT_TRUE(std::isnan(std::get<double>(d.problem.args[0].scalar)));
}

TEST(ProtocolTest, ResponseRoundTripWithAndWithoutStats) {
  BenchmarkResponse r;
  r.id = 42;
  r.outcome = Outcome::kWrongResult;
  r.message = "output C: 3 of 6 elements differ";
  r.stats = BenchStats{1500.5, 1400, 2e9, 12.25, 33};
  r.output_tail = "line 1\nline 2\n";
  auto m = decode_message(encode_response(r));
  ASSERT_TRUE(m.has_value()) << m.error().message;
  ASSERT_TRUE(m->response);
  EXPECT_EQ(m->response->id, 42u);
  EXPECT_EQ(m->response->outcome, Outcome::kWrongResult);
  EXPECT_EQ(m->response->message, r.message);
  EXPECT_EQ(m->response->output_tail, r.output_tail);
  ASSERT_TRUE(m->response->stats);
  EXPECT_EQ(m->response->stats->median_ns, 1500.5);
  EXPECT_EQ(m->response->stats->min_ns, 1400);
  EXPECT_EQ(m->response->stats->max_ns, 2e9);
  EXPECT_EQ(m->response->stats->mad_ns, 12.25);
  EXPECT_EQ(m->response->stats->runs, 33);

  r.stats.reset();
  r.outcome = Outcome::kUnsupported;
  m = decode_message(encode_response(r));
  ASSERT_TRUE(m.has_value()) << m.error().message;
  EXPECT_EQ(m->response->outcome, Outcome::kUnsupported);
  EXPECT_FALSE(m->response->stats);
}

TEST(ProtocolTest, InvalidUtf8InAMessageIsReplacedNotFatal) {
  BenchmarkResponse r;
  r.message = "bad \xff byte";
  auto m = decode_message(encode_response(r));
  ASSERT_TRUE(m.has_value()) << m.error().message;
  EXPECT_NE(m->response->message.find("bad "), std::string::npos);
}

TEST(ProtocolTest, PingAndPong) {
  auto ping = decode_message(encode_ping());
  ASSERT_TRUE(ping.has_value());
  EXPECT_TRUE(ping->ping);
  EXPECT_FALSE(ping->request);
  auto pong = decode_message(encode_pong(12345));
  ASSERT_TRUE(pong.has_value());
  EXPECT_FALSE(pong->ping);
  EXPECT_EQ(pong->pong_pid, 12345);
  EXPECT_TRUE(json::parse(encode_pong(1)).at("version").is_string());
  EXPECT_EQ(pong->pong_protocol, kWorkerProtocolVersion);
  EXPECT_FALSE(pong->pong_version.empty());
}

TEST(ProtocolTest, PongOfAnotherBuildStillDecodes) {
  // The parent refuses such a worker by its versions, so it must be able to read them.
  auto other = decode_message(R"({"type":"pong","pid":7,"protocol":99,"version":"9.9.9"})");
  ASSERT_TRUE(other.has_value()) << other.error().message;
  EXPECT_EQ(other->pong_pid, 7);
  EXPECT_EQ(other->pong_protocol, 99);
  EXPECT_EQ(other->pong_version, "9.9.9");
  auto unversioned = decode_message(R"({"type":"pong","pid":7})");
  ASSERT_TRUE(unversioned.has_value()) << unversioned.error().message;
  EXPECT_EQ(unversioned->pong_protocol, 0);
  EXPECT_EQ(unversioned->pong_version, "");
}

// decode_message's error for `j` dumped; the test fails when it decodes.
Error decode_error(const json& j) {
  auto m = decode_message(j.dump());
  EXPECT_FALSE(m.has_value()) << j.dump();
  return m ? Error{} : m.error();
}

TEST(ProtocolTest, NotJsonFails) {
  for (std::string_view bad : {"", "{", "{\"type\": ping}", "\xff"}) {
    auto m = decode_message(bad);
    ASSERT_FALSE(m.has_value()) << bad;
    EXPECT_EQ(m.error().code, ErrorCode::kParse);
    EXPECT_TRUE(m.error().message.starts_with("worker message: not JSON; ")) << m.error().message;
  }
}

TEST(ProtocolTest, BadTypeFails) {
  Error e = decode_error(json::array({1, 2}));
  EXPECT_EQ(e.code, ErrorCode::kParse);
  EXPECT_EQ(e.message, "worker message: bad field '<message>'; expected an object, got array");
  e = decode_error({{"type", "hello"}});
  EXPECT_EQ(e.message,
            "worker message: bad field 'type'; expected ping, pong, request or response, got "
            "'hello'");
  e = decode_error({{"kind", "ping"}});
  EXPECT_EQ(e.message, "worker message: bad field 'type'; expected a string, it is missing");
}

TEST(ProtocolTest, BadRequestFieldsNameTheField) {
  const json good = json::parse(encode_request(full_request()));
  struct Case {
    const char* pointer;  // JSON pointer of the field to change
    json value;           // null: remove it
    const char* message;
  };
  const Case cases[] = {
      {"/seed", nullptr, "bad field 'seed'; expected an unsigned integer, it is missing"},
      {"/seed", -1, "bad field 'seed'; expected an unsigned integer, got number"},
      {"/id", "7", "bad field 'id'; expected an unsigned integer, got string"},
      {"/measure", 1, "bad field 'measure'; expected a boolean, got number"},
      {"/problem/args/0/tensor/sizes/1", "4",
       "bad field 'problem.args[0].tensor.sizes[1]'; expected a 64-bit integer, got string"},
      {"/problem/args/0/tensor/sizes/1", -4,
       "bad field 'problem.args[0].tensor.sizes[1]'; expected a size >= 0, got -4"},
      {"/problem/args/0/tensor/strides", json::array({1}),
       "bad field 'problem.args[0].tensor.strides'; expected 2 strides (one per size), got 1"},
      {"/problem/args/0/tensor/offset", -1,
       "bad field 'problem.args[0].tensor.offset'; expected >= 0, got -1"},
      {"/problem/args/0/tensor/device/kind", "tpu",
       "bad field 'problem.args[0].tensor.device.kind'; unknown name 'tpu'"},
      {"/problem/args/1/dtype", "f8", "bad field 'problem.args[1].dtype'; unknown name 'f8'"},
      {"/problem/args/0/init/kind", "poisson",
       "bad field 'problem.args[0].init.kind'; unknown name 'poisson'"},
      {"/problem/args/0/init/b", -1,
       "bad field 'problem.args[0].init.b'; expected a standard deviation >= 0, got -1"},
      {"/problem/args/0/init/a", nullptr,
       "bad field 'problem.args[0].init.a'; expected a number (or \"nan\", \"inf\", \"-inf\"), it "
       "is "
       "missing"},
      {"/problem/args/0/init", 3,
       "bad field 'problem.args[0].init'; expected an object, got number"},
      {"/problem/args/2/role", "output", "bad field 'problem.args[2].role'; unknown name 'output'"},
      {"/problem/args/2/tensor", nullptr,
       "bad field 'problem.args[2].tensor'; expected an object, it is missing"},
      {"/problem/args/4/scalar", json{{"u64", 3}},
       "bad field 'problem.args[4].scalar'; expected {\"i64\": N} or {\"f64\": X}, got object"},
      {"/problem/args/4/scalar/i64", 1.5,
       "bad field 'problem.args[4].scalar.i64'; expected a 64-bit integer, got number"},
      {"/problem/args/5/scalar/f64", "one",
       "bad field 'problem.args[5].scalar.f64'; expected a number (or \"nan\", \"inf\", "
       "\"-inf\"), got string"},
      {"/problem/args", json::object(), "bad field 'problem.args'; expected an array, got object"},
      {"/bench/max_runs", std::int64_t{1} << 40,
       "bad field 'bench.max_runs'; expected a 32-bit integer, got 1099511627776"},
      {"/bench/flush_cache", nullptr,
       "bad field 'bench.flush_cache'; expected a boolean, it is missing"},
      {"/tolerance/rtol", true,
       "bad field 'tolerance.rtol'; expected a number (or \"nan\", "
       "\"inf\", \"-inf\"), got boolean"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.pointer);
    json j = good;
    const json::json_pointer ptr(c.pointer);
    if (c.value.is_null()) {
      j.at(ptr.parent_pointer()).erase(ptr.back());
    } else {
      j[ptr] = c.value;
    }
    Error e = decode_error(j);
    EXPECT_EQ(e.code, ErrorCode::kParse);
    EXPECT_EQ(e.message, std::string("worker message: ") + c.message);
  }
}

TEST(ProtocolTest, BadResponseFieldsNameTheField) {
  json j = json::parse(encode_response(BenchmarkResponse{}));
  j["outcome"] = "exploded";
  EXPECT_EQ(decode_error(j).message,
            "worker message: bad field 'outcome'; unknown name 'exploded'");
  BenchmarkResponse with_stats;
  with_stats.stats = BenchStats{};
  j = json::parse(encode_response(with_stats));
  j["stats"].erase("runs");
  EXPECT_EQ(decode_error(j).message,
            "worker message: bad field 'stats.runs'; expected a 32-bit integer, it is missing");
  j = json::parse(encode_pong(3));
  j["pid"] = "3";
  EXPECT_EQ(decode_error(j).message,
            "worker message: bad field 'pid'; expected a 32-bit integer, got string");
}

}  // namespace
}  // namespace ktune
