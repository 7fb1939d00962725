// KernelTemplate and TemplateChoice: a template renders one KernelSource per Config (parameters
// as #defines, optionally mustache first); a choice compiles it through a Backend and loads a
// KernelFn that launches the module.
#include "ktune/choice/kernel_template.h"

#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "backend/include_deps.h"
#include "choice/mustache_render.h"
#include "core/hash.h"

namespace ktune {
namespace {

// Values may be arbitrary tokens ("float", "1.5f"); names keep only greppable characters.
std::string name_part(std::string_view text) {
  std::string out;
  for (char c : text) {
    bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '_' || c == '-' || c == '.';
    out += keep ? c : '_';
  }
  return out;
}

std::string choice_name(const std::string& prefix, const Config& config) {
  std::string name = prefix;
  for (std::size_t i = 0; i < config.names.size(); ++i) {
    name += "_" + config.names[i] + name_part(param_value_str(config.values[i]));
  }
  return name;
}

std::string describe(const KernelParam& p) {
  return fmt::format("{} {}", arg_role_name(p.role), dtype_name(p.dtype));
}

class TemplateChoice final : public Choice {
 public:
  TemplateChoice(std::shared_ptr<const KernelTemplate> tmpl, Config config)
      : tmpl_(std::move(tmpl)),
        config_(std::move(config)),
        name_(choice_name(tmpl_->desc().name, config_)) {}

  Kind kind() const override { return Kind::kTemplate; }
  const std::string& name() const override { return name_; }
  std::string hash_key() const override;
  std::string info() const override { return config_.str(); }
  std::vector<std::pair<std::string, std::string>> params() const override {
    std::vector<std::pair<std::string, std::string>> out;
    for (std::size_t i = 0; i < config_.names.size(); ++i) {
      out.emplace_back(config_.names[i], param_value_str(config_.values[i]));
    }
    return out;
  }
  Status supports(const Problem& problem) const override;
  Status compile(const Backend& backend) override;
  double compile_s() const override { return compile_s_; }
  Result<KernelFn> load(const Backend& backend, const Problem& problem) override;
  const Artifact* artifact() const override { return artifact_ ? &*artifact_ : nullptr; }
  Result<LaunchSpec> launch_spec(const Problem& problem) const override;

 private:
  // The steps of a user's device kernel: `first` (kind and artifact set) with the rest in `then`.
  Result<LaunchSpec> step_launch_spec(LaunchSpec first, const Problem& problem) const;

  std::shared_ptr<const KernelTemplate> tmpl_;
  Config config_;
  std::string name_;
  std::optional<Artifact> artifact_;
  DeviceKind compiled_for_ = DeviceKind::kCpu;
  double compile_s_ = 0;
};

std::string TemplateChoice::hash_key() const {
  Hasher h;
  h.add("ktune.template.v2").add(tmpl_->digest()).add(config_.str());
  return h.hex();
}

Status TemplateChoice::supports(const Problem& problem) const {
  const Signature& want = tmpl_->desc().signature;
  Signature got = problem.signature();
  if (want.size() != got.size()) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("{}: argument count; expected {} ({}), got {}", name_,
                                  want.size(), tmpl_->desc().entry, got.size()));
  }
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (want[i].role != got[i].role || want[i].dtype != got[i].dtype) {
      return make_error(
          ErrorCode::kInvalidArgument,
          fmt::format("{}: argument {} ('{}'); expected {}, got {} ('{}')", name_, i, want[i].name,
                      describe(want[i]), describe(got[i]), got[i].name));
    }
  }
  if (tmpl_->desc().supports) return tmpl_->desc().supports(config_, problem);
  return {};
}

Result<LaunchSpec> TemplateChoice::launch_spec(const Problem& problem) const {
  if (!artifact_) {
    return make_error(ErrorCode::kInternal, fmt::format("{}: launch_spec before compile", name_));
  }
  LaunchSpec spec;
  spec.artifact = artifact_->path;
  spec.entry = tmpl_->desc().entry;
  switch (compiled_for_) {
    case DeviceKind::kCpu:
      spec.kind = LaunchKind::kCpuSharedObject;
      return spec;
    case DeviceKind::kCuda:
      spec.kind = LaunchKind::kCudaCubin;
      break;
    case DeviceKind::kOpenCL:
      spec.kind = LaunchKind::kOpenCLProgram;
      break;
  }
  if (tmpl_->desc().step_launch) return step_launch_spec(spec, problem);
  if (!tmpl_->desc().launch) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("{}: a device template needs a launch geometry hook", name_));
  }
  Result<LaunchGeometry> g = tmpl_->desc().launch(config_, problem);
  if (!g) return std::unexpected(g.error());
  spec.grid = g->grid;
  spec.block = g->block;
  spec.shared_bytes = g->shared_bytes;
  spec.tensor_maps = std::move(g->tensor_maps);
  spec.workspace_bytes = g->workspace_bytes;
  return spec;
}

Result<LaunchSpec> TemplateChoice::step_launch_spec(LaunchSpec first,
                                                    const Problem& problem) const {
  const KernelTemplateDesc& d = tmpl_->desc();
  Result<std::vector<LaunchGeometry>> steps = d.step_launch(config_, problem);
  if (!steps) return std::unexpected(steps.error());
  std::vector<std::string> entries =
      d.lower_entries ? artifact_->entry_names : d.step_entries(config_);
  if (entries.size() != steps->size() || entries.empty()) {
    return make_error(ErrorCode::kInternal, fmt::format("{}: {} entries for {} launch steps", name_,
                                                        entries.size(), steps->size()));
  }
  std::vector<LaunchSpec> all;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    LaunchSpec step;
    step.kind = first.kind;
    step.artifact = first.artifact;
    step.entry = std::move(entries[i]);
    step.grid = (*steps)[i].grid;
    step.block = (*steps)[i].block;
    step.shared_bytes = (*steps)[i].shared_bytes;
    all.push_back(std::move(step));
  }
  LaunchSpec out = std::move(all.front());
  for (std::size_t i = 1; i < all.size(); ++i) out.then.push_back(std::move(all[i]));
  return out;
}

Status TemplateChoice::compile(const Backend& backend) {
  Result<KernelSource> source = tmpl_->render(config_);
  if (!source) return std::unexpected(source.error());
  Result<Artifact> artifact = backend.compile(*source);
  if (!artifact) {
    const std::string& note = tmpl_->desc().compile_error_note;
    if (note.empty()) return std::unexpected(artifact.error());
    return make_error(artifact.error().code, artifact.error().message + "\nnote: " + note);
  }
  compile_s_ = artifact->from_cache ? 0 : artifact->compile_s;
  artifact_ = std::move(*artifact);
  compiled_for_ = backend.kind();
  return {};
}

Result<KernelFn> TemplateChoice::load(const Backend& backend, const Problem& problem) {
  if (Status s = supports(problem); !s) return std::unexpected(s.error());
  if (!artifact_) {
    if (Status s = compile(backend); !s) return std::unexpected(s.error());
  }
  Result<std::unique_ptr<Module>> module = backend.load(*artifact_);
  if (!module) return std::unexpected(module.error());
  std::shared_ptr<Module> shared = std::move(*module);  // KernelFn must be copyable
  return KernelFn([shared](void* const* args) { return shared->launch(args); });
}

}  // namespace

KernelTemplate::KernelTemplate(KernelTemplateDesc desc, SearchSpace space)
    : desc_(std::move(desc)), space_(std::move(space)) {
  // Hashed once: a tuning-cache lookup hashes every choice's key, and the source is most of it.
  Hasher h;
  h.add("ktune.template.source.v1").add(desc_.source).add(desc_.entry);
  h.add(static_cast<std::int64_t>(desc_.signature.size()));
  for (const KernelParam& p : desc_.signature) {
    h.add(p.name).add(arg_role_name(p.role)).add(dtype_name(p.dtype));
  }
  h.add(static_cast<std::int64_t>(desc_.mustache ? 1 : 0));
  if (!desc_.defines) h.add("no-defines");  // only then, so that other digests stay as they were
  h.add(static_cast<std::int64_t>(desc_.extra_flags.size()));
  for (const std::string& f : desc_.extra_flags) h.add(f);
  // Only when there are headers, so that the records of a self-contained kernel keep their keys.
  std::vector<std::string> flags = source_include_flags(desc_.source_path);
  flags.insert(flags.end(), desc_.extra_flags.begin(), desc_.extra_flags.end());
  flags.insert(flags.end(), desc_.header_search_flags.begin(), desc_.header_search_flags.end());
  if (std::string deps = include_deps_digest(desc_.source, flags); !deps.empty()) {
    h.add(deps);
  }
  // Only for a user's device kernel, so that the other templates keep their keys.
  if (desc_.step_launch) {
    h.add("launch").add(desc_.launch_text).add(static_cast<std::int64_t>(desc_.lower_entries));
  }
  digest_ = h.hex();
}

std::shared_ptr<KernelTemplate> KernelTemplate::create(KernelTemplateDesc desc, SearchSpace space) {
  return std::shared_ptr<KernelTemplate>(new KernelTemplate(std::move(desc), std::move(space)));
}

Result<KernelSource> KernelTemplate::render(const Config& config) const {
  KernelSource source;
  source.name = choice_name(desc_.name, config);
  source.entry = desc_.entry;
  source.signature = desc_.signature;
  source.extra_flags = desc_.extra_flags;
  source.source_path = desc_.source_path;
  if (desc_.defines) {
    for (std::size_t i = 0; i < config.names.size(); ++i) {
      source.defines.emplace_back(config.names[i], param_value_str(config.values[i]));
    }
  }
  if (desc_.step_entries) {
    std::vector<std::string> entries = desc_.step_entries(config);
    if (!entries.empty()) source.entry = entries.front();
    if (desc_.lower_entries) source.name_expressions = std::move(entries);
  }
  if (desc_.mustache) {
    Result<std::string> code =
        render_mustache_keeping_lines(source.name, desc_.source, source.defines);
    if (!code) return std::unexpected(code.error());
    source.code = std::move(*code);
  } else {
    source.code = desc_.source;
  }
  return source;
}

Result<std::vector<ChoicePtr>> KernelTemplate::choices() const {
  Result<std::vector<Config>> configs = space_.enumerate();
  if (!configs) return std::unexpected(configs.error());
  std::vector<ChoicePtr> out;
  for (Config& config : *configs) out.push_back(choice(std::move(config)));
  return out;
}

ChoicePtr KernelTemplate::choice(Config config) const {
  return std::make_unique<TemplateChoice>(shared_from_this(), std::move(config));
}

}  // namespace ktune
