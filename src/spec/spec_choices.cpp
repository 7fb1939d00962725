// make_spec_choices: what a spec tunes (template configs, then externs) and its reference.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <memory>
#include <optional>
#include <string_view>
#include <system_error>

#include "core/file_util.h"
#include "ktune/choice/epilogue_pass.h"
#include "ktune/choice/sequence_choice.h"
#include "ktune/spec/spec.h"
#include "spec/spec_reference.h"
#include "spec/spec_sections.h"

namespace ktune {
namespace {

// The hook's #defines in front of the source (so that its hash changes with the epilogue), then
// #line 1 so that compiler messages still name the template's own lines.
std::string fused_source(const Epilogue& epilogue, const std::string& source) {
  return fmt::format("{}#line 1\n{}",
                     epilogue.render_defines("const float* __restrict__", EpilogueLanguage::kCpp),
                     source);
}

// The library call, then the epilogue as a pass of its own: the unfused pair.
ChoicePtr unfused(const Spec& spec, std::string name, ChoicePtr gemm, EpiloguePassKind kind) {
  return make_sequence_choice(std::move(name), std::move(gemm),
                              make_epilogue_pass(spec.epilogue, spec.args[spec.output].name, kind));
}

KernelTemplateDesc with_search_flags(KernelTemplateDesc desc,
                                     std::span<const std::string> backend_flags) {
  desc.header_search_flags.assign(backend_flags.begin(), backend_flags.end());
  return desc;
}

// The identifiers of an expression outside its string literals (function names too).
std::vector<std::string> identifiers(std::string_view text) {
  std::vector<std::string> out;
  std::string word;
  char quote = 0;
  for (char c : std::string(text) + " ") {
    if (quote != 0) {
      if (c == quote) quote = 0;
      continue;
    }
    if (c == '"' || c == '\'') {
      quote = c;
      continue;
    }
    const bool ident = std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    if (ident) {
      word += c;
    } else if (!word.empty()) {
      if (!std::isdigit(static_cast<unsigned char>(word[0]))) out.push_back(word);
      word.clear();
    }
  }
  return out;
}

std::string problem_label(const ProblemDecl& problem) {
  return problem.name.empty() ? spec_detail::default_problem_name(problem) : problem.name;
}

// A device kernel's launch steps as hooks: the entries rendered per config, the geometry per
// config on the one problem the choices are built for (another problem is refused: its sizes
// would give another geometry).
void add_launch(const Spec& spec, const KernelDecl& kernel, const ProblemDecl& problem,
                KernelTemplateDesc& desc) {
  std::vector<std::string> entries;
  for (const LaunchDecl& step : kernel.launch) {
    entries.push_back(step.entry);
    desc.launch_text +=
        fmt::format("{} grid [{}] block [{}] shared {};", step.entry, fmt::join(step.grid, ", "),
                    fmt::join(step.block, ", "), step.shared_bytes);
  }
  desc.step_entries = [entries](const Config& config) {
    std::vector<std::string> out;
    for (const std::string& e : entries) out.push_back(spec_detail::render_entry(e, config));
    return out;
  };
  auto shared = std::make_shared<const Spec>(spec);
  const KernelDecl* k = &kernel == &spec.kernel ? &shared->kernel : &shared->reference.kernel;
  const std::string label = problem_label(problem);
  desc.step_launch = [shared, k, problem, label](
                         const Config& config,
                         const Problem& p) -> Result<std::vector<LaunchGeometry>> {
    if (p.name != label && !p.name.starts_with(label + ",")) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("built for problem {}, not {}", label, p.name));
    }
    return spec_detail::eval_launch(*shared, *k, problem, config);
  };
  desc.supports = [step_launch = desc.step_launch](const Config& config,
                                                   const Problem& p) -> Status {
    Result<std::vector<LaunchGeometry>> g = step_launch(config, p);
    if (!g) return std::unexpected(g.error());
    return {};
  };
  desc.lower_entries = kernel.language == "cuda";
}

Result<KernelTemplateDesc> template_desc(const Spec& spec, const KernelDecl& kernel,
                                         std::string name, std::string source,
                                         const SpecTarget& target) {
  KernelTemplateDesc desc;
  desc.name = std::move(name);
  desc.source = std::move(source);
  desc.entry = kernel.entry;
  desc.signature = spec_signature(spec);
  desc.mustache = kernel.mustache;
  desc.defines = kernel.defines;
  desc.extra_flags = kernel.flags;
  std::error_code ec;
  desc.source_path = std::filesystem::absolute(kernel.source, ec).lexically_normal();
  if (ec) desc.source_path = kernel.source;
  if (!spec_choices_per_problem(spec)) return desc;
  if (target.problem == nullptr) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("{}: the candidates of a {} kernel{} are built per problem; "
                                  "expected one of its problems",
                                  spec.file.string(), kernel.language,
                                  kernel.size_defines.empty() ? "" : " with size_defines"));
  }
  for (const std::string& size : kernel.size_defines) {
    std::optional<std::int64_t> value = problem_size(*target.problem, size);
    if (!value) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("{}: problem {} does not bind {} (size_defines)",
                                    spec.file.string(), problem_label(*target.problem), size));
    }
    desc.extra_flags.push_back(fmt::format("-D{}={}", size, *value));
  }
  if (!kernel.launch.empty()) {
    add_launch(spec, kernel, *target.problem, desc);
  } else {
    // size_defines or size restrictions on the CPU: the constants are compiled in, so another
    // problem would run with this one's sizes.
    desc.supports = [label = problem_label(*target.problem)](const Config&,
                                                             const Problem& p) -> Status {
      if (p.name == label || p.name.starts_with(label + ",")) return {};
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("built for problem {}, not {}", label, p.name));
    };
  }
  return desc;
}

// The line of the first declaration `<type> NAME` in `source` (a type keyword, whitespace, then
// the name as a whole word), or 0 when there is none.
std::size_t declaration_line(std::string_view source, std::string_view name) {
  static constexpr std::string_view kTypes[] = {"int",   "unsigned", "long",     "short",
                                                "char",  "bool",     "size_t",   "auto",
                                                "float", "double",   "typename", "class"};
  const auto word_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
  };
  for (std::size_t at = source.find(name); at != std::string_view::npos;
       at = source.find(name, at + 1)) {
    const std::size_t after = at + name.size();
    if ((at > 0 && word_char(source[at - 1])) ||
        (after < source.size() && word_char(source[after]))) {
      continue;
    }
    std::size_t end = at;
    while (end > 0 && std::isspace(static_cast<unsigned char>(source[end - 1])) != 0) --end;
    std::size_t begin = end;
    while (begin > 0 && word_char(source[begin - 1])) --begin;
    if (end == at || begin == end) continue;
    const std::string_view type = source.substr(begin, end - begin);
    if (std::find(std::begin(kTypes), std::end(kTypes), type) != std::end(kTypes)) {
      return 1 + static_cast<std::size_t>(std::count(source.begin(), source.begin() + at, '\n'));
    }
  }
  return 0;
}

// For the candidates of a source that declares a name a tuning parameter has (`template <int
// BLOCK>` beside a parameter BLOCK): every parameter is #defined, so the compiler sees
// `template <int 128>`, and NVRTC's message shows the line but not why. Found by a plain scan
// (comments and #if branches included), and said only after a compile error.
std::string declared_parameter_note(const Spec& spec, std::string_view source) {
  if (!spec.kernel.defines) return {};
  for (const Param& p : spec.params) {
    const std::size_t line = declaration_line(source, p.name);
    if (line == 0) continue;
    return fmt::format(
        "{} is a tuning parameter, #defined as its value for every candidate, and {} declares a "
        "name {} at line {}: the compiler sees the value there; give one of them another name",
        p.name, spec.kernel.source.filename().string(), p.name, line);
  }
  return {};
}

// For a reference kernel read from the kernel's own file in a spec with parameters: the
// reference is compiled without them (it has no config), which a file written for the
// candidates (Kernel Tuner keeps a reference beside its kernel) rarely survives.
std::string shared_file_note(const Spec& spec) {
  std::error_code ec;
  if (spec.params.empty() ||
      !std::filesystem::equivalent(spec.reference.kernel.source, spec.kernel.source, ec)) {
    return {};
  }
  std::vector<std::string> names;
  for (const Param& p : spec.params) names.push_back(p.name);
  return fmt::format(
      "the reference is compiled from the kernel's file, {}, without the tuning parameters' "
      "#defines ({}); guard the candidates' code with `#ifdef {}`, or give the reference a file "
      "of its own",
      spec.kernel.source.filename().string(), fmt::join(names, ", "), names.front());
}

Result<ChoicePtr> make_reference(const Spec& spec, const SpecTarget& target) {
  const ReferenceDecl& ref = spec.reference;
  if (ref.kind == ReferenceDecl::Kind::kExpected) return spec_detail::make_expected_reference(spec);
  if (ref.kind == ReferenceDecl::Kind::kKernel) {
    auto source = read_file(ref.kernel.source);
    if (!source) return std::unexpected(source.error());
    auto space = SearchSpace::create({}, {});
    if (!space) return std::unexpected(space.error());
    auto desc =
        template_desc(spec, ref.kernel, spec.name + "_reference", std::move(*source), target);
    if (!desc) return std::unexpected(desc.error());
    desc->compile_error_note = shared_file_note(spec);
    // The choice keeps its template alive (KernelTemplate is enable_shared_from_this).
    auto tmpl = KernelTemplate::create(std::move(*desc), std::move(*space));
    if (!spec_has_host_reference(spec)) return tmpl->choice(Config{});
    if (!target.host_backend) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("{}: reference.kernel: a c++ reference beside a {} kernel "
                                    "needs a CPU backend to build it (SpecTarget::host_backend)",
                                    spec.file.string(), spec.kernel.language));
    }
    return spec_detail::make_host_reference(tmpl->choice(Config{}), target.host_backend);
  }
  for (const ExternDesc& desc : spec.externs) {
    if (desc.name != ref.extern_name) continue;
    ExternDesc copy = desc;
    copy.name = "reference:" + desc.name;
    auto choice = make_extern_choice(copy);
    if (!choice || spec.epilogue.empty()) return choice;
    // The unfused computation, its epilogue independent of the hook that fused candidates use.
    return unfused(spec, copy.name + "+epilogue", std::move(*choice), EpiloguePassKind::kHost);
  }
  return make_error(ErrorCode::kInvalidArgument,
                    fmt::format("{}: reference.extern: unknown extern '{}'; expected one of the "
                                "names in externs",
                                spec.file.string(), ref.extern_name));
}

void count_limit_restrictions(const Spec& spec, const SearchSpace& space, SpecChoices& out) {
  const std::vector<std::string> limits = device_limit_names(spec.kernel.language);
  bool any = false;
  for (const std::string& r : spec.restrictions) {
    for (const std::string& name : identifiers(r)) {
      any = any || std::find(limits.begin(), limits.end(), name) != limits.end();
    }
  }
  if (!any) return;
  auto stats = space.stats();
  if (!stats) return;  // enumerate() reports the same failure
  for (const SearchSpace::RestrictionCount& rc : stats->restrictions) {
    bool names_limit = std::any_of(rc.names.begin(), rc.names.end(), [&](const std::string& n) {
      return std::find(limits.begin(), limits.end(), n) != limits.end();
    });
    if (!names_limit || rc.removed == 0) continue;
    if (out.over_limits == 0) {
      out.over_limits_example =
          fmt::format("restriction `{}` removed {}", rc.expression, rc.removed);
    }
    out.over_limits += rc.removed;
  }
}

}  // namespace

bool spec_choices_per_problem(const Spec& spec) {
  if (spec.kernel.language != "c++" || !spec.kernel.size_defines.empty() ||
      !spec.reference.kernel.size_defines.empty()) {
    return true;
  }
  // Restrictions naming a problem size: the space itself differs per problem.
  if (spec.problems.empty()) return false;
  const SpaceConstants sizes = spec_space_constants(spec, SpecTarget{{}, &spec.problems.front()});
  for (const std::string& r : spec.restrictions) {
    for (const std::string& name : identifiers(r)) {
      if (std::any_of(sizes.begin(), sizes.end(), [&](const auto& c) { return c.first == name; }))
        return true;
    }
  }
  return false;
}

bool spec_has_host_reference(const Spec& spec) {
  return spec.reference.kind == ReferenceDecl::Kind::kKernel &&
         spec.reference.kernel.language == "c++" && spec.kernel.language != "c++";
}

Result<SpecChoices> make_spec_choices(const Spec& spec, std::span<const std::string> backend_flags,
                                      const SpecTarget& target) {
  if (!spec.op.name.empty()) return spec_detail::op_spec_error(spec, "candidates");
  auto source = read_file(spec.kernel.source);
  if (!source) return std::unexpected(source.error());
  auto space = spec_search_space(spec, target);
  if (!space) return std::unexpected(space.error());
  SpecChoices out;
  // Configs removed by restrictions that name a device limit are over the device's limits too.
  if (!target.limits.empty()) count_limit_restrictions(spec, *space, out);
  // Lines as the user's file numbers them: before an epilogue's hook is put in front.
  const std::string note = declared_parameter_note(spec, *source);
  std::string name = spec.name;
  if (!spec.epilogue.empty()) {
    name = fmt::format("{}_{}", spec.name, spec.epilogue.tag());
    *source = fused_source(spec.epilogue, *source);
  }
  auto desc = template_desc(spec, spec.kernel, std::move(name), std::move(*source), target);
  if (!desc) return std::unexpected(desc.error());
  desc->compile_error_note = note;
  out.kernel_template =
      KernelTemplate::create(with_search_flags(std::move(*desc), backend_flags), std::move(*space));
  Result<std::vector<Config>> configs = out.kernel_template->space().enumerate();
  if (!configs) {
    return make_error(configs.error().code,
                      fmt::format("{}: params: {}", spec.file.string(), configs.error().message));
  }
  Result<std::vector<ChoicePtr>> candidates = std::vector<ChoicePtr>{};
  for (Config& config : *configs) {
    if (!spec.kernel.launch.empty() && target.problem != nullptr) {
      // A config whose launch does not fit the device is no candidate; one whose geometry does
      // not evaluate stays, to be reported unsupported with its reason.
      auto steps = spec_detail::eval_launch(spec, spec.kernel, *target.problem, config);
      if (steps) {
        if (auto why =
                spec_detail::over_limits(*steps, target.limits, spec.kernel.language == "opencl")) {
          if (out.over_limits++ == 0) out.over_limits_example = config.str() + ": " + *why;
          continue;
        }
      }
    }
    candidates->push_back(out.kernel_template->choice(std::move(config)));
  }
  if (candidates->empty() && out.over_limits > 0) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("{}: every config of the space ({}) is over the device's "
                                  "limits; the first: {}",
                                  spec.file.string(), out.over_limits, out.over_limits_example));
  }
  // Only here, where nothing is left: the check counts the space again under each restriction.
  if (candidates->empty()) {
    if (Status s = check_space_not_empty(spec, target); !s) return std::unexpected(s.error());
  }
  out.candidates = std::move(*candidates);
  for (const ExternDesc& desc : spec.externs) {
    auto choice = make_extern_choice(desc);
    if (!choice) {
      return make_error(choice.error().code,
                        fmt::format("{}: externs: {}", spec.file.string(), choice.error().message));
    }
    if (!spec.epilogue.empty()) {
      *choice =
          unfused(spec, desc.name + "+epilogue", std::move(*choice), EpiloguePassKind::kCompiled);
    }
    out.candidates.push_back(std::move(*choice));
  }
  if (spec.reference.kind != ReferenceDecl::Kind::kNone) {
    auto reference = make_reference(spec, target);
    if (!reference) return std::unexpected(reference.error());
    out.reference = std::move(*reference);
  }
  return out;
}

}  // namespace ktune
