// RestrictionProgram's compiler (restriction_program.h): a precedence-climbing parser that emits
// postfix code through ProgramBuilder, which applies muparser 2.3's bytecode rewrites as muparser
// applies them (ParserByteCode::AddOp, AddFun) so that the doubles come out the same. Precedences
// are muparser's: || 1, && 2, comparisons 4, + - 5, * / % and the prefix signs 6, ^ 7; ?: lowest.
#include "restriction_program.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

namespace ktune::space_detail {

using Op = RestrictionProgram::Op;
using Instr = RestrictionProgram::Instr;

namespace {

constexpr double kExact = 9007199254740992.0;  // 2^53: integers up to here are exact doubles

// What the compiler knows of a stack entry: whether it is an integer, within [lo, hi].
struct Range {
  bool integer = false;
  double lo = 0, hi = 0;
};
Range int_range(double lo, double hi) {
  if (!(lo >= -kExact && hi <= kExact)) return {};  // NaN bounds fail too
  return {true, lo, hi};
}
Range value_range(double v) { return v == std::trunc(v) ? int_range(v, v) : Range{}; }

double fold_not(double v) { return v == 0 ? 1 : 0; }
// The same as restriction_set.cpp's ceil_div (muparser calls that one).
double fold_ceil_div(double a, double b) {
  if (!(b > 0) || std::isnan(a)) return std::numeric_limits<double>::quiet_NaN();
  if (std::fabs(a) < kExact && b < kExact && a == std::trunc(a) && b == std::trunc(b)) {
    const auto ia = static_cast<std::int64_t>(a);
    const auto ib = static_cast<std::int64_t>(b);
    return static_cast<double>(ia / ib + (ia % ib > 0 ? 1 : 0));
  }
  return std::ceil(a / b);
}
double apply_unary(Op op, double v) {
  switch (op) {
    case Op::kNeg: return -v;
    case Op::kNot: return fold_not(v);
    case Op::kAbs: return v >= 0 ? v : -v;  // muparser's Abs: -0 stays -0
    case Op::kFloor: return std::floor(v);
    default: return std::ceil(v);
  }
}
double apply_binary(Op op, double a, double b) {
  switch (op) {
    case Op::kAdd: return a + b;
    case Op::kSub: return a - b;
    case Op::kMul: return a * b;
    case Op::kDiv: return a / b;
    case Op::kPow: return std::pow(a, b);
    case Op::kLt: return a < b;
    case Op::kGt: return a > b;
    case Op::kLe: return a <= b;
    case Op::kGe: return a >= b;
    case Op::kEq: return a == b;
    case Op::kNe: return a != b;
    case Op::kAnd: return a && b;
    case Op::kOr: return a || b;
    case Op::kModFloat: return std::fmod(a, b);
    case Op::kModInt: {
      if (b == 0) return std::numeric_limits<double>::quiet_NaN();  // fmod(a, 0)
      const auto r = static_cast<std::int64_t>(a) % static_cast<std::int64_t>(b);
      return std::copysign(static_cast<double>(r), a);  // fmod's zero has a's sign
    }
    case Op::kCeilDiv: return fold_ceil_div(a, b);
    default: return 0;
  }
}

}  // namespace

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
      case Op::kAdd: return int_range(a.lo + b.lo, a.hi + b.hi);
      case Op::kSub: return int_range(a.lo - b.hi, a.hi - b.lo);
      case Op::kMul: {
        const double p[] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
        return int_range(*std::min_element(p, p + 4), *std::max_element(p, p + 4));
      }
      case Op::kModInt: return int_range(std::min(a.lo, 0.0), std::max(a.hi, 0.0));
      default: return {};  // / ^ fmod ceil_div: not known to be integers
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

namespace {

// Tokens and a precedence-climbing parse over muparser's grammar, as much of it as restrictions
// use. Anything else (a name it does not know, `^` after `^` or before a sign) declines.
class Parser {
 public:
  Parser(std::string_view text, const std::vector<RestrictionProgram::Slot>& slots,
         const RestrictionProgram::Constants& constants)
      : text_(text), slots_(slots), constants_(constants) {}

  bool parse(ProgramBuilder& b) {
    b_ = &b;
    ternary();
    return b.ok && pos_ == text_.size() && b.depth == 1;
  }

 private:
  void skip() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
  }
  bool eat(std::string_view s) {
    skip();
    if (text_.substr(pos_, s.size()) != s) return false;
    pos_ += s.size();
    return true;
  }
  // The binary operator at pos_ and its precedence, without consuming it; 0 when none.
  int peek_binary(Op& op, std::size_t& len) {
    skip();
    static constexpr struct {
      std::string_view s;
      Op op;
      int prec;
    } kOps[] = {{"||", Op::kOr, 1},  {"&&", Op::kAnd, 2}, {"==", Op::kEq, 4},
                {"!=", Op::kNe, 4},  {"<=", Op::kLe, 4},  {">=", Op::kGe, 4},
                {"<", Op::kLt, 4},   {">", Op::kGt, 4},   {"+", Op::kAdd, 5},
                {"-", Op::kSub, 5},  {"*", Op::kMul, 6},  {"/", Op::kDiv, 6},
                {"%", Op::kModFloat, 6}, {"^", Op::kPow, 7}};
    for (const auto& o : kOps) {
      if (text_.substr(pos_, o.s.size()) == o.s) {
        op = o.op;
        len = o.s.size();
        return o.prec;
      }
    }
    return 0;
  }
  void ternary() {
    binary(1);
    if (!eat("?")) return;
    const std::size_t at_if = b_->code.size();
    b_->code.push_back({Op::kIf});
    b_->depth -= 1;
    b_->ranges.pop_back();
    ternary();
    if (!eat(":") || !b_->ok) return b_->fail();
    const Range first = b_->ranges.back();
    b_->depth -= 1;
    b_->ranges.pop_back();
    const std::size_t at_else = b_->code.size();
    b_->code.push_back({Op::kElse});
    ternary();
    if (!b_->ok) return;
    b_->code.push_back({Op::kEndIf});
    b_->code[at_if].arg = static_cast<std::uint32_t>(at_else + 1);
    b_->code[at_else].arg = static_cast<std::uint32_t>(b_->code.size());
    const Range second = b_->ranges.back();
    b_->ranges.back() = first.integer && second.integer
                            ? int_range(std::min(first.lo, second.lo), std::max(first.hi, second.hi))
                            : Range{};
  }
  void binary(int min_prec) {
    prefix();
    for (;;) {
      Op op{};
      std::size_t len = 0;
      const int prec = peek_binary(op, len);
      if (prec == 0 || prec < min_prec || !b_->ok) return;
      pos_ += len;
      if (prec == 7) {  // ^: its right operand is a primary, and one ^ only
        skip();
        if (pos_ < text_.size() && (text_[pos_] == '-' || text_[pos_] == '+' || text_[pos_] == '!'))
          return b_->fail();
        primary();
        b_->binary(op);
        Op next{};
        if (peek_binary(next, len) == 7) return b_->fail();
        continue;
      }
      binary(prec + 1);
      if (op == Op::kModFloat) {
        b_->function(op, 2);
      } else {
        b_->binary(op);
      }
    }
  }
  // The prefix signs bind like * (6) with a power as their operand: -A^2 is -(A^2), -A*B (-A)*B.
  void prefix() {
    skip();
    if (eat("+")) return prefix();  // muparser drops a unary plus
    if (eat("-")) {
      prefix();
      return b_->function(Op::kNeg, 1);
    }
    if (text_.substr(pos_, 2) != "!=" && eat("!")) {
      prefix();
      return b_->function(Op::kNot, 1);
    }
    primary();
    Op op{};
    std::size_t len = 0;
    if (peek_binary(op, len) == 7) {
      pos_ += len;
      skip();
      if (pos_ < text_.size() && (text_[pos_] == '-' || text_[pos_] == '+' || text_[pos_] == '!'))
        return b_->fail();
      primary();
      b_->binary(op);
      if (peek_binary(op, len) == 7) return b_->fail();
    }
  }
  void primary() {
    skip();
    if (!b_->ok || pos_ >= text_.size()) return b_->fail();
    const char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      ternary();
      if (!eat(")")) b_->fail();
      return;
    }
    if ((c >= '0' && c <= '9') || c == '.') return number();
    if (!name_start(c)) return b_->fail();
    std::size_t end = pos_;
    while (end < text_.size() && name_char(text_[end])) ++end;
    const std::string_view name = text_.substr(pos_, end - pos_);
    pos_ = end;
    if (end < text_.size() && text_[end] == '.') return b_->fail();
    skip();
    if (pos_ < text_.size() && text_[pos_] == '(') return call(name);
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      if (slots_[i].name == name) {
        return b_->var(static_cast<std::uint32_t>(i), slots_[i].lo, slots_[i].hi);
      }
    }
    for (const auto& [cname, value] : constants_) {
      if (cname == name) return b_->val(value);
    }
    b_->fail();  // muparser's own constants (_pi, _e) and anything else
  }
  void call(std::string_view name) {
    ++pos_;  // (
    std::uint32_t argc = 0;
    if (!eat(")")) {
      do {
        ternary();
        ++argc;
      } while (b_->ok && eat(","));
      if (!eat(")")) return b_->fail();
    }
    if (name == "min" || name == "max") {
      return b_->variadic(name == "min" ? Op::kMin : Op::kMax, argc);
    }
    if (name == "ceil_div" && argc == 2) return b_->function(Op::kCeilDiv, 2);
    if (argc != 1) return b_->fail();
    if (name == "abs") return b_->function(Op::kAbs, 1);
    if (name == "floor") return b_->function(Op::kFloor, 1);
    if (name == "ceil") return b_->function(Op::kCeil, 1);
    b_->fail();
  }
  // Digits, an optional fraction and exponent; followed by no name character.
  void number() {
    std::size_t end = pos_;
    const auto digits = [&] {
      while (end < text_.size() && text_[end] >= '0' && text_[end] <= '9') ++end;
    };
    digits();
    if (end < text_.size() && text_[end] == '.') {
      ++end;
      digits();
    }
    if (end < text_.size() && (text_[end] == 'e' || text_[end] == 'E')) {
      ++end;
      if (end < text_.size() && (text_[end] == '+' || text_[end] == '-')) ++end;
      const std::size_t at = end;
      digits();
      if (end == at) return b_->fail();
    }
    if (end < text_.size() && (name_char(text_[end]) || text_[end] == '.')) return b_->fail();
    const std::string token(text_.substr(pos_, end - pos_));
    char* stop = nullptr;
    const double v = std::strtod(token.c_str(), &stop);
    if (stop != token.c_str() + token.size()) return b_->fail();
    pos_ = end;
    b_->val(v);
  }
  static bool name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
  static bool name_char(char c) { return name_start(c) || (c >= '0' && c <= '9'); }

  std::string_view text_;
  const std::vector<RestrictionProgram::Slot>& slots_;
  const RestrictionProgram::Constants& constants_;
  ProgramBuilder* b_ = nullptr;
  std::size_t pos_ = 0;
};

}  // namespace

std::optional<RestrictionProgram> RestrictionProgram::compile(std::string_view text,
                                                              const std::vector<Slot>& slots,
                                                              const Constants& constants) {
  ProgramBuilder b;
  Parser parser(text, slots, constants);
  if (!parser.parse(b) || b.max_depth > kMaxStack) return std::nullopt;
  RestrictionProgram program;
  program.code_ = std::move(b.code);
  return program;
}

double RestrictionProgram::eval(const double* slots) const {
  double stack[kMaxStack];
  std::size_t top = 0;  // entries in use: stack[top - 1] is the top
  const Instr* code = code_.data();
  const std::size_t n = code_.size();
  for (std::size_t pc = 0; pc < n; ++pc) {
    const Instr& in = code[pc];
    switch (in.op) {
      case Op::kVal: stack[top++] = in.data2; break;
      case Op::kVar: stack[top++] = slots[in.arg]; break;
      case Op::kVarMul: stack[top++] = slots[in.arg] * in.data + in.data2; break;
      case Op::kVarPow2: {
        const double v = slots[in.arg];
        stack[top++] = v * v;
        break;
      }
      case Op::kVarPow3: {
        const double v = slots[in.arg];
        stack[top++] = v * v * v;
        break;
      }
      case Op::kVarPow4: {
        const double v = slots[in.arg];
        stack[top++] = v * v * v * v;
        break;
      }
      case Op::kNeg: case Op::kNot: case Op::kAbs: case Op::kFloor: case Op::kCeil:
        stack[top - 1] = apply_unary(in.op, stack[top - 1]);
        break;
      case Op::kMin: case Op::kMax: {
        top -= in.arg;
        double r = stack[top];
        for (std::uint32_t i = 1; i < in.arg; ++i) {
          r = in.op == Op::kMin ? std::min(r, stack[top + i]) : std::max(r, stack[top + i]);
        }
        stack[top++] = r;
        break;
      }
      case Op::kIf:
        if (stack[--top] == 0) pc = in.arg - 1;
        break;
      case Op::kElse: pc = in.arg - 1; break;
      case Op::kEndIf: break;
      default:
        --top;
        stack[top - 1] = apply_binary(in.op, stack[top - 1], stack[top]);
        break;
    }
  }
  return stack[0];
}

}  // namespace ktune::space_detail
