// `ktune space SPEC`: the search space of a spec: sizes, what each restriction removes, configs.
#include <fmt/format.h>

#include <chrono>

#include "cli.h"
#include "ktune/space/search_space.h"
#include "ktune/spec/spec.h"

namespace ktune::cli {
namespace {

struct SpaceFlags {
  std::string spec;
  bool list = false;
};

int run_space(const SpaceFlags& f) {
  auto spec = load_spec(f.spec);
  if (!spec) {
    fmt::print(stderr, "error: {}\n", spec.error().message);
    return kExitError;
  }
  auto space = SearchSpace::create(spec->params, spec->restrictions);
  if (!space) {
    fmt::print(stderr, "error: {}: {}\n", f.spec, space.error().message);
    return kExitError;
  }
  for (const Param& p : space->params()) {
    std::string values;
    for (const ParamValue& v : p.values)
      values += (values.empty() ? "" : ", ") + param_value_str(v);
    fmt::print("param {}: [{}]\n", p.name, values);
  }
  const auto t0 = std::chrono::steady_clock::now();
  Result<SearchSpace::Stats> st = space->stats();
  if (!st) {
    fmt::print(stderr, "error: {}: {}\n", f.spec, st.error().message);
    return kExitError;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fmt::print("{} configs in the product\n", st->total);
  for (const auto& r : st->restrictions)
    fmt::print("  - {:>8} removed by: {}\n", r.removed, r.expression);
  fmt::print("{} valid configs, plus {} extern choice(s)\n", st->valid, spec->externs.size());
  fmt::print("counted in {:.3f} s ({} restriction evaluations)\n", seconds, st->evaluations);
  if (st->valid == 0) {
    // The table above counts first rejections; the error names the restriction to relax.
    Status s = check_space_not_empty(*spec);
    fmt::print(stderr, "error: {}\n", s ? "no valid config" : s.error().message);
    return kExitError;
  }
  if (f.list) {
    Result<std::vector<Config>> configs = space->enumerate();
    if (!configs) {
      fmt::print(stderr, "error: {}: {}\n", f.spec, configs.error().message);
      return kExitError;
    }
    for (const Config& c : *configs) fmt::print("{}\n", c.str());
  }
  return 0;
}

}  // namespace

void add_space_command(CLI::App& app, CliContext& ctx) {
  auto f = std::make_shared<SpaceFlags>();
  CLI::App* cmd = app.add_subcommand(
      "space",
      "Show a spec's search space: the product size, the configs each restriction "
      "removes, and the valid count");
  cmd->add_option("spec", f->spec, "Spec file (YAML or JSON)")->required();
  cmd->add_flag("--list", f->list, "Print every valid config");
  cmd->callback([f, &ctx] { ctx.exit_code = run_space(*f); });
}

}  // namespace ktune::cli
