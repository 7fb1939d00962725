// args[i].init: how an input buffer's data is made. A plain word (zeros, ones, arange) or a
// one-key mapping whose bounds are expressions over problem sizes, so that a gather's indices can
// be `{int: {low: 0, high: N - 1}}` for every problem of the spec, or `{npy: file.npy}`.
#include <fmt/format.h>

#include "spec/spec_sections.h"

namespace ktune::spec_detail {
namespace {

constexpr const char* kExpected = "expected one of uniform, normal, int, zeros, ones, arange, npy";

struct Bounded {
  std::string_view name;
  InitKind kind;
  std::string_view a, b;  // the keys of the two bounds
};
constexpr Bounded kBounded[] = {{"uniform", InitKind::kUniform, "low", "high"},
                                {"normal", InitKind::kNormal, "mean", "std"},
                                {"int", InitKind::kInt, "low", "high"}};

}  // namespace

Status parse_init(const Reader& r, const YAML::Node& node, const std::string& path,
                  const std::set<std::string>& sizes, ArgDecl& out) {
  if (node.IsScalar()) {
    const std::string& word = node.Scalar();
    for (InitKind k : {InitKind::kZeros, InitKind::kOnes, InitKind::kArange}) {
      if (word == init_kind_name(k)) {
        out.init = k;
        return {};
      }
    }
    for (const Bounded& b : kBounded) {
      if (word == b.name) {
        return r.fail(node, path,
                      fmt::format("'{}' needs its bounds; expected {{{}: {{{}: A, {}: B}}}}", word,
                                  b.name, b.a, b.b));
      }
    }
    return r.fail(node, path, fmt::format("'{}'; {}", word, kExpected));
  }
  if (!node.IsMap() || node.size() != 1) {
    return r.fail(node, path, fmt::format("got {}; {}", describe(node), kExpected));
  }
  const auto kv = *node.begin();
  auto key = r.string(kv.first, path);
  if (!key) return std::unexpected(key.error());
  if (*key == "npy") {
    // The file is read by make_problem, against each problem's shape: a spec whose problems
    // differ in size can still name one file only if they agree.
    auto text = r.string(kv.second, field(path, "npy"));
    if (!text) return std::unexpected(text.error());
    if (text->empty()) {
      return r.fail(kv.second, field(path, "npy"),
                    "empty path; expected a .npy file, relative to the spec's folder");
    }
    out.init = InitKind::kNpy;
    out.init_path = *text;
    return {};
  }
  for (const Bounded& b : kBounded) {
    if (*key != b.name) continue;
    const std::string at = field(path, b.name);
    if (auto ok = r.check_keys(kv.second, at, {b.a, b.b}); !ok) return ok;
    auto a = r.require(kv.second, at, b.a);
    if (!a) return std::unexpected(a.error());
    auto hi = r.require(kv.second, at, b.b);
    if (!hi) return std::unexpected(hi.error());
    if (auto ok = check_expr(r, *a, field(at, b.a), sizes, out.init_a); !ok) return ok;
    if (auto ok = check_expr(r, *hi, field(at, b.b), sizes, out.init_b); !ok) return ok;
    out.init = b.kind;
    return {};
  }
  return r.fail(kv.first, path, fmt::format("'{}'; {}", *key, kExpected));
}

}  // namespace ktune::spec_detail
