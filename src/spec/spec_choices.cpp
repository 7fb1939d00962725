// make_spec_choices: what a spec tunes (template configs, then externs) and its reference.
#include <fmt/format.h>

#include <filesystem>
#include <system_error>

#include "core/file_util.h"
#include "ktune/choice/epilogue_pass.h"
#include "ktune/choice/sequence_choice.h"
#include "ktune/spec/spec.h"
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

KernelTemplateDesc template_desc(const Spec& spec, const KernelDecl& kernel, std::string name,
                                 std::string source) {
  KernelTemplateDesc desc;
  desc.name = std::move(name);
  desc.source = std::move(source);
  desc.entry = kernel.entry;
  desc.signature = spec_signature(spec);
  desc.mustache = kernel.mustache;
  desc.extra_flags = kernel.flags;
  std::error_code ec;
  desc.source_path = std::filesystem::absolute(kernel.source, ec).lexically_normal();
  if (ec) desc.source_path = kernel.source;
  return desc;
}

Result<ChoicePtr> make_reference(const Spec& spec) {
  const ReferenceDecl& ref = spec.reference;
  if (ref.kind == ReferenceDecl::Kind::kKernel) {
    auto source = read_file(ref.kernel.source);
    if (!source) return std::unexpected(source.error());
    auto space = SearchSpace::create({}, {});
    if (!space) return std::unexpected(space.error());
    // The choice keeps its template alive (KernelTemplate is enable_shared_from_this).
    auto tmpl = KernelTemplate::create(
        template_desc(spec, ref.kernel, spec.name + "_reference", std::move(*source)),
        std::move(*space));
    return tmpl->choice(Config{});
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

}  // namespace

Result<SpecChoices> make_spec_choices(const Spec& spec,
                                      std::span<const std::string> backend_flags) {
  if (!spec.op.name.empty()) return spec_detail::op_spec_error(spec, "candidates");
  auto source = read_file(spec.kernel.source);
  if (!source) return std::unexpected(source.error());
  auto space = SearchSpace::create(spec.params, spec.restrictions);
  if (!space) {
    return make_error(space.error().code,
                      fmt::format("{}: {}", spec.file.string(), space.error().message));
  }
  SpecChoices out;
  std::string name = spec.name;
  if (!spec.epilogue.empty()) {
    name = fmt::format("{}_{}", spec.name, spec.epilogue.tag());
    *source = fused_source(spec.epilogue, *source);
  }
  out.kernel_template = KernelTemplate::create(
      with_search_flags(template_desc(spec, spec.kernel, std::move(name), std::move(*source)),
                        backend_flags),
      std::move(*space));
  Result<std::vector<ChoicePtr>> candidates = out.kernel_template->choices();
  if (!candidates) {
    return make_error(candidates.error().code, fmt::format("{}: params: {}", spec.file.string(),
                                                           candidates.error().message));
  }
  // Only here, where nothing is left: the check counts the space again under each restriction.
  if (candidates->empty()) {
    if (Status s = check_space_not_empty(spec); !s) return std::unexpected(s.error());
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
    auto reference = make_reference(spec);
    if (!reference) return std::unexpected(reference.error());
    out.reference = std::move(*reference);
  }
  return out;
}

}  // namespace ktune
