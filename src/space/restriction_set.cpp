// RestrictionSet: the muparser adapter. Every muparser call goes through guarded(), the one place
// where mu::Parser::exception_type becomes an Error. Besides muparser's built-ins
// (&& || == != < <= > >= + - * / ^ ?: min max abs ...) each parser gets `!` (logical not,
// prefix), `%` (fmod, precedence of * and /), floor, ceil and ceil_div. String literals are
// replaced by codes before muparser parses (restriction_strings.h).
#include "restriction_set.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <muParser.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string_view>

#include "restriction_strings.h"

namespace ktune::space_detail {
namespace {

double logical_not(double v) { return v == 0 ? 1 : 0; }
double modulo(double a, double b) { return std::fmod(a, b); }
double floor_of(double v) { return std::floor(v); }
double ceil_of(double v) { return std::ceil(v); }

// Integer ceiling division for grid sizes and tile counts: ceil_div(10, 4) is 3. b must be
// positive (b <= 0 gives NaN, which rejects). Integers are divided as integers, so that the
// result is exact wherever the operands are; other values as ceil(a / b).
double ceil_div(double a, double b) {
  if (!(b > 0) || std::isnan(a)) return std::numeric_limits<double>::quiet_NaN();
  constexpr double kExact = 9007199254740992.0;  // 2^53
  if (std::fabs(a) < kExact && b < kExact && a == std::trunc(a) && b == std::trunc(b)) {
    const auto ia = static_cast<std::int64_t>(a);
    const auto ib = static_cast<std::int64_t>(b);
    // / truncates towards zero: that is the ceiling already for a negative quotient.
    return static_cast<double>(ia / ib + (ia % ib > 0 ? 1 : 0));
  }
  return std::ceil(a / b);
}

// Runs `f`; a muparser exception becomes kInvalidArgument "restriction '<expr>': <what>; ...".
template <class F>
Status guarded(std::string_view restriction, std::string_view what, F&& f) {
  try {
    f();
    return {};
  } catch (const mu::Parser::exception_type& e) {
    return make_error(ErrorCode::kInvalidArgument, fmt::format("restriction '{}': {}; muparser: {}",
                                                               restriction, what, e.GetMsg()));
  }
}

void add_syntax(mu::Parser& parser) {
  parser.DefineInfixOprt("!", logical_not);
  parser.DefineOprt("%", modulo, mu::prMUL_DIV, mu::oaLEFT, true);
  parser.DefineFun("floor", floor_of);
  parser.DefineFun("ceil", ceil_of);
  parser.DefineFun("ceil_div", ceil_div);
}

using Constants = std::vector<std::pair<std::string, double>>;

// The parameters and constants a restriction names (indices, ascending and distinct), or an error
// naming the restriction, the bad name and every name it could have been.
struct Names {
  std::vector<std::size_t> params, constants;
};
Result<Names> resolve_names(const std::string& restriction, const std::vector<std::string>& names,
                            const std::vector<Param>& params, const Constants& constants) {
  Names out;
  for (const std::string& name : names) {
    const auto p = std::find_if(params.begin(), params.end(),
                                [&](const Param& param) { return param.name == name; });
    if (p != params.end()) {
      out.params.push_back(static_cast<std::size_t>(p - params.begin()));
      continue;
    }
    const auto c = std::find_if(constants.begin(), constants.end(),
                                [&](const auto& constant) { return constant.first == name; });
    if (c != constants.end()) {
      out.constants.push_back(static_cast<std::size_t>(c - constants.begin()));
      continue;
    }
    std::vector<std::string_view> known_params, known_constants;
    for (const Param& param : params) known_params.push_back(param.name);
    for (const auto& constant : constants) known_constants.push_back(constant.first);
    std::string expected = fmt::format(
        "a parameter ({})",
        known_params.empty() ? "none" : fmt::format("{}", fmt::join(known_params, ", ")));
    if (!known_constants.empty()) {
      expected += fmt::format(" or a constant ({})", fmt::join(known_constants, ", "));
    }
    return make_error(ErrorCode::kInvalidArgument,
                      fmt::format("restriction '{}': unknown name '{}'; expected {}", restriction,
                                  name, expected));
  }
  for (auto* list : {&out.params, &out.constants}) {
    std::sort(list->begin(), list->end());
    list->erase(std::unique(list->begin(), list->end()), list->end());
  }
  return out;
}

// muparser's `=` assigns to the variable, which would change the config under evaluation.
bool has_assignment(std::string_view expr) {
  for (std::size_t i = 0; i < expr.size(); ++i) {
    if (expr[i] != '=') continue;
    if (i + 1 < expr.size() && expr[i + 1] == '=') {
      ++i;  // "=="
      continue;
    }
    if (i == 0 || std::string_view("<>!").find(expr[i - 1]) == std::string_view::npos) return true;
  }
  return false;
}

}  // namespace

struct RestrictionSet::Parsers {
  // unique_ptr: a parser's compiled bytecode must not be copied around by vector growth.
  std::vector<std::unique_ptr<mu::Parser>> list;
  std::vector<std::string> expressions;
};

RestrictionSet::RestrictionSet(std::size_t params)
    : slots_(params, 0.0), parsers_(std::make_unique<Parsers>()) {}

RestrictionSet::~RestrictionSet() = default;

Result<std::unique_ptr<RestrictionSet>> RestrictionSet::create(
    const std::vector<Param>& params, const std::vector<std::string>& restrictions,
    const Constants& constants, bool compile) {
  std::unique_ptr<RestrictionSet> set(new RestrictionSet(params.size()));
  // Parameters' strings are coded first, literals after: the same input, the same codes, in
  // every walk (each walk builds its own set).
  StringCodes codes;
  std::vector<std::string> string_params;
  for (std::size_t i = 0; i < params.size(); ++i) {
    std::vector<double>& values = set->values_.emplace_back();
    const bool strings = is_string_param(params[i]);
    if (strings) string_params.push_back(params[i].name);
    for (const ParamValue& v : params[i].values) {
      values.push_back(strings ? codes.code(v) : static_cast<double>(std::get<std::int64_t>(v)));
    }
    set->slots_[i] = values.front();
  }
  std::vector<RestrictionProgram::Slot> slots;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const auto [lo, hi] = std::minmax_element(set->values_[i].begin(), set->values_[i].end());
    slots.push_back({params[i].name, *lo, *hi});
  }
  for (const std::string& expr : restrictions) {
    Result<std::string> text = encode_strings(expr, string_params, codes);
    if (!text) return std::unexpected(text.error());
    if (has_assignment(*text)) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("restriction '{}': assignment '=' is not allowed; expected a "
                                    "comparison such as '=='",
                                    expr));
    }
    // A parser without variables lists the names the expression uses, defined or not.
    std::vector<std::string> names;
    Status parsed = guarded(expr, "does not parse", [&] {
      mu::Parser probe;
      add_syntax(probe);
      probe.SetExpr(*text);
      for (const auto& [name, unused] : probe.GetUsedVar()) names.push_back(name);
    });
    if (!parsed) return std::unexpected(parsed.error());
    Result<Names> used = resolve_names(expr, names, params, constants);
    if (!used) return std::unexpected(used.error());

    auto parser = std::make_unique<mu::Parser>();
    int results = 0;
    Status compiled = guarded(expr, "does not evaluate", [&] {
      add_syntax(*parser);
      // Only the names it uses: a parameter that clashes with a muparser name elsewhere is fine.
      for (std::size_t i : used->params) parser->DefineVar(params[i].name, &set->slots_[i]);
      // Constants, not variables: the bytecode folds them (a device limit costs nothing per
      // evaluation).
      for (std::size_t c : used->constants) {
        parser->DefineConst(constants[c].first, constants[c].second);
      }
      parser->SetExpr(*text);
      (void)parser->Eval();  // the first Eval compiles to bytecode
      results = parser->GetNumResults();
    });
    if (!compiled) return std::unexpected(compiled.error());
    if (results != 1) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("restriction '{}': does not evaluate to one value; expected "
                                    "one expression, got {} separated by ','",
                                    expr, results));
    }
    // Only the constants it names, as muparser was given them.
    RestrictionProgram::Constants named;
    for (std::size_t c : used->constants) named.push_back(constants[c]);
    set->programs_.push_back(compile ? RestrictionProgram::compile(*text, slots, named)
                                     : std::nullopt);
    set->uses_.push_back(std::move(used->params));
    set->constant_uses_.push_back(std::move(used->constants));
    set->parsers_->list.push_back(std::move(parser));
    set->parsers_->expressions.push_back(expr);
  }
  return set;
}

int RestrictionSet::first_failing() const {
  std::vector<std::size_t> all(parsers_->list.size());
  for (std::size_t r = 0; r < all.size(); ++r) all[r] = r;
  return first_failing(all);
}

int RestrictionSet::first_failing(const std::vector<std::size_t>& among) const {
  for (std::size_t r : among) {
    const double v = programs_[r] ? programs_[r]->eval(slots_.data()) : value(r);
    if (v == 0 || std::isnan(v)) return static_cast<int>(r);
  }
  return -1;
}

double RestrictionSet::value(std::size_t r) const {
  if (programs_[r]) return programs_[r]->eval(slots_.data());
  double value = 0;
  Status evaluated =
      guarded(parsers_->expressions[r], "evaluation", [&] { value = parsers_->list[r]->Eval(); });
  // Every restriction evaluated once in create(); bytecode evaluation does not throw after that.
  if (!evaluated) std::fprintf(stderr, "ktune: %s\n", evaluated.error().message.c_str());
  KTUNE_CHECK(evaluated.has_value());
  return value;
}

}  // namespace ktune::space_detail
