// The built-in OpenCL problems: GEMM and row sum, their spaces, templates, hooks and references.
#include "ktune/ops/opencl_ops.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace ktune {

// Defined in the file ktune_embed_sources (cmake/embed_sources.cmake) generates.
std::string_view opencl_gemm_source();
std::string_view opencl_row_reduce_source();

namespace {

constexpr std::int64_t kMaxInt32 = std::numeric_limits<std::int32_t>::max();
// The local memory every OpenCL 1.2 device offers at least.
constexpr std::int64_t kMinLocalBytes = std::int64_t{32} * 1024;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
std::uint64_t at_least_one(std::int64_t v) {
  return static_cast<std::uint64_t>(std::max<std::int64_t>(v, 1));
}

std::int64_t param(const Config& config, std::string_view name) {
  const ParamValue* v = config.find(name);
  KTUNE_CHECK(v != nullptr && std::holds_alternative<std::int64_t>(*v));
  return std::get<std::int64_t>(*v);
}

Param ints(std::string name, const std::vector<std::int64_t>& values) {
  Param p{std::move(name), {}};
  for (std::int64_t v : values) p.values.emplace_back(v);
  return p;
}

SearchSpace make_space(std::vector<Param> params, std::vector<std::string> restrictions) {
  Result<SearchSpace> space = SearchSpace::create(std::move(params), std::move(restrictions));
  KTUNE_CHECK(space.has_value());
  return std::move(*space);
}

// Integer scalars args[first..first+count) within [0, 2^31), with `after` more arguments
// following them.
Result<std::vector<std::int64_t>> dims_of(std::string_view where, const Problem& p,
                                          std::size_t first, std::size_t count,
                                          std::size_t after = 0) {
  std::vector<std::int64_t> dims;
  if (p.args.size() != first + count + after) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("{}: argument count; expected {}, got {}", where,
                                  first + count + after, p.args.size()));
  }
  for (std::size_t i = first; i < first + count; ++i) {
    const auto* v = std::get_if<std::int64_t>(&p.args[i].scalar);
    if (v == nullptr || *v < 0 || *v > kMaxInt32) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("{}: scalar {}; expected an integer in [0, 2^31)", where,
                                    p.args[i].param.name));
    }
    dims.push_back(*v);
  }
  return dims;
}

Status check_tensor(std::string_view where, const ProblemArg& a, std::vector<std::int64_t> want) {
  const TensorSpec& t = a.tensor;
  const TensorSpec row_major = TensorSpec::contiguous(t.dtype, want);
  if (t.sizes != want || t.strides != row_major.strides || t.offset != 0) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("{}: tensor {}; expected contiguous row-major {} at offset 0, "
                                  "got {}",
                                  where, a.param.name, fmt::join(want, "x"), t.key()));
  }
  return {};
}

std::string gemm_name(std::string_view base, const Epilogue& epilogue) {
  return epilogue.empty() ? std::string(base) : fmt::format("{}_{}", base, epilogue.tag());
}

// gemm.cl with, for a fused epilogue, the hook's #defines in front; the #line keeps the build
// log's file and line numbers those of kernels/opencl/gemm.cl.
std::string gemm_source(const Epilogue& epilogue) {
  const std::string file =
      "#line 1 \"kernels/opencl/gemm.cl\"\n" + std::string(opencl_gemm_source());
  if (epilogue.empty()) return file;
  return epilogue.render_defines("__global const float*", EpilogueLanguage::kOpenCL) + file;
}

// M, N, K; C, A, B contiguous row-major of those sizes, and the epilogue's operands [N], [M] or
// [M, N] as Epilogue::problem_args makes them.
Result<std::vector<std::int64_t>> gemm_dims(std::string_view where, const Problem& p,
                                            const Epilogue& epilogue) {
  const std::vector<EpilogueOperand> operands = epilogue.operands();
  auto d = dims_of(where, p, 3, 3, operands.size());
  if (!d) return d;
  const std::int64_t m = (*d)[0], n = (*d)[1], k = (*d)[2];
  if (Status s = check_tensor(where, p.args[0], {m, n}); !s) return std::unexpected(s.error());
  if (Status s = check_tensor(where, p.args[1], {m, k}); !s) return std::unexpected(s.error());
  if (Status s = check_tensor(where, p.args[2], {k, n}); !s) return std::unexpected(s.error());
  for (std::size_t i = 0; i < operands.size(); ++i) {
    const EpilogueOperandShape shape = operands[i].shape;
    const std::vector<std::int64_t> want = shape == EpilogueOperandShape::kColumns ? std::vector{n}
                                           : shape == EpilogueOperandShape::kRows
                                               ? std::vector{m}
                                               : std::vector{m, n};
    if (Status s = check_tensor(where, p.args[6 + i], want); !s) {
      return std::unexpected(s.error());
    }
  }
  return d;
}

Status gemm_supports(const std::string& where, const Config& c, const Problem& p,
                     const Epilogue& epilogue) {
  auto d = gemm_dims(where, p, epilogue);
  if (!d) return std::unexpected(d.error());
  if ((*d)[1] % param(c, "VWN") != 0) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("{}: N; expected a multiple of VWN={}, got {}", where,
                                  param(c, "VWN"), (*d)[1]));
  }
  const std::int64_t local =
      4 * param(c, "KWG") * (param(c, "SA") * param(c, "MWG") + param(c, "SB") * param(c, "NWG"));
  if (local > kMinLocalBytes) {
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("{}: local memory; expected at most {} bytes, got {}", where,
                                  kMinLocalBytes, local));
  }
  return {};
}

Result<LaunchGeometry> gemm_launch(const std::string& where, const Config& c, const Problem& p,
                                   const Epilogue& epilogue) {
  auto d = gemm_dims(where, p, epilogue);
  if (!d) return std::unexpected(d.error());
  const std::int64_t mdimc = param(c, "MDIMC"), ndimc = param(c, "NDIMC");
  LaunchGeometry g;
  g.grid = {at_least_one(ceil_div((*d)[0], param(c, "MWG"))) * mdimc,
            at_least_one(ceil_div((*d)[1], param(c, "NWG"))) * ndimc, 1};
  g.block = {static_cast<std::uint64_t>(mdimc), static_cast<std::uint64_t>(ndimc), 1};
  return g;
}

Signature row_sum_signature() {
  return {{"out", ArgRole::kOut, DType::kF32},
          {"X", ArgRole::kIn, DType::kF32},
          {"rows", ArgRole::kScalar, DType::kI32},
          {"cols", ArgRole::kScalar, DType::kI32}};
}

Result<std::vector<std::int64_t>> row_sum_dims(std::string_view where, const Problem& p) {
  auto d = dims_of(where, p, 2, 2);
  if (!d) return d;
  if (Status s = check_tensor(where, p.args[0], {(*d)[0]}); !s) return std::unexpected(s.error());
  if (Status s = check_tensor(where, p.args[1], {(*d)[0], (*d)[1]}); !s) {
    return std::unexpected(s.error());
  }
  return d;
}

}  // namespace

Problem opencl_gemm_problem(std::int64_t m, std::int64_t n, std::int64_t k, int device_index,
                            const Epilogue& epilogue) {
  const Device device{DeviceKind::kOpenCL, device_index};
  const Signature sig = gemm_signature(DType::kF32, epilogue);
  Problem p;
  p.op = "gemm";
  p.name = fmt::format("M={},N={},K={},f32", m, n, k);
  if (!epilogue.empty()) p.name += "," + epilogue.name();
  p.args = {
      {sig[0], TensorSpec::contiguous(DType::kF32, {m, n}, device), {}},
      {sig[1], TensorSpec::contiguous(DType::kF32, {m, k}, device), {}},
      {sig[2], TensorSpec::contiguous(DType::kF32, {k, n}, device), {}},
      {sig[3], {}, m},
      {sig[4], {}, n},
      {sig[5], {}, k},
  };
  for (ProblemArg& a : epilogue.problem_args(DType::kF32, m, n, device)) {
    p.args.push_back(std::move(a));
  }
  return p;
}

SearchSpace opencl_gemm_space() {
  return make_space(
      {ints("MWG", {32, 64}), ints("NWG", {32, 64}), ints("KWG", {16, 32}), ints("MDIMC", {8, 16}),
       ints("NDIMC", {8, 16}), ints("VWM", {1, 4}), ints("VWN", {1, 4}), ints("SA", {0, 1}),
       ints("SB", {0, 1})},
      {
          // Each work-item's tile is a whole number of vectors.
          "MWG % (MDIMC * VWM) == 0",
          "NWG % (NDIMC * VWN) == 0",
          // Square work-groups, one vector width, A and B cached alike: the shapes that matter.
          "MDIMC == NDIMC",
          "VWM == VWN",
          "SA == SB",
      });
}

std::shared_ptr<KernelTemplate> opencl_gemm_template(SearchSpace space, const Epilogue& epilogue) {
  const std::string name = gemm_name("opencl_gemm", epilogue);
  KernelTemplateDesc desc;
  desc.name = name;
  desc.source = gemm_source(epilogue);
  desc.entry = "gemm";
  desc.signature = gemm_signature(DType::kF32, epilogue);
  desc.launch = [name, epilogue](const Config& c, const Problem& p) {
    return gemm_launch(name, c, p, epilogue);
  };
  desc.supports = [name, epilogue](const Config& c, const Problem& p) {
    return gemm_supports(name, c, p, epilogue);
  };
  return KernelTemplate::create(std::move(desc), std::move(space));
}

ChoicePtr opencl_gemm_reference(const Epilogue& epilogue) {
  const std::string name = gemm_name("opencl_gemm_naive", epilogue);
  KernelTemplateDesc desc;
  desc.name = name;
  desc.source = gemm_source(epilogue);
  desc.entry = "gemm_naive";
  desc.signature = gemm_signature(DType::kF32, epilogue);
  // The tiled kernel's defines are absent; its body must still compile, so give it one config.
  desc.extra_flags = {"-DMWG=16", "-DNWG=16", "-DKWG=16", "-DMDIMC=16", "-DNDIMC=16",
                      "-DVWM=1",  "-DVWN=1",  "-DSA=0",   "-DSB=0"};
  desc.launch = [name, epilogue](const Config&, const Problem& p) -> Result<LaunchGeometry> {
    auto d = gemm_dims(name, p, epilogue);
    if (!d) return std::unexpected(d.error());
    LaunchGeometry g;
    g.grid = {at_least_one((*d)[0]), at_least_one((*d)[1]), 1};
    return g;  // block {1,1,1}: the implementation picks the work-group size
  };
  desc.supports = [name, epilogue](const Config&, const Problem& p) -> Status {
    auto d = gemm_dims(name, p, epilogue);
    if (!d) return std::unexpected(d.error());
    return {};
  };
  return KernelTemplate::create(std::move(desc), SearchSpace())->choice(Config{});
}

Problem opencl_row_sum_problem(std::int64_t rows, std::int64_t cols, int device_index) {
  const Device device{DeviceKind::kOpenCL, device_index};
  const Signature sig = row_sum_signature();
  Problem p;
  p.op = "row_sum";
  p.name = fmt::format("rows={},cols={},f32", rows, cols);
  p.args = {
      {sig[0], TensorSpec::contiguous(DType::kF32, {rows}, device), {}},
      {sig[1], TensorSpec::contiguous(DType::kF32, {rows, cols}, device), {}},
      {sig[2], {}, rows},
      {sig[3], {}, cols},
  };
  return p;
}

SearchSpace opencl_row_sum_space() {
  return make_space({ints("WGS", {16, 32, 64, 128}), ints("VW", {1, 2, 4})}, {});
}

std::shared_ptr<KernelTemplate> opencl_row_sum_template(SearchSpace space) {
  KernelTemplateDesc desc;
  desc.name = "opencl_row_sum";
  desc.source =
      "#line 1 \"kernels/opencl/row_reduce.cl\"\n" + std::string(opencl_row_reduce_source());
  desc.entry = "row_sum";
  desc.signature = row_sum_signature();
  desc.launch = [](const Config& c, const Problem& p) -> Result<LaunchGeometry> {
    auto d = row_sum_dims("opencl_row_sum", p);
    if (!d) return std::unexpected(d.error());
    const std::uint64_t wgs = static_cast<std::uint64_t>(param(c, "WGS"));
    LaunchGeometry g;
    g.grid = {at_least_one((*d)[0]) * wgs, 1, 1};
    g.block = {wgs, 1, 1};
    return g;
  };
  desc.supports = [](const Config& c, const Problem& p) -> Status {
    auto d = row_sum_dims("opencl_row_sum", p);
    if (!d) return std::unexpected(d.error());
    if ((*d)[1] % param(c, "VW") != 0) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("opencl_row_sum: cols; expected a multiple of VW={}, got {}",
                                    param(c, "VW"), (*d)[1]));
    }
    return {};
  };
  return KernelTemplate::create(std::move(desc), std::move(space));
}

ChoicePtr opencl_row_sum_reference() {
  KernelTemplateDesc desc;
  desc.name = "opencl_row_sum_naive";
  desc.source =
      "#line 1 \"kernels/opencl/row_reduce.cl\"\n" + std::string(opencl_row_reduce_source());
  desc.entry = "row_sum_naive";
  desc.signature = row_sum_signature();
  desc.extra_flags = {"-DWGS=16", "-DVW=1"};  // the tiled kernel in the same file needs them
  desc.launch = [](const Config&, const Problem& p) -> Result<LaunchGeometry> {
    auto d = row_sum_dims("opencl_row_sum_naive", p);
    if (!d) return std::unexpected(d.error());
    LaunchGeometry g;
    g.grid = {at_least_one((*d)[0]), 1, 1};
    return g;
  };
  return KernelTemplate::create(std::move(desc), SearchSpace())->choice(Config{});
}

}  // namespace ktune
