// Private to the spec module: the parsers of a spec's sections, each validating what it reads.
// parse_spec (spec_parse.cpp) calls them in an order where every check has what it needs:
// problems before args (size names), args before externs (argument names).
#pragma once

#include <filesystem>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ktune/backend/backend.h"
#include "ktune/core/launch_spec.h"
#include "ktune/search/strategy.h"
#include "ktune/spec/spec.h"
#include "spec/spec_reader.h"

namespace ktune::spec_detail {

// kernel: and reference.kernel:. The source must exist relative to `dir` (kNotFound). The
// language defaults to `language` (the kernel's, for a reference kernel); the entry is checked,
// and launch: read, by parse_launch once the params are known.
[[nodiscard]] Status parse_kernel(const Reader& r, const YAML::Node& node, std::string_view path,
                                  const std::filesystem::path& dir, KernelDecl& out,
                                  std::string_view language = "c++");
// kernel.launch and kernel.size_defines (spec_launch.cpp), and the entry against the language
// and the params ({{P}}): after parse_space.
[[nodiscard]] Status parse_launch(const Reader& r, const YAML::Node& kernel_node,
                                  const std::string& path, const Spec& spec, KernelDecl& kernel);
// problems: also fills each ProblemDecl's default name; `sizes` receives the bound names.
[[nodiscard]] Status parse_problems(const Reader& r, const YAML::Node& node,
                                    std::vector<ProblemDecl>& out, std::set<std::string>& sizes);
// args: every expression may name only `sizes`; at least one output.
[[nodiscard]] Status parse_args(const Reader& r, const YAML::Node& node,
                                const std::set<std::string>& sizes, std::vector<ArgDecl>& out);
// One expression's syntax, naming only `sizes`; its text into `out`.
[[nodiscard]] Status check_expr(const Reader& r, const YAML::Node& node, const std::string& path,
                                const std::set<std::string>& sizes, std::string& out);
// args[i].init: (spec_init.cpp): the kind and its bound expressions into `out`.
[[nodiscard]] Status parse_init(const Reader& r, const YAML::Node& node, const std::string& path,
                                const std::set<std::string>& sizes, ArgDecl& out);
// A tolerance: mapping at `path` (the spec's, or an output's) over `t` (the dtype's default):
// rtol, atol, max_rel_l2 and rms_atol, each a number >= 0 (spec_output_check.cpp).
[[nodiscard]] Status parse_tolerance_fields(const Reader& r, const YAML::Node& node,
                                            const std::string& path, Tolerance& t);
// args[i].tolerance: and args[i].nan_ok: (spec_output_check.cpp), on an out or inout buffer only;
// `out`'s role is already parsed.
[[nodiscard]] Status parse_output_check(const Reader& r, const YAML::Node& node,
                                        const std::string& path, ArgDecl& out);
// params: and restrictions: (either node may be undefined), checked with SearchSpace::create.
[[nodiscard]] Status parse_space(const Reader& r, const YAML::Node& params,
                                 const YAML::Node& restrictions, Spec& spec);
// search: (spec_search.cpp): strategy, max_evals, time_limit_s and seed, each range-checked.
[[nodiscard]] Status parse_search(const Reader& r, const YAML::Node& node, SearchOptions& out);
// externs: each built once with make_extern_choice; bound names must be arguments, and the kind
// one that goes with the kernel's language (extern_kind_language).
[[nodiscard]] Status parse_externs(const Reader& r, const YAML::Node& node,
                                   const std::vector<ArgDecl>& args, std::string_view language,
                                   std::vector<ExternDesc>& out);

// epilogue: a string ("bias,relu") or a list of steps; the spec must be GEMM-shaped (one output,
// 2-D, f32), its operands must not clash with args, and the reference, if any, an extern. Fills
// spec.epilogue and spec.output.
[[nodiscard]] Status parse_epilogue(const Reader& r, const YAML::Node& node, Spec& spec);

// The epilogue: text alone ("bias,relu" or [bias, relu]), with no check against args: what
// parse_epilogue and the op: form share.
[[nodiscard]] Result<Epilogue> read_epilogue(const Reader& r, const YAML::Node& node);
// metrics: a map of name -> expression over `sizes` and time_s (spec_metrics.cpp).
[[nodiscard]] Status parse_metrics(const Reader& r, const YAML::Node& node,
                                   const std::set<std::string>& sizes,
                                   std::vector<MetricDecl>& out);
// seed: an integer >= 0.
[[nodiscard]] Status parse_seed(const Reader& r, const YAML::Node& node, Spec& spec);
// The whole top level of a spec that names a built-in op (root["op"] is defined) instead of a
// kernel: the op's keys only, a known op, one of its dtypes, problems binding its sizes.
[[nodiscard]] Status parse_op_spec(const Reader& r, const YAML::Node& root, Spec& spec);

// make_problem's and make_spec_choices's error for an op: spec ("problems", "candidates").
[[nodiscard]] std::unexpected<Error> op_spec_error(const Spec& spec, std::string_view what);

// A CUDA entry: a (qualified) function name, then optionally template arguments in balanced
// angle brackets; no characters that could end the name expression NVRTC compiles. The error
// text says what is wrong.
[[nodiscard]] std::expected<void, std::string> check_cuda_entry(std::string_view entry);
// A device kernel's entry with {{P}} replaced by the config's value of P.
[[nodiscard]] std::string render_entry(std::string_view entry, const Config& config);
// The geometry of each launch step of `kernel` for one config on one problem; OpenCL's grid is
// turned into the global size (work-groups x work-items). Errors name the spec's line, the
// expression, the problem and the config (a fractional or zero grid, say).
[[nodiscard]] Result<std::vector<LaunchGeometry>> eval_launch(const Spec& spec,
                                                              const KernelDecl& kernel,
                                                              const ProblemDecl& problem,
                                                              const Config& config);
// Why `steps` cannot run on a device with `limits` (threads or shared memory per block, CUDA's
// per-dimension bounds), or nullopt.
[[nodiscard]] std::optional<std::string> over_limits(const std::vector<LaunchGeometry>& steps,
                                                     const DeviceLimits& limits, bool opencl);

// "M=32,N=4096,K=4096".
[[nodiscard]] std::string default_problem_name(const ProblemDecl& decl);

}  // namespace ktune::spec_detail
