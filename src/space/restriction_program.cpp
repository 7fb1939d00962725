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

#include "restriction_builder.h"

namespace ktune::space_detail {

using program::apply_binary;
using program::apply_unary;
using program::int_range;
using program::Op;
using program::ProgramBuilder;
using program::Range;

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
    } kOps[] = {{"||", Op::kOr, 1},      {"&&", Op::kAnd, 2}, {"==", Op::kEq, 4},
                {"!=", Op::kNe, 4},      {"<=", Op::kLe, 4},  {">=", Op::kGe, 4},
                {"<", Op::kLt, 4},       {">", Op::kGt, 4},   {"+", Op::kAdd, 5},
                {"-", Op::kSub, 5},      {"*", Op::kMul, 6},  {"/", Op::kDiv, 6},
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
    b_->ranges.back() = first.integer && second.integer ? int_range(std::min(first.lo, second.lo),
                                                                    std::max(first.hi, second.hi))
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
  static bool name_start(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  }
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
      case Op::kVal:
        stack[top++] = in.data2;
        break;
      case Op::kVar:
        stack[top++] = slots[in.arg];
        break;
      case Op::kVarMul:
        stack[top++] = slots[in.arg] * in.data + in.data2;
        break;
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
      case Op::kNeg:
      case Op::kNot:
      case Op::kAbs:
      case Op::kFloor:
      case Op::kCeil:
        stack[top - 1] = apply_unary(in.op, stack[top - 1]);
        break;
      case Op::kMin:
      case Op::kMax: {
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
      case Op::kElse:
        pc = in.arg - 1;
        break;
      case Op::kEndIf:
        break;
      default:
        --top;
        stack[top - 1] = apply_binary(in.op, stack[top - 1], stack[top]);
        break;
    }
  }
  return stack[0];
}

}  // namespace ktune::space_detail
