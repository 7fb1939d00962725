// The worker protocol's messages as JSON (nlohmann::json behind one adapter: parse_json), and
// the reference-output file. Framing lives in worker_frames.cpp.
//
// A request carries the BenchmarkRequest's fields at the top level beside "type". A problem
// argument is {"name","role","dtype"} plus "tensor" for buffers or "scalar" for scalars; a
// scalar keeps its variant alternative as {"i64": N} or {"f64": X}. Doubles that JSON cannot
// hold (NaN, infinities) travel as the strings "nan", "inf" and "-inf".
#include "worker/worker_protocol.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <system_error>
#include <utility>

namespace ktune {
namespace {

using json = nlohmann::json;

// The one adapter for nlohmann::json's exceptions: parsing is the only call here that throws
// (dump() is told to replace invalid UTF-8 instead).
Result<json> parse_json(std::string_view payload) {
  try {
    return json::parse(payload.begin(), payload.end());
  } catch (const json::exception& e) {
    return make_error(ErrorCode::kParse, fmt::format("worker message: not JSON; {} ({} bytes)",
                                                     e.what(), payload.size()));
  }
}

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

json number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

// Reads the fields of a decoded message. The first problem is kept, naming the field's path;
// after it the accessors return defaults, so decoding reads as straight-line code.
class Reader {
 public:
  [[nodiscard]] bool ok() const { return !error_; }
  [[nodiscard]] Error error() const { return *error_; }

  void fail(const std::string& at, std::string_view expected, const json* got) {
    if (error_) return;
    std::string actual = got ? fmt::format("got {}", got->type_name()) : "it is missing";
    error_ = Error{ErrorCode::kParse, fmt::format("worker message: bad field '{}'; expected {}, {}",
                                                  at, expected, actual)};
  }
  void fail_value(const std::string& at, std::string_view what) {
    if (!error_) {
      error_ =
          Error{ErrorCode::kParse, fmt::format("worker message: bad field '{}'; {}", at, what)};
    }
  }

  // The member `key` of `obj`, or null (and the error) when absent or `obj` is not an object.
  const json* get(const json& obj, const std::string& at, std::string_view key,
                  std::string_view expected) {
    if (!obj.is_object()) {
      fail(at.empty() ? "<message>" : at, "an object", &obj);
      return nullptr;
    }
    auto it = obj.find(key);
    if (it == obj.end()) {
      fail(sub(at, key), expected, nullptr);
      return nullptr;
    }
    return &*it;
  }
  static bool has(const json& obj, std::string_view key) {
    return obj.is_object() && obj.contains(key) && !obj.at(key).is_null();
  }

  std::string str(const json& obj, const std::string& at, std::string_view key) {
    const json* j = get(obj, at, key, "a string");
    if (!j) return {};
    if (!j->is_string()) return fail(sub(at, key), "a string", j), std::string();
    return j->get<std::string>();
  }
  // `j` itself, whose path is `at`.
  std::int64_t i64_value(const json& j, const std::string& at,
                         std::string_view expected = "a 64-bit integer") {
    if (j.is_number_integer() &&
        (!j.is_number_unsigned() ||
         j.get<std::uint64_t>() <= std::uint64_t(std::numeric_limits<std::int64_t>::max()))) {
      return j.get<std::int64_t>();
    }
    fail(at, expected, &j);
    return 0;
  }
  std::int64_t i64(const json& obj, const std::string& at, std::string_view key,
                   std::string_view expected = "a 64-bit integer") {
    const json* j = get(obj, at, key, expected);
    return j ? i64_value(*j, sub(at, key), expected) : 0;
  }
  std::uint64_t u64(const json& obj, const std::string& at, std::string_view key) {
    const json* j = get(obj, at, key, "an unsigned integer");
    if (!j) return 0;
    if (!j->is_number_unsigned()) return fail(sub(at, key), "an unsigned integer", j), 0;
    return j->get<std::uint64_t>();
  }
  int i32(const json& obj, const std::string& at, std::string_view key) {
    const std::int64_t v = i64(obj, at, key, "a 32-bit integer");
    if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) {
      fail_value(sub(at, key), fmt::format("expected a 32-bit integer, got {}", v));
      return 0;
    }
    return static_cast<int>(v);
  }
  double f64_value(const json& j, const std::string& at) {
    if (j.is_number()) return j.get<double>();
    if (j.is_string()) {
      const auto& s = j.get_ref<const std::string&>();
      if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
      if (s == "inf") return std::numeric_limits<double>::infinity();
      if (s == "-inf") return -std::numeric_limits<double>::infinity();
    }
    fail(at, "a number (or \"nan\", \"inf\", \"-inf\")", &j);
    return 0;
  }
  double f64(const json& obj, const std::string& at, std::string_view key) {
    const json* j = get(obj, at, key, "a number");
    return j ? f64_value(*j, sub(at, key)) : 0;
  }
  bool boolean(const json& obj, const std::string& at, std::string_view key) {
    const json* j = get(obj, at, key, "a boolean");
    if (!j) return false;
    if (!j->is_boolean()) return fail(sub(at, key), "a boolean", j), false;
    return j->get<bool>();
  }
  // The array member `key`, or null (and the error).
  const json* array(const json& obj, const std::string& at, std::string_view key) {
    const json* j = get(obj, at, key, "an array");
    if (j && !j->is_array()) return fail(sub(at, key), "an array", j), nullptr;
    return j;
  }

  static std::string sub(const std::string& at, std::string_view key) {
    return at.empty() ? std::string(key) : fmt::format("{}.{}", at, key);
  }
  static std::string index(const std::string& at, std::size_t i) {
    return fmt::format("{}[{}]", at, i);
  }

 private:
  std::optional<Error> error_;
};

template <class Enum, class Parse>
Enum parse_named(Reader& r, const json& obj, const std::string& at, std::string_view key,
                 Parse parse) {
  const std::string name = r.str(obj, at, key);
  if (!r.ok()) return Enum{};
  std::optional<Enum> v = parse(name);
  if (!v) r.fail_value(Reader::sub(at, key), fmt::format("unknown name '{}'", name));
  return v.value_or(Enum{});
}

std::optional<DType> dtype_named(std::string_view name) {
  auto d = parse_dtype(name);
  return d ? std::optional<DType>(*d) : std::nullopt;
}

constexpr std::pair<DeviceKind, std::string_view> kDeviceKinds[] = {
    {DeviceKind::kCpu, "cpu"}, {DeviceKind::kCuda, "cuda"}, {DeviceKind::kOpenCL, "opencl"}};
constexpr ArgRole kRoles[] = {ArgRole::kIn, ArgRole::kOut, ArgRole::kInOut, ArgRole::kScalar};

std::string_view device_kind_name(DeviceKind kind) {
  for (const auto& [k, name] : kDeviceKinds) {
    if (k == kind) return name;
  }
  return "unknown";
}

json encode_tensor(const TensorSpec& t) {
  return {{"dtype", dtype_name(t.dtype)},
          {"device", {{"kind", device_kind_name(t.device.kind)}, {"index", t.device.index}}},
          {"sizes", t.sizes},
          {"strides", t.strides},
          {"offset", t.offset}};
}

std::vector<std::int64_t> decode_i64s(Reader& r, const json& obj, const std::string& at,
                                      std::string_view key) {
  std::vector<std::int64_t> out;
  if (const json* a = r.array(obj, at, key)) {
    for (std::size_t i = 0; i < a->size(); ++i) {
      out.push_back(r.i64_value((*a)[i], Reader::index(Reader::sub(at, key), i)));
    }
  }
  return out;
}

TensorSpec decode_tensor(Reader& r, const json& obj, const std::string& at) {
  TensorSpec t;
  t.dtype = parse_named<DType>(r, obj, at, "dtype", dtype_named);
  if (const json* dev = r.get(obj, at, "device", "an object")) {
    const std::string dat = Reader::sub(at, "device");
    t.device.kind = parse_named<DeviceKind>(r, *dev, dat, "kind", [](std::string_view n) {
      for (const auto& [k, name] : kDeviceKinds) {
        if (name == n) return std::optional<DeviceKind>(k);
      }
      return std::optional<DeviceKind>();
    });
    t.device.index = r.i32(*dev, dat, "index");
  }
  t.sizes = decode_i64s(r, obj, at, "sizes");
  t.strides = decode_i64s(r, obj, at, "strides");
  t.offset = r.i64(obj, at, "offset");
  if (!r.ok()) return t;
  if (t.sizes.size() != t.strides.size()) {
    r.fail_value(Reader::sub(at, "strides"),
                 fmt::format("expected {} strides (one per size), got {}", t.sizes.size(),
                             t.strides.size()));
  }
  for (std::size_t i = 0; i < t.sizes.size(); ++i) {
    if (t.sizes[i] < 0) {
      r.fail_value(Reader::index(Reader::sub(at, "sizes"), i),
                   fmt::format("expected a size >= 0, got {}", t.sizes[i]));
    }
  }
  if (t.offset < 0) {
    r.fail_value(Reader::sub(at, "offset"), fmt::format("expected >= 0, got {}", t.offset));
  }
  return t;
}

json encode_problem(const Problem& p) {
  json args = json::array();
  for (const ProblemArg& a : p.args) {
    json arg = {{"name", a.param.name},
                {"role", arg_role_name(a.param.role)},
                {"dtype", dtype_name(a.param.dtype)}};
    if (a.param.role == ArgRole::kScalar) {
      arg["scalar"] = std::holds_alternative<std::int64_t>(a.scalar)
                          ? json{{"i64", std::get<std::int64_t>(a.scalar)}}
                          : json{{"f64", number(std::get<double>(a.scalar))}};
    } else {
      arg["tensor"] = encode_tensor(a.tensor);
    }
    args.push_back(std::move(arg));
  }
  return {{"op", p.op}, {"name", p.name}, {"args", std::move(args)}};
}

ScalarValue decode_scalar(Reader& r, const json& obj, const std::string& at) {
  const json* s = r.get(obj, at, "scalar", "{\"i64\": N} or {\"f64\": X}");
  const std::string sat = Reader::sub(at, "scalar");
  if (s && s->is_object() && s->size() == 1 && s->contains("i64")) return r.i64(*s, sat, "i64");
  if (s && s->is_object() && s->size() == 1 && s->contains("f64")) return r.f64(*s, sat, "f64");
  if (s) r.fail(sat, "{\"i64\": N} or {\"f64\": X}", s);
  return std::int64_t{0};
}

Problem decode_problem(Reader& r, const json& obj, const std::string& at) {
  Problem p;
  p.op = r.str(obj, at, "op");
  p.name = r.str(obj, at, "name");
  const json* args = r.array(obj, at, "args");
  for (std::size_t i = 0; args && r.ok() && i < args->size(); ++i) {
    const json& a = (*args)[i];
    const std::string aat = Reader::index(Reader::sub(at, "args"), i);
    ProblemArg arg;
    arg.param.name = r.str(a, aat, "name");
    arg.param.role = parse_named<ArgRole>(r, a, aat, "role", [](std::string_view n) {
      for (ArgRole role : kRoles) {
        if (arg_role_name(role) == n) return std::optional<ArgRole>(role);
      }
      return std::optional<ArgRole>();
    });
    arg.param.dtype = parse_named<DType>(r, a, aat, "dtype", dtype_named);
    if (!r.ok()) break;
    if (arg.param.role == ArgRole::kScalar) {
      arg.scalar = decode_scalar(r, a, aat);
    } else if (const json* t = r.get(a, aat, "tensor", "an object")) {
      arg.tensor = decode_tensor(r, *t, Reader::sub(aat, "tensor"));
    }
    p.args.push_back(std::move(arg));
  }
  return p;
}

json encode_tolerance(const Tolerance& t) {
  return {{"rtol", number(t.rtol)}, {"atol", number(t.atol)}, {"max_rel_l2", number(t.max_rel_l2)}};
}

Tolerance decode_tolerance(Reader& r, const json& obj, const std::string& at) {
  return {r.f64(obj, at, "rtol"), r.f64(obj, at, "atol"), r.f64(obj, at, "max_rel_l2")};
}

json encode_bench(const BenchOptions& b) {
  return {{"warmup_runs", b.warmup_runs}, {"budget_ms", number(b.budget_ms)},
          {"min_runs", b.min_runs},       {"max_runs", b.max_runs},
          {"flush_cache", b.flush_cache}, {"flush_bytes", std::uint64_t(b.flush_bytes)},
          {"graph_calls", b.graph_calls}};
}

BenchOptions decode_bench(Reader& r, const json& obj, const std::string& at) {
  BenchOptions b;
  b.warmup_runs = r.i32(obj, at, "warmup_runs");
  b.budget_ms = r.f64(obj, at, "budget_ms");
  b.min_runs = r.i32(obj, at, "min_runs");
  b.max_runs = r.i32(obj, at, "max_runs");
  b.flush_cache = r.boolean(obj, at, "flush_cache");
  b.flush_bytes = static_cast<std::size_t>(r.u64(obj, at, "flush_bytes"));
  b.graph_calls = r.i32(obj, at, "graph_calls");
  return b;
}

json encode_launch(const LaunchSpec& l) {
  json then = json::array();
  for (const LaunchSpec& t : l.then) then.push_back(encode_launch(t));
  return {{"kind", launch_kind_name(l.kind)},
          {"artifact", l.artifact.string()},
          {"entry", l.entry},
          {"grid", l.grid},
          {"block", l.block},
          {"shared_bytes", l.shared_bytes},
          {"library", l.library},
          {"algo", l.algo},
          {"bind", l.bind},
          {"library_epilogue", l.library_epilogue},
          {"then", then}};
}

std::array<std::uint64_t, 3> decode_dims(Reader& r, const json& obj, const std::string& at,
                                         std::string_view key) {
  std::array<std::uint64_t, 3> out{1, 1, 1};
  const json* a = r.array(obj, at, key);
  if (!a) return out;
  if (a->size() != 3) {
    r.fail_value(Reader::sub(at, key), fmt::format("expected 3 dimensions, got {}", a->size()));
    return out;
  }
  for (std::size_t i = 0; i < 3; ++i) {
    const std::int64_t v = r.i64_value((*a)[i], Reader::index(Reader::sub(at, key), i));
    if (v < 1) {
      r.fail_value(Reader::index(Reader::sub(at, key), i),
                   fmt::format("expected a dimension >= 1, got {}", v));
    }
    out[i] = static_cast<std::uint64_t>(v);
  }
  return out;
}

LaunchSpec decode_launch(Reader& r, const json& obj, const std::string& at) {
  LaunchSpec l;
  l.kind = parse_named<LaunchKind>(r, obj, at, "kind", [](std::string_view n) {
    LaunchKind k{};
    return parse_launch_kind(n, &k) ? std::optional<LaunchKind>(k) : std::nullopt;
  });
  l.artifact = r.str(obj, at, "artifact");
  l.entry = r.str(obj, at, "entry");
  l.grid = decode_dims(r, obj, at, "grid");
  l.block = decode_dims(r, obj, at, "block");
  l.shared_bytes = static_cast<std::uint32_t>(r.u64(obj, at, "shared_bytes"));
  l.library = r.str(obj, at, "library");
  l.algo = r.i32(obj, at, "algo");
  for (std::int64_t v : decode_i64s(r, obj, at, "bind")) l.bind.push_back(static_cast<int>(v));
  l.library_epilogue = r.i32(obj, at, "library_epilogue");
  if (const json* then = r.array(obj, at, "then")) {
    for (std::size_t i = 0; i < then->size(); ++i) {
      l.then.push_back(decode_launch(r, (*then)[i], Reader::index(Reader::sub(at, "then"), i)));
    }
  }
  return l;
}

json encode_stats(const BenchStats& s) {
  return {{"median_ns", number(s.median_ns)},
          {"min_ns", number(s.min_ns)},
          {"max_ns", number(s.max_ns)},
          {"mad_ns", number(s.mad_ns)},
          {"runs", s.runs}};
}

BenchStats decode_stats(Reader& r, const json& obj, const std::string& at) {
  BenchStats s;
  s.median_ns = r.f64(obj, at, "median_ns");
  s.min_ns = r.f64(obj, at, "min_ns");
  s.max_ns = r.f64(obj, at, "max_ns");
  s.mad_ns = r.f64(obj, at, "mad_ns");
  s.runs = r.i32(obj, at, "runs");
  return s;
}

BenchmarkRequest decode_request(Reader& r, const json& j) {
  BenchmarkRequest q;
  q.id = r.u64(j, "", "id");
  q.candidate = r.str(j, "", "candidate");
  if (const json* l = r.get(j, "", "launch", "an object"))
    q.launch = decode_launch(r, *l, "launch");
  if (const json* p = r.get(j, "", "problem", "an object"))
    q.problem = decode_problem(r, *p, "problem");
  q.seed = r.u64(j, "", "seed");
  q.expected = r.str(j, "", "expected");
  if (Reader::has(j, "reference")) q.reference = decode_launch(r, j.at("reference"), "reference");
  if (Reader::has(j, "tolerance"))
    q.tolerance = decode_tolerance(r, j.at("tolerance"), "tolerance");
  if (const json* b = r.get(j, "", "bench", "an object")) q.bench = decode_bench(r, *b, "bench");
  q.measure = r.boolean(j, "", "measure");
  q.verify = r.boolean(j, "", "verify");
  return q;
}

BenchmarkResponse decode_response(Reader& r, const json& j) {
  BenchmarkResponse s;
  s.id = r.u64(j, "", "id");
  s.outcome = parse_named<Outcome>(r, j, "", "outcome", [](std::string_view n) {
    auto o = parse_outcome(n);
    return o ? std::optional<Outcome>(*o) : std::nullopt;
  });
  s.message = r.str(j, "", "message");
  if (Reader::has(j, "stats")) s.stats = decode_stats(r, j.at("stats"), "stats");
  s.output_tail = r.str(j, "", "output_tail");
  s.restart = r.boolean(j, "", "restart");
  return s;
}

}  // namespace

std::string encode_ping() { return dump({{"type", "ping"}}); }

std::string encode_pong(int pid) {
  return dump({{"type", "pong"}, {"pid", pid}, {"version", KTUNE_VERSION}});
}

std::string encode_request(const BenchmarkRequest& q) {
  json j = {{"type", "request"},
            {"id", q.id},
            {"candidate", q.candidate},
            {"launch", encode_launch(q.launch)},
            {"problem", encode_problem(q.problem)},
            {"seed", q.seed},
            {"expected", q.expected.string()},
            {"bench", encode_bench(q.bench)},
            {"measure", q.measure},
            {"verify", q.verify}};
  if (q.tolerance) j["tolerance"] = encode_tolerance(*q.tolerance);
  if (q.reference) j["reference"] = encode_launch(*q.reference);
  return dump(j);
}

std::string encode_response(const BenchmarkResponse& s) {
  json j = {{"type", "response"},
            {"id", s.id},
            {"outcome", outcome_name(s.outcome)},
            {"message", s.message},
            {"output_tail", s.output_tail},
            {"restart", s.restart}};
  if (s.stats) j["stats"] = encode_stats(*s.stats);
  return dump(j);
}

Result<WorkerMessage> decode_message(std::string_view payload) {
  Result<json> parsed = parse_json(payload);
  if (!parsed) return std::unexpected(parsed.error());
  const json& j = *parsed;
  Reader r;
  const std::string type = r.str(j, "", "type");
  WorkerMessage m;
  if (!r.ok()) return std::unexpected(r.error());
  if (type == "ping") {
    m.ping = true;
  } else if (type == "pong") {
    m.pong_pid = r.i32(j, "", "pid");
  } else if (type == "request") {
    m.request = decode_request(r, j);
  } else if (type == "response") {
    m.response = decode_response(r, j);
  } else {
    r.fail_value("type", fmt::format("expected ping, pong, request or response, got '{}'", type));
  }
  if (!r.ok()) return std::unexpected(r.error());
  return m;
}

}  // namespace ktune
