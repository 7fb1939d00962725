// Spec: a tuning job described in YAML or JSON (one schema, docs/spec.md), and what it becomes:
// Problems, a KernelTemplate, extern choices and a reference.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ktune/backend/backend.h"
#include "ktune/choice/choice.h"
#include "ktune/choice/extern_choice.h"
#include "ktune/choice/kernel_template.h"
#include "ktune/core/epilogue.h"
#include "ktune/core/problem.h"
#include "ktune/search/strategy.h"
#include "ktune/space/search_space.h"
#include "ktune/tensor/compare.h"

namespace ktune {

// One launch of a device kernel (kernel.launch): grid in blocks (OpenCL: work-groups), block in
// threads (work-items), dynamic shared memory in bytes, each an expression over problem sizes
// and integer parameters (muparser, with ceil_div, min, max, floor, ceil).
struct LaunchDecl {
  std::string entry;  // empty: the kernel's entry; {{P}} is replaced by parameter P's value
  std::vector<std::string> grid;   // 1-3 expressions
  std::vector<std::string> block;  // 1-3 expressions; empty: [1]
  std::string shared_bytes;        // empty: 0
  int line = 0;
};

struct SpecTarget;

struct KernelDecl {
  std::filesystem::path source;  // resolved against the spec's folder
  std::string entry;  // c++/opencl: an identifier; cuda: a name expression ("scan<{{B}}, 4>")
  std::string language = "c++";  // "c++", "cuda" (NVRTC) or "opencl" (OpenCL C)
  bool mustache = false;         // render: mustache
  // render: none: no #define per parameter (the source as written; cuda and opencl only, whose
  // parameters reach the kernel through the entry's {{P}} and the launch expressions), so that a
  // parameter named like a name of an included header (CUB's `B`) leaves the header alone.
  bool defines = true;
  std::vector<std::string> flags;
  // Problem sizes also passed to the source as #defines (compile-time constants): the
  // candidates are then built per problem.
  std::vector<std::string> size_defines;
  std::vector<LaunchDecl> launch;  // cuda and opencl: the steps, in order; c++: empty
  int line = 0;
};

struct ArgDecl {
  std::string name;
  ArgRole role = ArgRole::kIn;
  DType dtype = DType::kF32;
  std::vector<std::string> shape;    // expressions over problem sizes (buffers)
  std::vector<std::string> strides;  // optional; empty: row-major
  std::string offset;                // optional expression; empty: 0
  std::string value;                 // expression (scalars)
  // init: (input buffers): the kind, and for uniform/normal/int its two bounds as expressions
  // over problem sizes (low/high or mean/std), evaluated by make_problem.
  InitKind init = InitKind::kRandom;
  std::string init_a, init_b;
  // init: {npy: path}: the file resolved against the spec's folder (absolute when the spec's
  // path is); make_problem checks it against each problem's shape and hashes it.
  std::filesystem::path init_path;
  // Outputs only: tolerance: (keys not given from the arg's dtype's default) and nan_ok:.
  std::optional<Tolerance> tolerance;
  bool nan_ok = false;
  int line = 0;
};

struct ProblemDecl {
  std::string name;  // optional in the file; defaults to "M=32,N=4096,K=4096" (binding order)
  std::vector<std::pair<std::string, std::int64_t>> sizes;
  int line = 0;
};

struct ReferenceDecl {
  enum class Kind { kNone, kKernel, kExtern, kExpected };
  Kind kind = Kind::kNone;
  // kKernel: same signature as the template; in the kernel's language, or c++ beside a device
  // kernel (a host reference: run on the CPU, on host copies of the same data).
  KernelDecl kernel;
  std::string extern_name;  // kExtern: the name of an entry in `externs`
  // kExpected: each output argument's expected values, an .npy file (resolved like init's).
  std::vector<std::pair<std::string, std::filesystem::path>> expected;
  int line = 0;
};

// metrics: one entry, a name ("GFLOP/s") and an expression over the problem's sizes and time_s
// (a candidate's median in seconds).
struct MetricDecl {
  std::string name;
  std::string expr;
  int line = 0;
};

// op: a built-in operator named instead of a kernel (docs/spec.md, "op"). The op brings its own
// candidates and reference, so kernel, args, params, restrictions, externs and reference are
// absent; each problem binds the op's sizes (cuda.gemm: M, N, K, each >= 1).
struct OpDecl {
  std::string name;  // "cuda.gemm"; empty: the spec has a kernel
  DType dtype = DType::kBF16;
  int line = 0;
};

// The ops that op: may name ("cuda.gemm"), and the dtypes that dtype: may give each.
[[nodiscard]] std::vector<std::string> spec_ops();
[[nodiscard]] std::vector<DType> spec_op_dtypes(std::string_view op);

struct Spec {
  std::filesystem::path file;
  std::string name;
  OpDecl op;  // with a name: every field below but problems, epilogue and seed is unused
  KernelDecl kernel;
  std::vector<ArgDecl> args;
  std::vector<ProblemDecl> problems;
  std::vector<Param> params;
  std::vector<std::string> restrictions;
  std::vector<int> restriction_lines;  // 1-based line of each restriction; 0: no position
  ReferenceDecl reference;
  std::optional<Tolerance> tolerance;  // empty: default_tolerance() of each output's dtype
  std::vector<ExternDesc> externs;
  std::uint64_t seed = 0;
  // epilogue: steps fused after a GEMM (empty: none). With one, `output` is the index in args of
  // the GEMM's C (the one output, 2-D [M, N], f32); each problem gets the epilogue's operands
  // appended after the declared args, and the template's source gets the hook's #defines.
  Epilogue epilogue;
  std::size_t output = 0;
  std::vector<MetricDecl> metrics;  // in the file's order; empty: none
  // search: which candidates are compiled and measured (the CLI's --strategy, --max-evals,
  // --time-limit-s and --search-seed override each field). Unset: auto, no budget.
  SearchOptions search{};
};

// Reads and validates a spec (.yaml, .yml or .json; the content decides, JSON being YAML). Every
// error names the file, line and column, the field, and what was expected, e.g.
//   "spec.yaml:12:12: args[2].dtype: unknown dtype 'f33'; expected one of f16, bf16, ...".
// Validation covers the search space (restrictions parse and name known parameters), the
// kernel source file's existence, shape expressions naming only problem sizes, and externs.
[[nodiscard]] Result<Spec> load_spec(const std::filesystem::path& file);
[[nodiscard]] Result<Spec> parse_spec(std::string_view text, const std::filesystem::path& file);

// Fails (kInvalidArgument) when the restrictions leave no config of the spec's params, naming
// the restriction that removed the last ones with its file:line:
//   "spec.yaml:27: restrictions[3] (`PACK_B == 0 || LOOP_ORDER == 0`) removed the last 12 configs
//   ...". `ktune space` and `ktune tune` (through make_spec_choices) report it.
[[nodiscard]] Status check_space_not_empty(const Spec& spec, const SpecTarget& target);

// The size a problem binds (`name`), or nullopt.
[[nodiscard]] std::optional<std::int64_t> problem_size(const ProblemDecl& decl,
                                                       std::string_view name);

// The declared args, then the epilogue's operands (in the output's dtype).
[[nodiscard]] Signature spec_signature(const Spec& spec);
// Evaluates shapes, strides, offsets and scalar values for one problem. With an epilogue, the
// operands follow the declared args (shaped from the output's evaluated [M, N]) and the
// problem's name ends in ",<epilogue name>" ("M=32,N=4096,K=4096,bias+relu"). An error for an
// op: spec, whose problems the op builds (ktune/ops/cuda_gemm.h for cuda.gemm).
[[nodiscard]] Result<Problem> make_problem(const Spec& spec, const ProblemDecl& decl);

// A metric of one problem: its value for a candidate's median time in seconds, the problem's
// sizes bound; NaN where the expression does not evaluate to a finite number (a size the
// problem does not bind, a division by zero).
struct SpecMetric {
  std::string name;
  std::function<double(double time_s)> value;
};
// The spec's metrics for `decl`, in order (the Selector's SelectorOptions::metrics).
[[nodiscard]] std::vector<SpecMetric> spec_metrics(const Spec& spec, const ProblemDecl& decl);

// What a spec tunes: candidates (template configs, then externs) and the reference (null when
// the spec names none: then candidates are checked only for NaN, unwritten outputs, redzones and
// modified inputs). With an epilogue, every template config has it fused (the hook's #defines in
// front of its source), each extern becomes "<name>+epilogue" (the library call, then a compiled
// pass over C), and the reference is the extern followed by Epilogue::apply on the host.
struct SpecChoices {
  std::shared_ptr<KernelTemplate> kernel_template;
  std::vector<ChoicePtr> candidates;
  ChoicePtr reference;
  // Configs left out because their launch does not fit the device (threads or shared memory per
  // block over SpecTarget::limits), and the first one's reason.
  std::uint64_t over_limits = 0;
  std::string over_limits_example;
};

// What the candidates are built for. Device kernels (cuda, opencl) and kernels with
// size_defines are built per problem (their launch or source depends on its sizes): `problem`
// is then required.
struct SpecTarget {
  DeviceLimits limits;                   // Backend::device_limits() of the compiling backend
  const ProblemDecl* problem = nullptr;  // one of the spec's problems
  // The CPU backend that builds a device kernel's host reference (reference.kernel with
  // language c++); required then, unused otherwise.
  std::shared_ptr<const Backend> host_backend{};
};

// True when the spec's reference is a c++ kernel beside a cuda or opencl kernel: the caller
// passes a CPU backend in SpecTarget::host_backend.
[[nodiscard]] bool spec_has_host_reference(const Spec& spec);

// True when the spec's candidates depend on the problem (SpecTarget::problem required): a
// device kernel, size_defines, or restrictions naming problem sizes.
[[nodiscard]] bool spec_choices_per_problem(const Spec& spec);

// The names a spec's restrictions see beside its params for a target: the problem's sizes (with
// a problem) and the device's limits.
[[nodiscard]] SpaceConstants spec_space_constants(const Spec& spec, const SpecTarget& target);
// The spec's search space for a target (SearchSpace::create with spec_space_constants).
[[nodiscard]] Result<SearchSpace> spec_search_space(const Spec& spec, const SpecTarget& target);
// The device-limit names a restriction of a device kernel may use (docs/spec.md); the values
// come from the backend (Backend::device_limits).
[[nodiscard]] std::vector<std::string> device_limit_names(std::string_view language);
// Reads the kernel (and reference) sources and builds the choices. Reference externs are built a
// second time so that the reference is independent of the candidate with the same name. An error
// for an op: spec, whose candidates are the op's. `backend_flags`: the flags of the backend that
// compiles them (KernelTemplateDesc::header_search_flags).
[[nodiscard]] Result<SpecChoices> make_spec_choices(const Spec& spec,
                                                    std::span<const std::string> backend_flags = {},
                                                    const SpecTarget& target = {});

}  // namespace ktune
