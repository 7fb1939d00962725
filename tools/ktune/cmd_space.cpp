// `ktune space SPEC`: the search space of a spec: sizes, what each restriction removes, configs.
// An `op:` spec's space is its op's templates' (cuda.gemm: one per kernel family), shown without
// a GPU; the library candidates the op adds are chosen on the GPU and only named.
#include <fmt/format.h>

#include <chrono>
#include <optional>
#include <set>
#include <string>

#include "cli.h"
#include "core/build_support.h"
#include "ktune/backend/cuda_backend.h"
#include "ktune/backend/opencl_backend.h"
#include "ktune/choice/kernel_template.h"
#if KTUNE_HAVE_CUDA
#include "ktune/ops/cuda_gemm.h"
#endif
#include "ktune/space/search_space.h"
#include "ktune/spec/spec.h"

namespace ktune::cli {
namespace {

struct SpaceFlags {
  std::string spec;
  bool list = false;
  std::string arch;           // cuda kernels: whose limits; empty: the GPU's, else sm_90a's
  std::string opencl_device;  // opencl kernels
};

// The parameters, the product, what each restriction removes, the valid count and, with --list,
// every valid config; `extra` ends the valid-count line. False, with the error printed, when the
// space cannot be counted or enumerated.
// `spec`: the user's space, for which no valid config is an error naming the restriction to
// relax; null for a template's space.
bool print_space(const SpaceFlags& f, const SearchSpace& space, const std::string& indent,
                 const std::string& extra, const Spec* spec = nullptr,
                 const SpecTarget& target = {}) {
  for (const Param& p : space.params()) {
    std::string values;
    for (const ParamValue& v : p.values)
      values += (values.empty() ? "" : ", ") + param_value_str(v);
    fmt::print("{}param {}: [{}]\n", indent, p.name, values);
  }
  const auto t0 = std::chrono::steady_clock::now();
  Result<SearchSpace::Stats> st = space.stats();
  if (!st) {
    fmt::print(stderr, "error: {}: {}\n", f.spec, st.error().message);
    return false;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fmt::print("{}{} configs in the product\n", indent, st->total);
  for (const auto& r : st->restrictions)
    fmt::print("{}  - {:>8} removed by: {}\n", indent, r.removed, r.expression);
  fmt::print("{}{} valid configs{}\n", indent, st->valid, extra);
  fmt::print("{}counted in {:.3f} s ({} restriction evaluations)\n", indent, seconds,
             st->evaluations);
  if (spec && st->valid == 0) {
    // The table above counts first rejections; the error names the restriction to relax.
    Status s = check_space_not_empty(*spec, target);
    fmt::print(stderr, "error: {}\n", s ? "no valid config" : s.error().message);
    return false;
  }
  if (f.list) {
    const auto e0 = std::chrono::steady_clock::now();
    Result<std::vector<Config>> configs = space.enumerate();
    if (!configs) {
      fmt::print(stderr, "error: {}: {}\n", f.spec, configs.error().message);
      return false;
    }
    // Before the list, so that a long list does not bury it; the time excludes printing.
    fmt::print("{}enumerated {} configs in {:.3f} s\n", indent, configs->size(),
               std::chrono::duration<double>(std::chrono::steady_clock::now() - e0).count());
    for (const Config& c : *configs) fmt::print("{}{}\n", indent, c.str());
  }
  return true;
}

// cuda.gemm: every template of the spec's dtype and epilogue on any GPU (the mma one on others
// than sm_90a, the wgmma and TMA ones on sm_90a only), each with its space.
int run_op_space(const SpaceFlags& f, const Spec& spec) {
#if !KTUNE_HAVE_CUDA
  fmt::print(stderr, "error: {}: op: {}: {}\n", f.spec, spec.op.name,
             not_built(BuildFeature::kCuda).message);
  return kExitError;
#else
  // Every template of any GPU: those of other GPUs, then the ones only Hopper (sm_90a) tunes.
  auto templates = cuda_gemm_templates(spec.op.dtype, spec.epilogue, /*hopper=*/false);
  std::set<std::string> on_hopper, elsewhere;
  for (const auto& t : templates) elsewhere.insert(t->desc().name);
  for (auto& t : cuda_gemm_templates(spec.op.dtype, spec.epilogue, /*hopper=*/true)) {
    on_hopper.insert(t->desc().name);
    if (!elsewhere.contains(t->desc().name)) templates.push_back(std::move(t));
  }
  if (templates.empty()) {
    fmt::print(stderr, "error: {}: op {} has no templates for dtype {}\n", f.spec, spec.op.name,
               dtype_name(spec.op.dtype));
    return kExitError;
  }
  fmt::print(
      "op {} ({}): {} template(s); cuBLAS and the cuBLASLt heuristic's algorithms are "
      "added on the GPU\n",
      spec.op.name, dtype_name(spec.op.dtype), templates.size());
  for (const auto& t : templates) {
    const std::string& name = t->desc().name;
    const char* where = !elsewhere.contains(name)   ? " (sm_90a only)"
                        : !on_hopper.contains(name) ? " (not on sm_90a)"
                                                    : "";
    fmt::print("template {}{}:\n", name, where);
    if (!print_space(f, t->space(), "  ", "")) return kExitError;
  }
  return 0;
#endif
}

// The device limits a device kernel's space is counted against: the GPU's (or --arch's, else
// sm_90a's without a GPU), the OpenCL device's; none for c++.
std::optional<DeviceLimits> space_limits(const SpaceFlags& f, const Spec& spec,
                                         const CliContext& ctx) {
  (void)ctx;  // unused in a build without CUDA and OpenCL
  if (spec.kernel.language == "cuda") {
#if KTUNE_HAVE_CUDA
    CudaCompileOptions o;
    o.arch = f.arch;
    auto backend = CudaBackend::create(o, ctx.cache_dir);
    if (!backend && f.arch.empty()) {
      o.arch = "sm_90a";
      backend = CudaBackend::create(o, ctx.cache_dir);
      if (backend) fmt::print("no GPU visible: counted against sm_90a's limits (--arch)\n");
    }
    if (!backend) {
      fmt::print(stderr, "error: {}\n", backend.error().message);
      return std::nullopt;
    }
    return backend->device_limits();
#else
    fmt::print(stderr, "error: {}: {}\n", f.spec, not_built(BuildFeature::kCuda).message);
    return std::nullopt;
#endif
  }
  if (spec.kernel.language == "opencl") {
#if KTUNE_HAVE_OPENCL
    OpenCLOptions o;
    o.device = f.opencl_device;
    auto backend = OpenCLBackend::create(o, ctx.cache_dir);
    if (!backend) {
      fmt::print(stderr, "error: {}\n", backend.error().message);
      return std::nullopt;
    }
    fmt::print("counted against {}'s limits\n", backend->device_name());
    return backend->device_limits();
#else
    fmt::print(stderr, "error: {}: {}\n", f.spec, not_built(BuildFeature::kOpenCL).message);
    return std::nullopt;
#endif
  }
  return DeviceLimits{};
}

// Candidates per problem: each problem's space (its sizes bound), then what is left after the
// device's limits.
int run_problem_spaces(const SpaceFlags& f, const Spec& spec, const CliContext& ctx) {
  std::optional<DeviceLimits> limits = space_limits(f, spec, ctx);
  if (!limits) return kExitError;
  for (const ProblemDecl& problem : spec.problems) {
    const SpecTarget target{*limits, &problem};
    fmt::print("problem {}:\n", problem.name);
    auto space = spec_search_space(spec, target);
    if (!space) {
      fmt::print(stderr, "error: {}\n", space.error().message);
      return kExitError;
    }
    if (!print_space(f, *space, "  ", "", &spec, target)) return kExitError;
    auto choices = make_spec_choices(spec, {}, target);
    if (!choices) {
      fmt::print(stderr, "error: {}\n", choices.error().message);
      return kExitError;
    }
    const std::size_t n = choices->candidates.size();
    fmt::print("  {} candidate(s) to compile", n);
    if (choices->over_limits > 0) {
      fmt::print("; {} config(s) over the device's limits (the first: {})", choices->over_limits,
                 choices->over_limits_example);
    }
    fmt::print("\n");
  }
  return 0;
}

int run_space(const SpaceFlags& f, const CliContext& ctx) {
  auto spec = load_spec(f.spec);
  if (!spec) {
    fmt::print(stderr, "error: {}\n", spec.error().message);
    return kExitError;
  }
  if (!spec->op.name.empty()) return run_op_space(f, *spec);
  if (spec_choices_per_problem(*spec)) return run_problem_spaces(f, *spec, ctx);
  auto space = SearchSpace::create(spec->params, spec->restrictions);
  if (!space) {
    fmt::print(stderr, "error: {}: {}\n", f.spec, space.error().message);
    return kExitError;
  }
  const std::string externs = fmt::format(", plus {} extern choice(s)", spec->externs.size());
  return print_space(f, *space, "", externs, &*spec) ? 0 : kExitError;
}

}  // namespace

void add_space_command(CLI::App& app, CliContext& ctx) {
  auto f = std::make_shared<SpaceFlags>();
  CLI::App* cmd = app.add_subcommand(
      "space",
      "Show a spec's search space: the product size, the configs each restriction "
      "removes, and the valid count (an op: spec: each of its op's templates)");
  cmd->add_option("spec", f->spec, "Spec file (YAML or JSON)")->required();
  cmd->add_flag("--list", f->list, "Print every valid config");
  cmd->add_option("--arch", f->arch,
                  "cuda kernel specs: count against this architecture's limits (sm_80, sm_90a, "
                  "...); default: the GPU's, else sm_90a's");
  cmd->add_option(
      "--opencl-device", f->opencl_device,
      "opencl kernel specs: count against this device's limits ([<platform>:]<device>)");
  cmd->callback([f, &ctx] { ctx.exit_code = run_space(*f, ctx); });
}

}  // namespace ktune::cli
