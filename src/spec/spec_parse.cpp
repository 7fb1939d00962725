// parse_spec and load_spec: the top level of the schema (docs/spec.md), the kernel, reference,
// tolerance and seed sections, and the one adapter for yaml-cpp's exceptions.
#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <system_error>

#include "core/file_util.h"
#include "ktune/spec/spec.h"
#include "spec/spec_sections.h"

namespace ktune {
namespace spec_detail {

Status parse_kernel(const Reader& r, const YAML::Node& node, std::string_view path,
                    const std::filesystem::path& dir, KernelDecl& out, std::string_view language) {
  if (auto ok = r.expect_map(node, path); !ok) return ok;
  if (auto ok = r.check_keys(
          node, path, {"source", "entry", "language", "render", "flags", "size_defines", "launch"});
      !ok) {
    return ok;
  }
  out.line = node.Mark().line + 1;
  out.language = std::string(language);
  auto source_node = r.require(node, path, "source");
  if (!source_node) return std::unexpected(source_node.error());
  auto source = r.string(*source_node, field(path, "source"));
  if (!source) return std::unexpected(source.error());
  out.source = (dir / *source).lexically_normal();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(out.source, ec)) {
    return r.fail(*source_node, field(path, "source"),
                  fmt::format("file not found; expected a file at '{}'", out.source.string()),
                  ErrorCode::kNotFound);
  }

  // A list of launch steps may name each step's entry instead.
  YAML::Node entry_node = node["entry"];
  const YAML::Node launch = node["launch"];
  const bool steps_name_entries = launch.IsDefined() && launch.IsSequence();
  if (!entry_node.IsDefined() && !steps_name_entries) {
    auto required = r.require(node, path, "entry");
    if (!required) return std::unexpected(required.error());
  }
  if (entry_node.IsDefined()) {
    auto entry = r.string(entry_node, field(path, "entry"));
    if (!entry) return std::unexpected(entry.error());
    out.entry = *entry;
  }

  if (YAML::Node lang = node["language"]; lang.IsDefined()) {
    auto text = r.string(lang, field(path, "language"));
    if (!text) return std::unexpected(text.error());
    if (*text != "c++" && *text != "cuda" && *text != "opencl") {
      return r.fail(
          lang, field(path, "language"),
          fmt::format("unsupported language '{}'; expected one of c++, cuda, opencl", *text));
    }
    // A reference is in the kernel's language, or c++ beside a device kernel (run on the host).
    if (path != "kernel" && *text != language && *text != "c++") {
      return r.fail(lang, field(path, "language"),
                    fmt::format("'{}' differs from the kernel's language '{}'; expected a "
                                "reference kernel in the same language, or c++ (a host reference)",
                                *text, language));
    }
    out.language = *text;
  }
  // The entry's form now; its {{P}} placeholders once the params are known (parse_launch).
  if (!entry_node.IsDefined()) {
  } else if (out.language == "cuda") {
    if (auto ok = check_cuda_entry(out.entry); !ok) {
      return r.fail(entry_node, field(path, "entry"),
                    fmt::format("'{}': {}", out.entry, ok.error()));
    }
  } else if (auto ident = r.identifier(entry_node, field(path, "entry")); !ident) {
    return std::unexpected(ident.error());
  }
  if (YAML::Node render = node["render"]; render.IsDefined()) {
    auto text = r.string(render, field(path, "render"));
    if (!text) return std::unexpected(text.error());
    if (*text != "defines" && *text != "mustache" && *text != "none") {
      return r.fail(
          render, field(path, "render"),
          fmt::format("unknown render mode '{}'; expected one of defines, mustache, none", *text));
    }
    if (*text == "none" && out.language == "c++") {
      return r.fail(render, field(path, "render"),
                    "render: none leaves a c++ kernel no way to see its parameters; expected "
                    "defines or mustache (none is for cuda and opencl kernels, whose parameters "
                    "reach the entry's {{P}} and the launch)");
    }
    out.mustache = *text == "mustache";
    out.defines = *text != "none";
  }
  if (YAML::Node flags = node["flags"]; flags.IsDefined()) {
    auto list = r.strings(flags, field(path, "flags"));
    if (!list) return std::unexpected(list.error());
    out.flags = std::move(*list);
  }
  return {};
}

Status parse_seed(const Reader& r, const YAML::Node& node, Spec& spec) {
  auto value = r.integer(node, "seed");
  if (!value) return std::unexpected(value.error());
  if (*value < 0) {
    return r.fail(node, "seed", fmt::format("expected an integer >= 0; got {}", *value));
  }
  spec.seed = static_cast<std::uint64_t>(*value);
  return {};
}

namespace {

// reference.expected: {out_arg: file.npy, ...}, one file per output, every output named, and
// every input fixed (a file or a constant init), since the files hold what the user computed
// from known inputs. Shapes and dtypes are checked per problem (the reference's supports()).
Status parse_expected(const Reader& r, const YAML::Node& node, const std::filesystem::path& dir,
                      const std::vector<ArgDecl>& args, ReferenceDecl& out) {
  const std::string path = "reference.expected";
  if (auto ok = r.expect_map(node, path); !ok) return ok;
  auto is_out = [](const ArgDecl& a) {
    return a.role == ArgRole::kOut || a.role == ArgRole::kInOut;
  };
  std::vector<std::string> outputs;
  for (const ArgDecl& a : args) {
    if (is_out(a)) outputs.push_back(a.name);
  }
  for (const auto& kv : node) {
    auto name = r.string(kv.first, path);
    if (!name) return std::unexpected(name.error());
    const std::string at = field(path, *name);
    if (std::find(outputs.begin(), outputs.end(), *name) == outputs.end()) {
      return r.fail(
          kv.first, at,
          fmt::format("'{}' is not an output argument; expected one of {}", *name,
                      outputs.empty() ? "none (no out or inout argument)" : join(outputs)));
    }
    for (const auto& [seen, unused] : out.expected) {
      if (seen == *name) return r.fail(kv.first, at, "duplicate key");
    }
    auto file = r.string(kv.second, at);
    if (!file) return std::unexpected(file.error());
    const std::filesystem::path resolved = (dir / *file).lexically_normal();
    std::error_code ec;
    if (file->empty() || !std::filesystem::is_regular_file(resolved, ec)) {
      return r.fail(kv.second, at,
                    fmt::format("file not found; expected an .npy file at '{}'", resolved.string()),
                    ErrorCode::kNotFound);
    }
    out.expected.emplace_back(*name, resolved);
  }
  for (const std::string& o : outputs) {
    bool named = std::any_of(out.expected.begin(), out.expected.end(),
                             [&](const auto& e) { return e.first == o; });
    if (!named) {
      return r.fail(node, path,
                    fmt::format("output '{}' has no file; expected one .npy file per output ({})",
                                o, join(outputs)));
    }
  }
  for (const ArgDecl& a : args) {
    if (a.role != ArgRole::kIn && a.role != ArgRole::kInOut) continue;
    const bool fixed = a.init == InitKind::kNpy || a.init == InitKind::kZeros ||
                       a.init == InitKind::kOnes || a.init == InitKind::kArange;
    if (!fixed) {
      return r.fail(node, path,
                    fmt::format("input '{}' is {} (init: {}); expected outputs from a file need "
                                "every input fixed: init npy, zeros, ones or arange",
                                a.name, a.init == InitKind::kRandom ? "random" : "drawn at random",
                                init_kind_name(a.init)));
    }
  }
  out.kind = ReferenceDecl::Kind::kExpected;
  return {};
}

Status parse_reference(const Reader& r, const YAML::Node& node, const std::filesystem::path& dir,
                       const std::vector<ExternDesc>& externs, const std::vector<ArgDecl>& args,
                       std::string_view language, ReferenceDecl& out) {
  if (auto ok = r.check_keys(node, "reference", {"extern", "kernel", "expected"}); !ok) return ok;
  out.line = node.Mark().line + 1;
  YAML::Node ext = node["extern"];
  YAML::Node kernel = node["kernel"];
  YAML::Node expected = node["expected"];
  std::vector<std::string> given;
  for (const char* key : {"extern", "kernel", "expected"}) {
    if (node[key].IsDefined()) given.emplace_back(key);
  }
  if (given.size() != 1) {
    return r.fail(
        node, "reference",
        fmt::format("expected exactly one of extern, kernel, expected; got {}",
                    given.empty() ? "none" : fmt::format("{}", fmt::join(given, " and "))));
  }
  if (expected.IsDefined()) return parse_expected(r, expected, dir, args, out);
  if (kernel.IsDefined()) {
    out.kind = ReferenceDecl::Kind::kKernel;
    return parse_kernel(r, kernel, "reference.kernel", dir, out.kernel, language);
  }
  auto name = r.string(ext, "reference.extern");
  if (!name) return std::unexpected(name.error());
  std::vector<std::string> names;
  names.reserve(externs.size());
  for (const ExternDesc& e : externs) names.push_back(e.name);
  if (std::find(names.begin(), names.end(), *name) == names.end()) {
    return r.fail(ext, "reference.extern",
                  fmt::format("unknown extern '{}'; expected one of the names in externs ({})",
                              *name, names.empty() ? "none declared" : join(names)));
  }
  out.kind = ReferenceDecl::Kind::kExtern;
  out.extern_name = *name;
  return {};
}

Status parse_tolerance(const Reader& r, const YAML::Node& node, const std::vector<ArgDecl>& args,
                       std::optional<Tolerance>& out) {
  DType dtype = DType::kF32;
  for (const ArgDecl& a : args) {
    if (a.role == ArgRole::kOut || a.role == ArgRole::kInOut) {
      dtype = a.dtype;
      break;
    }
  }
  Tolerance tol = default_tolerance(dtype);
  if (auto ok = parse_tolerance_fields(r, node, "tolerance", tol); !ok) return ok;
  out = tol;
  return {};
}

Status parse_top(const Reader& r, const YAML::Node& root, const std::filesystem::path& dir,
                 Spec& spec) {
  if (root["op"].IsDefined()) return parse_op_spec(r, root, spec);
  if (auto ok =
          r.check_keys(root, "",
                       {"name", "kernel", "args", "problems", "params", "restrictions", "reference",
                        "tolerance", "externs", "seed", "epilogue", "op", "metrics", "search"});
      !ok) {
    return ok;
  }
  auto name = r.require(root, "", "name");
  if (!name) return std::unexpected(name.error());
  auto name_text = r.identifier(*name, "name");
  if (!name_text) return std::unexpected(name_text.error());
  spec.name = *name_text;

  auto kernel = r.require(root, "", "kernel");
  if (!kernel) return std::unexpected(kernel.error());
  if (auto ok = parse_kernel(r, *kernel, "kernel", dir, spec.kernel); !ok) return ok;

  auto problems = r.require(root, "", "problems");
  if (!problems) return std::unexpected(problems.error());
  std::set<std::string> sizes;
  if (auto ok = parse_problems(r, *problems, spec.problems, sizes); !ok) return ok;

  auto args = r.require(root, "", "args");
  if (!args) return std::unexpected(args.error());
  if (auto ok = parse_args(r, *args, sizes, spec.args); !ok) return ok;

  if (auto ok = parse_space(r, root["params"], root["restrictions"], spec); !ok) return ok;
  if (auto ok = parse_launch(r, *kernel, "kernel", spec, spec.kernel); !ok) return ok;
  const bool device = spec.kernel.language != "c++";
  if (YAML::Node externs = root["externs"]; externs.IsDefined()) {
    if (auto ok = parse_externs(r, externs, spec.args, spec.kernel.language, spec.externs); !ok) {
      return ok;
    }
  }
  if (YAML::Node ref = root["reference"]; ref.IsDefined()) {
    if (auto ok = parse_reference(r, ref, dir, spec.externs, spec.args, spec.kernel.language,
                                  spec.reference);
        !ok) {
      return ok;
    }
    if (spec.reference.kind == ReferenceDecl::Kind::kKernel) {
      // The reference has no params: its entry and launch see problem sizes only.
      Spec sizes_only = spec;
      sizes_only.params.clear();
      if (auto ok =
              parse_launch(r, ref["kernel"], "reference.kernel", sizes_only, spec.reference.kernel);
          !ok) {
        return ok;
      }
    }
  }
  if (YAML::Node epilogue = root["epilogue"]; epilogue.IsDefined()) {
    if (device) {
      return r.fail(epilogue, "epilogue",
                    fmt::format("the epilogue hook is rendered for c++ kernels; expected none "
                                "beside a {} kernel (op: cuda.gemm fuses epilogues on the GPU)",
                                spec.kernel.language));
    }
    if (auto ok = parse_epilogue(r, epilogue, spec); !ok) return ok;
  }
  if (YAML::Node tol = root["tolerance"]; tol.IsDefined()) {
    if (auto ok = parse_tolerance(r, tol, spec.args, spec.tolerance); !ok) return ok;
  }
  if (YAML::Node seed = root["seed"]; seed.IsDefined()) {
    if (auto ok = parse_seed(r, seed, spec); !ok) return ok;
  }
  if (YAML::Node search = root["search"]; search.IsDefined()) {
    if (auto ok = parse_search(r, search, spec.search); !ok) return ok;
  }
  if (YAML::Node metrics = root["metrics"]; metrics.IsDefined()) {
    if (auto ok = parse_metrics(r, metrics, sizes, spec.metrics); !ok) return ok;
  }
  // Every problem must evaluate: negative or fractional sizes are reported at load time.
  for (const ProblemDecl& decl : spec.problems) {
    auto problem = make_problem(spec, decl);
    if (!problem) return std::unexpected(problem.error());
  }
  return {};
}

}  // namespace
}  // namespace spec_detail

Result<Spec> parse_spec(std::string_view text, const std::filesystem::path& file) {
  using namespace spec_detail;
  Reader reader(file.string());
  Spec spec;
  spec.file = file;
  // The one adapter for yaml-cpp: Load reports syntax errors, and any accessor that throws on a
  // malformed document ends here too.
  try {
    YAML::Node root = YAML::Load(std::string(text));
    if (auto ok = reader.expect_map(root, "top level"); !ok) return std::unexpected(ok.error());
    if (auto ok = parse_top(reader, root, file.parent_path(), spec); !ok) {
      return std::unexpected(ok.error());
    }
  } catch (const YAML::ParserException& e) {
    return make_error(ErrorCode::kParse, fmt::format("{}:{}:{}: syntax error: {}", file.string(),
                                                     e.mark.line + 1, e.mark.column + 1, e.msg));
  } catch (const YAML::Exception& e) {
    std::string where = e.mark.is_null() ? file.string()
                                         : fmt::format("{}:{}:{}", file.string(), e.mark.line + 1,
                                                       e.mark.column + 1);
    return make_error(ErrorCode::kInvalidArgument, fmt::format("{}: {}", where, e.msg));
  }
  return spec;
}

Result<Spec> load_spec(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) {
    return make_error(
        ErrorCode::kNotFound,
        fmt::format("{}: spec file not found; expected a YAML or JSON file", file.string()));
  }
  auto text = read_file(file);
  if (!text) return std::unexpected(text.error());
  return parse_spec(*text, file);
}

}  // namespace ktune
