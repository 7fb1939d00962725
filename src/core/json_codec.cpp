// The JSON codec of the core types (json_codec.h).
#include "core/json_codec.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "core/checked_size.h"

namespace ktune {
namespace {

constexpr std::pair<DeviceKind, std::string_view> kDeviceKinds[] = {
    {DeviceKind::kCpu, "cpu"}, {DeviceKind::kCuda, "cuda"}, {DeviceKind::kOpenCL, "opencl"}};
constexpr ArgRole kRoles[] = {ArgRole::kIn, ArgRole::kOut, ArgRole::kInOut, ArgRole::kScalar,
                              ArgRole::kScratch};
// A scalar's two forms, as the member "scalar" is described when it is wrong.
constexpr JsonKind kScalarKind{R"({"i64": N} or {"f64": X})", R"({"i64": N} or {"f64": X})"};

std::string_view device_kind_name(DeviceKind kind) {
  for (const auto& [k, name] : kDeviceKinds) {
    if (k == kind) return name;
  }
  return "unknown";
}

constexpr InitKind kInitKinds[] = {InitKind::kUniform, InitKind::kNormal, InitKind::kInt,
                                   InitKind::kZeros,   InitKind::kOnes,   InitKind::kArange,
                                   InitKind::kNpy};

std::optional<InitKind> init_kind_named(std::string_view name) {
  for (InitKind k : kInitKinds) {
    if (init_kind_name(k) == name) return k;
  }
  return std::nullopt;
}

bool init_has_bounds(InitKind kind) {
  return kind == InitKind::kUniform || kind == InitKind::kNormal || kind == InitKind::kInt;
}

// {"kind": "uniform", "a": 0.5, "b": 2}; a and b only for the kinds with bounds. Absent for
// ktune's own random data, so that requests without inits read as they did.
OrderedJson encode_init(const DataInit& init) {
  OrderedJson j = {{"kind", init_kind_name(init.kind)}};
  if (init_has_bounds(init.kind)) {
    j["a"] = json_number(init.a);
    j["b"] = json_number(init.b);
  }
  if (init.kind == InitKind::kNpy) {
    j["path"] = init.path;
    j["digest"] = init.digest;
  }
  return j;
}

DataInit decode_init(JsonReader& r, const Json& j, const std::string& at) {
  DataInit init;
  init.kind = r.named<InitKind>(j, at, "kind", "init kind", init_kind_named);
  if (r.ok() && init.kind == InitKind::kNpy) {
    // The worker reads this file: it must be the absolute path make_problem resolved.
    init.path = r.str(j, at, "path");
    init.digest = r.str(j, at, "digest");
    if (r.ok() && (init.path.empty() || init.path.front() != '/')) {
      r.fail(JsonReader::sub(at, "path"),
             fmt::format("expected an absolute path, got '{}'", init.path));
    }
    return init;
  }
  if (!r.ok() || !init_has_bounds(init.kind)) return init;
  init.a = r.f64(j, at, "a");
  init.b = r.f64(j, at, "b");
  // The worker fills with these: bounds the spec would have refused are refused here too.
  if (r.ok() && (!std::isfinite(init.a) || !std::isfinite(init.b))) {
    r.fail(at, fmt::format("expected finite bounds, got {} and {}", init.a, init.b));
  } else if (r.ok() && init.kind == InitKind::kNormal && !(init.b >= 0)) {
    r.fail(JsonReader::sub(at, "b"),
           fmt::format("expected a standard deviation >= 0, got {}", init.b));
  } else if (r.ok() && init.kind != InitKind::kNormal && !(init.a <= init.b)) {
    r.fail(JsonReader::sub(at, "b"),
           fmt::format("expected high >= low ({}), got {}", init.a, init.b));
  }
  return init;
}

std::optional<DType> dtype_named(std::string_view name) {
  auto d = parse_dtype(name);
  return d ? std::optional<DType>(*d) : std::nullopt;
}

std::optional<DeviceKind> device_kind_named(std::string_view name) {
  for (const auto& [k, n] : kDeviceKinds) {
    if (n == name) return k;
  }
  return std::nullopt;
}

std::optional<ArgRole> role_named(std::string_view name) {
  for (ArgRole role : kRoles) {
    if (arg_role_name(role) == name) return role;
  }
  return std::nullopt;
}

std::vector<std::int64_t> decode_i64s(JsonReader& r, const Json& obj, const std::string& at,
                                      std::string_view key) {
  std::vector<std::int64_t> out;
  if (const Json* a = r.array(obj, at, key)) {
    const std::string aat = JsonReader::sub(at, key);
    for (std::size_t i = 0; i < a->size(); ++i) {
      out.push_back(r.integer_value((*a)[i], JsonReader::index(aat, i),
                                    std::numeric_limits<std::int64_t>::min(),
                                    std::numeric_limits<std::int64_t>::max()));
    }
  }
  return out;
}

std::array<std::uint64_t, 3> decode_dims(JsonReader& r, const Json& obj, const std::string& at,
                                         std::string_view key) {
  std::array<std::uint64_t, 3> out{1, 1, 1};
  const Json* a = r.array(obj, at, key);
  if (!a) return out;
  const std::string aat = JsonReader::sub(at, key);
  if (a->size() != 3) {
    r.fail(aat, fmt::format("expected 3 dimensions, got {}", a->size()));
    return out;
  }
  for (std::size_t i = 0; i < 3; ++i) {
    const std::int64_t v = r.integer_value((*a)[i], JsonReader::index(aat, i),
                                           std::numeric_limits<std::int64_t>::min(),
                                           std::numeric_limits<std::int64_t>::max());
    if (v < 1) {
      r.fail(JsonReader::index(aat, i), fmt::format("expected a dimension >= 1, got {}", v));
    }
    out[i] = static_cast<std::uint64_t>(v);
  }
  return out;
}

ScalarValue decode_scalar(JsonReader& r, const Json& obj, const std::string& at) {
  const Json* s = r.member(obj, at, "scalar", kScalarKind);
  const std::string sat = JsonReader::sub(at, "scalar");
  if (s && s->is_object() && s->size() == 1 && s->contains("i64")) return r.i64(*s, sat, "i64");
  if (s && s->is_object() && s->size() == 1 && s->contains("f64")) return r.f64(*s, sat, "f64");
  if (s) r.fail_kind(sat, kScalarKind, s);
  return std::int64_t{0};
}

}  // namespace

OrderedJson encode_json(const TensorSpec& t) {
  return {{"dtype", dtype_name(t.dtype)},
          {"device", {{"kind", device_kind_name(t.device.kind)}, {"index", t.device.index}}},
          {"sizes", t.sizes},
          {"strides", t.strides},
          {"offset", t.offset}};
}

void decode_json(JsonReader& r, const Json& j, const std::string& at, TensorSpec& t) {
  t.dtype = r.named<DType>(j, at, "dtype", "dtype", dtype_named);
  if (const Json* dev = r.object(j, at, "device")) {
    const std::string dat = JsonReader::sub(at, "device");
    t.device.kind = r.named<DeviceKind>(*dev, dat, "kind", "device kind", device_kind_named);
    t.device.index = r.i32(*dev, dat, "index");
  }
  t.sizes = decode_i64s(r, j, at, "sizes");
  t.strides = decode_i64s(r, j, at, "strides");
  t.offset = r.i64(j, at, "offset");
  if (!r.ok()) return;
  if (t.sizes.size() != t.strides.size()) {
    r.fail(JsonReader::sub(at, "strides"), fmt::format("expected {} strides (one per size), got {}",
                                                       t.sizes.size(), t.strides.size()));
  }
  for (std::size_t i = 0; i < t.sizes.size(); ++i) {
    if (t.sizes[i] < 0) {
      r.fail(JsonReader::index(JsonReader::sub(at, "sizes"), i),
             fmt::format("expected a size >= 0, got {}", t.sizes[i]));
    }
  }
  if (t.offset < 0) {
    r.fail(JsonReader::sub(at, "offset"), fmt::format("expected >= 0, got {}", t.offset));
  }
  // Whoever reads the tensor next sizes it (a worker allocates it) with unchecked int64
  // arithmetic: a storage past int64 would wrap to a small buffer.
  if (r.ok() && !checked_storage_bytes(t)) {
    r.fail(at, "expected sizes, strides and offset that span at most 2^63 - 1 bytes");
  }
}

OrderedJson encode_json(const Problem& p) {
  OrderedJson args = OrderedJson::array();
  for (const ProblemArg& a : p.args) {
    OrderedJson arg = {{"name", a.param.name},
                       {"role", arg_role_name(a.param.role)},
                       {"dtype", dtype_name(a.param.dtype)}};
    if (a.param.role == ArgRole::kScalar) {
      arg["scalar"] = std::holds_alternative<std::int64_t>(a.scalar)
                          ? OrderedJson{{"i64", std::get<std::int64_t>(a.scalar)}}
                          : OrderedJson{{"f64", json_number(std::get<double>(a.scalar))}};
    } else {
      arg["tensor"] = encode_json(a.tensor);
      if (a.init.kind != InitKind::kRandom) arg["init"] = encode_init(a.init);
      // An output's own check; absent when unset, as in requests from before it existed.
      if (a.tolerance) arg["tolerance"] = encode_json(*a.tolerance);
      if (a.nan_ok) arg["nan_ok"] = true;
    }
    args.push_back(std::move(arg));
  }
  return {{"op", p.op}, {"name", p.name}, {"args", std::move(args)}};
}

void decode_json(JsonReader& r, const Json& j, const std::string& at, Problem& p) {
  p.op = r.str(j, at, "op");
  p.name = r.str(j, at, "name");
  const Json* args = r.array(j, at, "args");
  for (std::size_t i = 0; args && r.ok() && i < args->size(); ++i) {
    const Json& a = (*args)[i];
    const std::string aat = JsonReader::index(JsonReader::sub(at, "args"), i);
    ProblemArg arg;
    arg.param.name = r.str(a, aat, "name");
    arg.param.role = r.named<ArgRole>(a, aat, "role", "role", role_named);
    arg.param.dtype = r.named<DType>(a, aat, "dtype", "dtype", dtype_named);
    if (!r.ok()) break;
    if (arg.param.role == ArgRole::kScalar) {
      arg.scalar = decode_scalar(r, a, aat);
    } else if (const Json* t = r.object(a, aat, "tensor")) {
      decode_json(r, *t, JsonReader::sub(aat, "tensor"), arg.tensor);
      if (r.ok() && JsonReader::has(a, "init")) {
        if (const Json* init = r.object(a, aat, "init")) {
          arg.init = decode_init(r, *init, JsonReader::sub(aat, "init"));
        }
      }
      if (r.ok() && JsonReader::has(a, "tolerance")) {
        if (const Json* t = r.object(a, aat, "tolerance")) {
          arg.tolerance.emplace();
          decode_json(r, *t, JsonReader::sub(aat, "tolerance"), *arg.tolerance);
        }
      }
      if (r.ok() && JsonReader::has(a, "nan_ok")) arg.nan_ok = r.boolean(a, aat, "nan_ok");
    }
    p.args.push_back(std::move(arg));
  }
}

OrderedJson encode_json(const LaunchSpec& l) {
  OrderedJson then = OrderedJson::array();
  for (const LaunchSpec& t : l.then) then.push_back(encode_json(t));
  OrderedJson maps = OrderedJson::array();
  for (const TensorMapDesc& t : l.tensor_maps) {
    maps.push_back({{"arg", t.arg},
                    {"workspace_offset", t.workspace_offset},
                    {"element_bytes", t.element_bytes},
                    {"dims", t.dims},
                    {"row_stride_bytes", t.row_stride_bytes},
                    {"box", t.box},
                    {"swizzle_bytes", t.swizzle_bytes}});
  }
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
          {"alpha", l.alpha},
          {"tensor_maps", std::move(maps)},
          {"workspace_bytes", l.workspace_bytes},
          {"then", std::move(then)}};
}

void decode_json(JsonReader& r, const Json& j, const std::string& at, LaunchSpec& l) {
  l.kind = r.named<LaunchKind>(j, at, "kind", "launch kind", [](std::string_view n) {
    LaunchKind k{};
    return parse_launch_kind(n, &k) ? std::optional<LaunchKind>(k) : std::nullopt;
  });
  l.artifact = r.str(j, at, "artifact");
  l.entry = r.str(j, at, "entry");
  l.grid = decode_dims(r, j, at, "grid");
  l.block = decode_dims(r, j, at, "block");
  l.shared_bytes = static_cast<std::uint32_t>(r.u64(j, at, "shared_bytes"));
  l.library = r.str(j, at, "library");
  l.algo = r.i32(j, at, "algo");
  for (std::int64_t v : decode_i64s(r, j, at, "bind")) l.bind.push_back(static_cast<int>(v));
  l.library_epilogue = r.i32(j, at, "library_epilogue");
  l.alpha = r.f64(j, at, "alpha");
  if (JsonReader::has(j, "workspace_bytes")) l.workspace_bytes = r.u64(j, at, "workspace_bytes");
  if (JsonReader::has(j, "tensor_maps")) {
    if (const Json* maps = r.array(j, at, "tensor_maps")) {
      const std::string mat = JsonReader::sub(at, "tensor_maps");
      for (std::size_t i = 0; i < maps->size(); ++i) {
        const Json& m = (*maps)[i];
        const std::string iat = JsonReader::index(mat, i);
        TensorMapDesc t;
        t.arg = r.i32(m, iat, "arg");
        t.workspace_offset = r.u64(m, iat, "workspace_offset");
        t.element_bytes = static_cast<std::uint32_t>(r.u64(m, iat, "element_bytes"));
        const std::vector<std::int64_t> dims = decode_i64s(r, m, iat, "dims");
        const std::vector<std::int64_t> box = decode_i64s(r, m, iat, "box");
        t.row_stride_bytes = r.u64(m, iat, "row_stride_bytes");
        t.swizzle_bytes = static_cast<std::uint32_t>(r.u64(m, iat, "swizzle_bytes"));
        if (dims.size() != 2 || box.size() != 2) {
          r.fail(iat, "dims and box: two non-negative integers each");
          continue;
        }
        t.dims = {static_cast<std::uint64_t>(dims[0]), static_cast<std::uint64_t>(dims[1])};
        t.box = {static_cast<std::uint32_t>(box[0]), static_cast<std::uint32_t>(box[1])};
        l.tensor_maps.push_back(t);
      }
    }
  }
  if (const Json* then = r.array(j, at, "then")) {
    const std::string tat = JsonReader::sub(at, "then");
    for (std::size_t i = 0; i < then->size(); ++i) {
      l.then.emplace_back();
      decode_json(r, (*then)[i], JsonReader::index(tat, i), l.then.back());
    }
  }
}

OrderedJson encode_json(Outcome o) { return outcome_name(o); }

Outcome decode_outcome(JsonReader& r, const Json& obj, const std::string& at,
                       std::string_view key) {
  return r.named<Outcome>(obj, at, key, "outcome", [](std::string_view n) {
    auto o = parse_outcome(n);
    return o ? std::optional<Outcome>(*o) : std::nullopt;
  });
}

OrderedJson encode_json(const Tolerance& t) {
  OrderedJson j = {{"rtol", json_number(t.rtol)},
                   {"atol", json_number(t.atol)},
                   {"max_rel_l2", json_number(t.max_rel_l2)}};
  if (t.rms_atol != 0) j["rms_atol"] = json_number(t.rms_atol);
  return j;
}

// Numbers >= 0 (a negative one would fail every element, NaN would pass none: neither is what a
// spec or a request can mean).
void decode_json(JsonReader& r, const Json& j, const std::string& at, Tolerance& t) {
  std::pair<const char*, double*> fields[] = {{"rtol", &t.rtol},
                                              {"atol", &t.atol},
                                              {"max_rel_l2", &t.max_rel_l2},
                                              {"rms_atol", &t.rms_atol}};
  for (auto [key, dest] : fields) {
    if (std::string_view(key) == "rms_atol" && !JsonReader::has(j, key)) {
      *dest = 0;  // written only where set
      continue;
    }
    *dest = r.f64(j, at, key);
    if (r.ok() && !(*dest >= 0)) {
      r.fail(JsonReader::sub(at, key), fmt::format("expected a number >= 0, got {}", *dest));
    }
  }
}

}  // namespace ktune
