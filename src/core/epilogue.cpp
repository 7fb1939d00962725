// Epilogue: parsing, canonical names, rendering into a template's hook, and the host reference.
#include "ktune/core/epilogue.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

namespace ktune {
namespace {

constexpr std::string_view kAccepted = "bias, rowbias, scale=<number>, relu, gelu, silu, residual";

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

const char* operand_name(EpilogueOpKind kind) {
  switch (kind) {
    case EpilogueOpKind::kBias:
      return "bias";
    case EpilogueOpKind::kRowBias:
      return "rowbias";
    case EpilogueOpKind::kResidual:
      return "residual";
    default:
      return nullptr;
  }
}

std::string op_name(const EpilogueOp& op) {
  switch (op.kind) {
    case EpilogueOpKind::kScale:
      return fmt::format("scale={}", op.scale);
    case EpilogueOpKind::kRelu:
      return "relu";
    case EpilogueOpKind::kGelu:
      return "gelu";
    case EpilogueOpKind::kSilu:
      return "silu";
    default:
      return operand_name(op.kind);
  }
}

// A float literal that reads back as the same float in C++, CUDA and OpenCL.
std::string float_literal(double v) {
  std::string s = fmt::format("{}", static_cast<float>(v));
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s + "f";
}

}  // namespace

Result<Epilogue> Epilogue::parse(std::string_view text) {
  text = trim(text);
  std::vector<EpilogueOp> ops;
  if (text.empty() || text == "none") return Epilogue{};
  bool seen[3] = {};  // bias, rowbias, residual
  while (true) {
    const std::size_t comma = text.find(',');
    const std::string_view item = trim(text.substr(0, comma));
    EpilogueOp op;
    if (item == "bias") {
      op.kind = EpilogueOpKind::kBias;
    } else if (item == "rowbias") {
      op.kind = EpilogueOpKind::kRowBias;
    } else if (item == "residual") {
      op.kind = EpilogueOpKind::kResidual;
    } else if (item == "relu") {
      op.kind = EpilogueOpKind::kRelu;
    } else if (item == "gelu") {
      op.kind = EpilogueOpKind::kGelu;
    } else if (item == "silu") {
      op.kind = EpilogueOpKind::kSilu;
    } else if (item.starts_with("scale=")) {
      op.kind = EpilogueOpKind::kScale;
      const std::string_view num = item.substr(6);
      const auto [end, ec] = std::from_chars(num.data(), num.data() + num.size(), op.scale);
      if (ec != std::errc() || end != num.data() + num.size() || !std::isfinite(op.scale)) {
        return make_error(ErrorCode::kInvalidArgument,
                          fmt::format("scale; expected a finite number, got '{}'", num));
      }
    } else {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("unknown step '{}'; expected a comma-separated "
                                    "list of {}",
                                    item, kAccepted));
    }
    const int slot = op.kind == EpilogueOpKind::kBias       ? 0
                     : op.kind == EpilogueOpKind::kRowBias  ? 1
                     : op.kind == EpilogueOpKind::kResidual ? 2
                                                            : -1;
    if (slot >= 0 && seen[slot]) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("'{}' appears twice; each tensor operand may "
                                    "appear once",
                                    item));
    }
    if (slot >= 0) seen[slot] = true;
    ops.push_back(op);
    if (comma == std::string_view::npos) break;
    text = text.substr(comma + 1);
  }
  return Epilogue(std::move(ops));
}

std::string Epilogue::name() const {
  if (ops_.empty()) return "none";
  std::string out;
  for (const EpilogueOp& op : ops_) {
    if (!out.empty()) out.push_back('+');
    out.append(op_name(op));
  }
  return out;
}

std::vector<EpilogueOperand> Epilogue::operands() const {
  std::vector<EpilogueOperand> out;
  for (const EpilogueOp& op : ops_) {
    if (op.kind == EpilogueOpKind::kBias) out.push_back({"bias", EpilogueOperandShape::kColumns});
    if (op.kind == EpilogueOpKind::kRowBias)
      out.push_back({"rowbias", EpilogueOperandShape::kRows});
    if (op.kind == EpilogueOpKind::kResidual) {
      out.push_back({"residual", EpilogueOperandShape::kMatrix});
    }
  }
  return out;
}

std::string Epilogue::render_defines(std::string_view pointer_type,
                                     EpilogueLanguage language) const {
  const bool ocl = language == EpilogueLanguage::kOpenCL;
  const char* erf_fn = ocl ? "erf" : "erff";
  const char* exp_fn = ocl ? "exp" : "expf";
  std::string params, args, body = "{ float v = acc; ";
  for (const EpilogueOp& op : ops_) {
    switch (op.kind) {
      case EpilogueOpKind::kBias:
        body += "v += KTUNE_LOAD(bias, col); ";
        break;
      case EpilogueOpKind::kRowBias:
        body += "v += KTUNE_LOAD(rowbias, row); ";
        break;
      case EpilogueOpKind::kResidual:
        body += "v += KTUNE_LOAD(residual, idx); ";
        break;
      case EpilogueOpKind::kScale:
        body += fmt::format("v *= {}; ", float_literal(op.scale));
        break;
      case EpilogueOpKind::kRelu:
        body += "v = v > 0.0f ? v : 0.0f; ";
        break;
      case EpilogueOpKind::kGelu:
        body += fmt::format("v = 0.5f * v * (1.0f + {}(v * 0.70710678118654752f)); ", erf_fn);
        break;
      case EpilogueOpKind::kSilu:
        // CUDA: the hardware's exp and divide (MUFU.EX2, MUFU.RCP), as Triton's sigmoid. With
        // expf and the IEEE division, the fused GEMM + SiLU beat the library pair by 1.05x where
        // GELU (erff) did by 1.11-1.15x on the same shapes (H200, run O in docs/benchmarks.md).
        // Their error (2 + 1.16|v| ulp, 2 ulp) is far below any output's tolerance; where
        // 1 + exp(-v) overflows, v / inf is -0 as before.
        body += language == EpilogueLanguage::kCuda
                    ? "v = __fdividef(v, 1.0f + __expf(-v)); "
                    : fmt::format("v = v / (1.0f + {}(-v)); ", exp_fn);
        break;
    }
  }
  body += "(void)row; (void)col; (void)idx; return v; }";
  std::string matrix;  // names the first operand of C's shape: a template may load it its own way
  for (const EpilogueOperand& o : operands()) {
    params += fmt::format(", {} {}", pointer_type, o.name);
    args += ", " + o.name;
    if (o.shape == EpilogueOperandShape::kMatrix && matrix.empty()) {
      matrix = fmt::format("#define KTUNE_EPILOGUE_MATRIX {}\n", o.name);
    }
  }
  return fmt::format(
      "#define KTUNE_EPILOGUE 1\n"
      "#define KTUNE_EPILOGUE_NAME \"{}\"\n"
      "#define KTUNE_EPILOGUE_PARAMS {}\n"
      "#define KTUNE_EPILOGUE_ARGS {}\n"
      "#define KTUNE_EPILOGUE_BODY {}\n{}",
      name(), params, args, body, matrix);
}

float Epilogue::apply_one(float acc, std::int64_t row, std::int64_t col, std::int64_t n,
                          const std::vector<const float*>& operands) const {
  float v = acc;
  std::size_t next = 0;
  for (const EpilogueOp& op : ops_) {
    switch (op.kind) {
      case EpilogueOpKind::kBias:
        v += operands[next++][col];
        break;
      case EpilogueOpKind::kRowBias:
        v += operands[next++][row];
        break;
      case EpilogueOpKind::kResidual:
        v += operands[next++][row * n + col];
        break;
      case EpilogueOpKind::kScale:
        v *= static_cast<float>(op.scale);
        break;
      case EpilogueOpKind::kRelu:
        v = v > 0.0f ? v : 0.0f;
        break;
      case EpilogueOpKind::kGelu:
        v = 0.5f * v * (1.0f + std::erf(v * 0.70710678118654752f));
        break;
      case EpilogueOpKind::kSilu:
        v = v / (1.0f + std::exp(-v));
        break;
    }
  }
  return v;
}

void Epilogue::apply(float* c, std::int64_t m, std::int64_t n,
                     const std::vector<const float*>& operands) const {
  KTUNE_CHECK(operands.size() == this->operands().size());
  for (std::int64_t row = 0; row < m; ++row) {
    for (std::int64_t col = 0; col < n; ++col) {
      const std::int64_t i = row * n + col;
      c[i] = apply_one(c[i], row, col, n, operands);
    }
  }
}

std::vector<ProblemArg> Epilogue::problem_args(DType dtype, std::int64_t m, std::int64_t n,
                                               const Device& device) const {
  std::vector<ProblemArg> out;
  for (const EpilogueOperand& o : operands()) {
    std::vector<std::int64_t> sizes = o.shape == EpilogueOperandShape::kColumns ? std::vector{n}
                                      : o.shape == EpilogueOperandShape::kRows  ? std::vector{m}
                                                                                : std::vector{m, n};
    ProblemArg arg;
    arg.param = KernelParam{o.name, ArgRole::kIn, dtype};
    arg.tensor = TensorSpec::contiguous(dtype, std::move(sizes), device);
    out.push_back(std::move(arg));
  }
  return out;
}

std::string Epilogue::tag() const {
  std::string tag = name();
  for (char& c : tag) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0) c = '_';
  }
  return tag;
}

Signature gemm_signature(DType dtype, const Epilogue& epilogue) {
  Signature sig = {{"C", ArgRole::kOut, dtype},          {"A", ArgRole::kIn, dtype},
                   {"B", ArgRole::kIn, dtype},           {"M", ArgRole::kScalar, DType::kI32},
                   {"N", ArgRole::kScalar, DType::kI32}, {"K", ArgRole::kScalar, DType::kI32}};
  for (const EpilogueOperand& o : epilogue.operands()) sig.push_back({o.name, ArgRole::kIn, dtype});
  return sig;
}

}  // namespace ktune
