// RestrictionProgram: one restriction compiled to a flat stack program over the parameter slots,
// so that enumeration evaluates restrictions without muparser. The program is built exactly as
// muparser 2.3 builds its bytecode (the same postfix order and the same rewrites: constant
// folding, `x * c + d` fused, `x^2` as x * x), so it computes the same doubles, NaN and -0
// included. The one difference is `%` on integers: where both operands are integers below 2^53
// (known from the parameters' value ranges) it is an integer remainder, which equals fmod there,
// without fmod's cost. Whatever the compiler does not know (other functions, `^` chains, string
// encodings it did not expect) it declines: compile() returns nullopt and that restriction stays
// with muparser. Private to the space module.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ktune::space_detail {

class RestrictionProgram {
 public:
  // What compile() may name: each slot's name and the integer range of its values (every
  // parameter value is an integer: strings are coded as integers), and the constants by value.
  struct Slot {
    std::string_view name;
    double lo = 0, hi = 0;
  };
  using Constants = std::vector<std::pair<std::string, double>>;

  // `text` is the restriction as muparser parses it (string literals already coded), and it has
  // parsed and evaluated there once. nullopt: the compiler declines; use muparser.
  [[nodiscard]] static std::optional<RestrictionProgram> compile(std::string_view text,
                                                                 const std::vector<Slot>& slots,
                                                                 const Constants& constants);

  // The restriction's value with slot i holding slots[i].
  [[nodiscard]] double eval(const double* slots) const;

  enum class Op : std::uint8_t {
    kVal,
    kVar,
    kVarMul,
    kVarPow2,
    kVarPow3,
    kVarPow4,
    kAdd,
    kSub,
    kMul,
    kDiv,
    kPow,
    kLt,
    kGt,
    kLe,
    kGe,
    kEq,
    kNe,
    kAnd,
    kOr,
    kModInt,
    kModFloat,
    kNeg,
    kNot,
    kAbs,
    kFloor,
    kCeil,
    kCeilDiv,
    kMin,
    kMax,
    kIf,
    kElse,
    kEndIf
  };
  struct Instr {
    Op op = Op::kVal;
    std::uint32_t arg = 0;  // slot (kVar...), argument count (kMin, kMax), jump target (kIf, kElse)
    double data = 0;        // multiplicand (kVarMul)
    double data2 = 0;       // value (kVal), offset (kVarMul)
  };
  static constexpr std::size_t kMaxStack = 64;

 private:
  std::vector<Instr> code_;
};

}  // namespace ktune::space_detail
