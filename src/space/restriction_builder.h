// ProgramBuilder: emits a RestrictionProgram's postfix code and applies muparser 2.3's bytecode
// rewrites as muparser applies them (ParserByteCode::AddOp, AddFun: constant folding, `x * c + d`
// fused, `x^2` as x * x), so that the program computes the doubles muparser computes. It also
// tracks which stack entries are integers below 2^53, where `%` may be an integer remainder.
// Private to the space module (restriction_program.cpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "restriction_program.h"

namespace ktune::space_detail::program {

using Op = RestrictionProgram::Op;
using Instr = RestrictionProgram::Instr;

inline constexpr double kExact = 9007199254740992.0;  // 2^53: integers up to here are exact doubles

// What the compiler knows of a stack entry: whether it is an integer, within [lo, hi].
struct Range {
  bool integer = false;
  double lo = 0, hi = 0;
};
inline Range int_range(double lo, double hi) {
  if (!(lo >= -kExact && hi <= kExact)) return {};  // NaN bounds fail too
  return {true, lo, hi};
}
inline Range value_range(double v) { return v == std::trunc(v) ? int_range(v, v) : Range{}; }

inline double fold_not(double v) { return v == 0 ? 1 : 0; }
// The same as restriction_set.cpp's ceil_div (muparser calls that one).
inline double fold_ceil_div(double a, double b) {
  if (!(b > 0) || std::isnan(a)) return std::numeric_limits<double>::quiet_NaN();
  if (std::fabs(a) < kExact && b < kExact && a == std::trunc(a) && b == std::trunc(b)) {
    const auto ia = static_cast<std::int64_t>(a);
    const auto ib = static_cast<std::int64_t>(b);
    return static_cast<double>(ia / ib + (ia % ib > 0 ? 1 : 0));
  }
  return std::ceil(a / b);
}
inline double apply_unary(Op op, double v) {
  switch (op) {
    case Op::kNeg:
      return -v;
    case Op::kNot:
      return fold_not(v);
    case Op::kAbs:
      return v >= 0 ? v : -v;  // muparser's Abs: -0 stays -0
    case Op::kFloor:
      return std::floor(v);
    default:
      return std::ceil(v);
  }
}
inline double apply_binary(Op op, double a, double b) {
  switch (op) {
    case Op::kAdd:
      return a + b;
    case Op::kSub:
      return a - b;
    case Op::kMul:
      return a * b;
    case Op::kDiv:
      return a / b;
    case Op::kPow:
      return std::pow(a, b);
    case Op::kLt:
      return a < b;
    case Op::kGt:
      return a > b;
    case Op::kLe:
      return a <= b;
    case Op::kGe:
      return a >= b;
    case Op::kEq:
      return a == b;
    case Op::kNe:
      return a != b;
    case Op::kAnd:
      return a && b;
    case Op::kOr:
      return a || b;
    case Op::kModFloat:
      return std::fmod(a, b);
    case Op::kModInt: {
      if (b == 0) return std::numeric_limits<double>::quiet_NaN();  // fmod(a, 0)
      const auto r = static_cast<std::int64_t>(a) % static_cast<std::int64_t>(b);
      return std::copysign(static_cast<double>(r), a);  // fmod's zero has a's sign
    }
    case Op::kCeilDiv:
      return fold_ceil_div(a, b);
    default:
      return 0;
  }
}

// Emits postfix code and mirrors muparser's rewrites; `ok` turns false where it cannot.
class ProgramBuilder {
 public:
  std::vector<Instr> code;
  std::vector<Range> ranges;  // one per stack entry
  std::size_t depth = 0, max_depth = 0;
  bool ok = true;

  void val(double v) {
    code.push_back({Op::kVal, 0, 0, v});
    push(value_range(v));
  }
  void var(std::uint32_t slot, double lo, double hi) {
    code.push_back({Op::kVar, slot, 1, 0});
    push(int_range(lo, hi));
  }
  // AddOp: the binary operators of muparser's own.
  void binary(Op op) {
    if (!ok || depth < 2 || code.size() < 2) return fail();
    Instr& x = code[code.size() - 2];
    Instr& y = code.back();
    const Range a = ranges[depth - 2], b = ranges[depth - 1];
    const Range r = result_range(op, a, b);
    const bool vx = x.op == Op::kVal, vy = y.op == Op::kVal;
    if (vx && vy) {
      // muparser folds && and || through int casts; rare enough to leave to it.
      if (op == Op::kAnd || op == Op::kOr) return fail();
      x.data2 = apply_binary(op, x.data2, y.data2);
      code.pop_back();
      return pop_push(value_range(x.data2));
    }
    const auto is = [](const Instr& i, Op o) { return i.op == o; };
    const bool same_var = x.arg == y.arg;
    if (op == Op::kAdd || op == Op::kSub) {
      const bool fuse = (is(y, Op::kVar) && vx) || (vy && is(x, Op::kVar)) ||
                        (vy && is(x, Op::kVarMul)) || (is(y, Op::kVarMul) && vx) ||
                        (is(y, Op::kVar) && is(x, Op::kVar) && same_var) ||
                        (is(y, Op::kVar) && is(x, Op::kVarMul) && same_var) ||
                        (is(y, Op::kVarMul) && is(x, Op::kVar) && same_var) ||
                        (is(y, Op::kVarMul) && is(x, Op::kVarMul) && same_var);
      if (fuse) {
        const double sign = op == Op::kSub ? -1 : 1;
        const bool x_var = !vx;  // the slot: x's unless x is a value
        const std::uint32_t slot = x_var ? x.arg : y.arg;
        // A kVal's multiplicand is 0, a kVar's 1, as muparser stores them.
        const double xd = vx ? 0 : x.data, yd = vy ? 0 : y.data;
        x = {Op::kVarMul, slot, xd + sign * yd, x.data2 + sign * y.data2};
        code.pop_back();
        return pop_push(r);
      }
    } else if (op == Op::kMul) {
      if ((is(y, Op::kVar) && vx) || (vy && is(x, Op::kVar))) {
        const std::uint32_t slot = vx ? y.arg : x.arg;
        x = {Op::kVarMul, slot, (vx ? x.data2 : 0) + (vy ? y.data2 : 0), 0};
        code.pop_back();
        return pop_push(r);
      }
      if ((vy && is(x, Op::kVarMul)) || (is(y, Op::kVarMul) && vx)) {
        if (vy) {
          x.data *= y.data2;
          x.data2 *= y.data2;
        } else {
          const double c = x.data2;
          x = {Op::kVarMul, y.arg, y.data * c, y.data2 * c};
        }
        code.pop_back();
        return pop_push(r);
      }
      if (is(x, Op::kVar) && is(y, Op::kVar) && same_var) {
        x.op = Op::kVarPow2;
        code.pop_back();
        return pop_push(r);
      }
    } else if (op == Op::kDiv) {
      if (vy && is(x, Op::kVarMul) && y.data2 != 0) {
        x.data /= y.data2;
        x.data2 /= y.data2;
        code.pop_back();
        return pop_push(r);
      }
    } else if (op == Op::kPow) {
      if (is(x, Op::kVar) && vy) {
        const double e = y.data2;
        if (e == 0) {
          x = {Op::kVal, 0, 0, 1};
        } else if (e == 2 || e == 3 || e == 4) {
          x.op = e == 2 ? Op::kVarPow2 : e == 3 ? Op::kVarPow3 : Op::kVarPow4;
        } else if (e != 1) {
          code.push_back({op});
          return pop_push(r);
        }
        code.pop_back();
        return pop_push(x.op == Op::kVal ? value_range(1) : r);
      }
    }
    code.push_back({op});
    pop_push(r);
  }
  // AddFun: `%`, the prefix operators and the fixed-arity functions (folded on values).
  void function(Op op, std::size_t argc) {
    if (!ok || depth < argc) return fail();
    const std::size_t n = code.size();
    bool values = n >= argc;
    for (std::size_t i = 0; values && i < argc; ++i) values = code[n - 1 - i].op == Op::kVal;
    Range r;
    if (argc == 2) {
      const Range a = ranges[depth - 2], b = ranges[depth - 1];
      if (op == Op::kModFloat && a.integer && b.integer) op = Op::kModInt;
      r = result_range(op, a, b);
    } else {
      r = unary_range(op, ranges[depth - 1]);
    }
    if (values) {
      const double v = argc == 2 ? apply_binary(op, code[n - 2].data2, code[n - 1].data2)
                                 : apply_unary(op, code[n - 1].data2);
      code.resize(n - argc);
      depth -= argc;
      ranges.resize(depth);
      return val(v);
    }
    code.push_back({op});
    depth -= argc - 1;
    ranges.resize(depth);
    ranges.back() = r;
  }
  // min and max: variadic in muparser, never folded.
  void variadic(Op op, std::uint32_t argc) {
    if (!ok || argc == 0 || depth < argc) return fail();
    Range r = ranges[depth - argc];
    for (std::size_t i = depth - argc; i < depth; ++i) {
      const Range& a = ranges[i];
      r = r.integer && a.integer ? int_range(std::min(r.lo, a.lo), std::max(r.hi, a.hi)) : Range{};
    }
    code.push_back({op, argc});
    depth -= argc - 1;
    ranges.resize(depth);
    ranges.back() = r;
  }
  void fail() { ok = false; }

  void push(Range r) {
    ranges.push_back(r);
    max_depth = std::max(max_depth, ++depth);
  }
  void pop_push(Range r) {
    --depth;
    ranges.resize(depth);
    ranges.back() = r;
  }

  static Range result_range(Op op, Range a, Range b) {
    if (op >= Op::kLt && op <= Op::kOr) return int_range(0, 1);
    if (!a.integer || !b.integer) return {};
    switch (op) {
      case Op::kAdd:
        return int_range(a.lo + b.lo, a.hi + b.hi);
      case Op::kSub:
        return int_range(a.lo - b.hi, a.hi - b.lo);
      case Op::kMul: {
        const double p[] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
        return int_range(*std::min_element(p, p + 4), *std::max_element(p, p + 4));
      }
      case Op::kModInt:
        return int_range(std::min(a.lo, 0.0), std::max(a.hi, 0.0));
      default:
        return {};  // / ^ fmod ceil_div: not known to be integers
    }
  }
  static Range unary_range(Op op, Range a) {
    if (op == Op::kNot) return int_range(0, 1);
    if (!a.integer) return {};
    if (op == Op::kNeg) return int_range(-a.hi, -a.lo);
    if (op == Op::kAbs) return int_range(0, std::max(std::fabs(a.lo), std::fabs(a.hi)));
    return a;  // floor and ceil of an integer
  }
};

}  // namespace ktune::space_detail::program
