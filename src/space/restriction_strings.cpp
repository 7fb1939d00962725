// String literals and string parameters in restrictions (restriction_strings.h). The check works
// on tokens, not a parse tree: == and != bind looser than every operator but && || ?: (and
// tighter than those), so an operand of == is exactly a token whose neighbours are the == on one
// side and, on the other, a token of lower precedence or a boundary: `(`, `)`, `,`, `&&`, `||`,
// `?`, `:`, or the end of the expression.
#include "restriction_strings.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>

namespace ktune::space_detail {

double StringCodes::code(const ParamValue& value) {
  if (const auto* i = std::get_if<std::int64_t>(&value)) {
    return integers_.try_emplace(*i, -1.0 - static_cast<double>(integers_.size())).first->second;
  }
  const std::string& s = std::get<std::string>(value);
  if (auto it = strings_.find(s); it != strings_.end()) return it->second;
  return strings_.emplace(s, static_cast<double>(strings_.size())).first->second;
}

bool is_string_param(const Param& param) {
  return std::any_of(param.values.begin(), param.values.end(),
                     [](const ParamValue& v) { return std::holds_alternative<std::string>(v); });
}

namespace {

enum class Kind { kLiteral, kStringParam, kOther };

struct Token {
  std::string_view text;  // a literal without its quotes
  Kind kind = Kind::kOther;
  std::size_t begin = 0, end = 0;  // in the expression, quotes included
};

bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// Splits `expr` into literals, names, numbers and operators (the two-character ones whole); only
// precise enough for the neighbour test: muparser parses the result properly.
Result<std::vector<Token>> tokenize(std::string_view expr,
                                    const std::vector<std::string>& string_params) {
  std::vector<Token> tokens;
  std::size_t i = 0;
  while (i < expr.size()) {
    const char c = expr[i];
    if (std::isspace(static_cast<unsigned char>(c)) != 0) {
      ++i;
      continue;
    }
    Token t;
    t.begin = i;
    if (c == '"' || c == '\'') {
      const std::size_t close = expr.find(c, i + 1);
      if (close == std::string_view::npos) {
        return make_error(ErrorCode::kInvalidArgument,
                          fmt::format("restriction '{}': unterminated string literal at {}; "
                                      "expected a closing {}",
                                      expr, i, c));
      }
      t.text = expr.substr(i + 1, close - i - 1);
      t.kind = Kind::kLiteral;
      i = close + 1;
    } else if (is_name_char(c)) {
      // Names and numbers alike (1e-3 splits at '-', which is harmless: both halves are numbers).
      while (i < expr.size() && (is_name_char(expr[i]) || expr[i] == '.')) ++i;
      t.text = expr.substr(t.begin, i - t.begin);
      if (std::find(string_params.begin(), string_params.end(), t.text) != string_params.end()) {
        t.kind = Kind::kStringParam;
      }
    } else {
      const std::string_view two = expr.substr(i, 2);
      const bool pair =
          two == "==" || two == "!=" || two == "<=" || two == ">=" || two == "&&" || two == "||";
      i += pair ? 2 : 1;
      t.text = expr.substr(t.begin, i - t.begin);
    }
    t.end = i;
    tokens.push_back(t);
  }
  return tokens;
}

bool is_equality(const Token* t) { return t && (t->text == "==" || t->text == "!="); }

// A boundary on the left (`left`) or right of an operand of ==.
bool is_boundary(const Token* t, bool left) {
  if (!t) return true;
  const std::string_view s = t->text;
  if (s == "," || s == "&&" || s == "||" || s == "?" || s == ":") return true;
  return left ? s == "(" : s == ")";
}

std::string describe(const Token& t) {
  return t.kind == Kind::kLiteral ? fmt::format("the string literal \"{}\"", t.text)
                                  : fmt::format("{} is a string parameter;", t.text);
}

// Why token i, a string, is not an operand of == or != with a string on the other side; nullopt
// when it is.
std::optional<std::string> misuse(const std::vector<Token>& tokens, std::size_t i) {
  const auto at = [&](std::ptrdiff_t k) -> const Token* {
    return k < 0 || k >= static_cast<std::ptrdiff_t>(tokens.size())
               ? nullptr
               : &tokens[static_cast<std::size_t>(k)];
  };
  const auto pos = static_cast<std::ptrdiff_t>(i);
  const Token* left = at(pos - 1);
  const Token* right = at(pos + 1);
  const Token& self = tokens[i];
  const std::string usage =
      self.kind == Kind::kLiteral
          ? fmt::format(
                "{} is not compared with a string parameter; expected PARAM == \"{}\" or "
                "PARAM != \"{}\"",
                describe(self), self.text, self.text)
          : fmt::format(
                "{} compare it with a string literal ({} == \"value\" or {} != "
                "\"value\")",
                describe(self), self.text, self.text);
  std::ptrdiff_t other = 0;
  if (is_equality(right) && is_boundary(left, true)) {
    other = pos + 2;
  } else if (is_equality(left) && is_boundary(right, false)) {
    other = pos - 2;
  } else {
    return usage;
  }
  const Token* o = at(other);
  if (!o || o->kind == Kind::kOther) {
    if (o && self.kind == Kind::kLiteral) {
      return fmt::format("{} is compared with '{}'; expected a string parameter on the other side",
                         describe(self), o->text);
    }
    return usage;
  }
  // The other operand must be an operand of this == alone, not of a tighter operator beyond it.
  const Token* beyond = at(other < pos ? other - 1 : other + 1);
  if (!is_boundary(beyond, other < pos)) return usage;
  return std::nullopt;
}

}  // namespace

Result<std::string> encode_strings(const std::string& expr,
                                   const std::vector<std::string>& string_params,
                                   StringCodes& codes) {
  Result<std::vector<Token>> tokens = tokenize(expr, string_params);
  if (!tokens) return std::unexpected(tokens.error());
  std::string out;
  std::size_t copied = 0;
  for (std::size_t i = 0; i < tokens->size(); ++i) {
    const Token& t = (*tokens)[i];
    if (t.kind == Kind::kOther) continue;
    if (std::optional<std::string> why = misuse(*tokens, i)) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("restriction '{}': {}", expr, *why));
    }
    if (t.kind != Kind::kLiteral) continue;
    out.append(expr, copied, t.begin - copied);
    // Codes are small integers: their shortest text is exact.
    out += fmt::format("{}", codes.code(ParamValue(std::string(t.text))));
    copied = t.end;
  }
  out.append(expr, copied);
  return out;
}

}  // namespace ktune::space_detail
