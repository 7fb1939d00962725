// RestrictionSet: the muparser adapter. Every muparser call goes through guarded(), the one place
// where mu::Parser::exception_type becomes an Error. Besides muparser's built-ins
// (&& || == != < <= > >= + - * / ^ ?: min max abs ...) each parser gets `!` (logical not,
// prefix) and `%` (fmod, precedence of * and /).
#include "restriction_set.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <muParser.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string_view>

namespace ktune::space_detail {
namespace {

double logical_not(double v) { return v == 0 ? 1 : 0; }
double modulo(double a, double b) { return std::fmod(a, b); }

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

void add_operators(mu::Parser& parser) {
  parser.DefineInfixOprt("!", logical_not);
  parser.DefineOprt("%", modulo, mu::prMUL_DIV, mu::oaLEFT, true);
}

bool is_integer_param(const Param& param) {
  for (const ParamValue& v : param.values) {
    if (!std::holds_alternative<std::int64_t>(v)) return false;
  }
  return true;
}

// The parameter each name refers to, or an error naming the restriction and the bad name.
Result<std::vector<std::size_t>> resolve_names(const std::string& restriction,
                                               const std::vector<std::string>& names,
                                               const std::vector<Param>& params) {
  std::vector<std::size_t> indices;
  for (const std::string& name : names) {
    std::size_t i = 0;
    while (i < params.size() && params[i].name != name) ++i;
    if (i == params.size()) {
      std::vector<std::string_view> known;
      known.reserve(params.size());
      for (const Param& p : params) known.push_back(p.name);
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("restriction '{}': unknown parameter '{}'; known: {}",
                                    restriction, name, fmt::join(known, ", ")));
    }
    if (!is_integer_param(params[i])) {
      return make_error(
          ErrorCode::kInvalidArgument,
          fmt::format("restriction '{}': parameter '{}' has string values; expected only "
                      "integer parameters in restrictions",
                      restriction, name));
    }
    indices.push_back(i);
  }
  return indices;
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
    const std::vector<Param>& params, const std::vector<std::string>& restrictions) {
  std::unique_ptr<RestrictionSet> set(new RestrictionSet(params.size()));
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (is_integer_param(params[i])) {
      set->slots_[i] = static_cast<double>(std::get<std::int64_t>(params[i].values.front()));
    }
  }
  for (const std::string& expr : restrictions) {
    if (has_assignment(expr)) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("restriction '{}': assignment '=' is not allowed; expected a "
                                    "comparison such as '=='",
                                    expr));
    }
    // A parser without variables lists the names the expression uses, defined or not.
    std::vector<std::string> names;
    Status parsed = guarded(expr, "does not parse", [&] {
      mu::Parser probe;
      add_operators(probe);
      probe.SetExpr(expr);
      for (const auto& [name, unused] : probe.GetUsedVar()) names.push_back(name);
    });
    if (!parsed) return std::unexpected(parsed.error());
    Result<std::vector<std::size_t>> used = resolve_names(expr, names, params);
    if (!used) return std::unexpected(used.error());

    auto parser = std::make_unique<mu::Parser>();
    int results = 0;
    Status compiled = guarded(expr, "does not evaluate", [&] {
      add_operators(*parser);
      // Only the names it uses: a parameter that clashes with a muparser name elsewhere is fine.
      for (std::size_t i : *used) parser->DefineVar(params[i].name, &set->slots_[i]);
      parser->SetExpr(expr);
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
    std::vector<std::size_t> uses = *used;
    std::sort(uses.begin(), uses.end());
    uses.erase(std::unique(uses.begin(), uses.end()), uses.end());
    set->uses_.push_back(std::move(uses));
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
  int failing = -1;
  const auto& list = parsers_->list;
  Status evaluated = guarded("", "evaluation", [&] {
    for (std::size_t r : among) {
      const double value = list[r]->Eval();
      if (value == 0 || std::isnan(value)) {
        failing = static_cast<int>(r);
        return;
      }
    }
  });
  // Every restriction evaluated once in create(); bytecode evaluation does not throw after that.
  if (!evaluated) std::fprintf(stderr, "ktune: %s\n", evaluated.error().message.c_str());
  KTUNE_CHECK(evaluated.has_value());
  return failing;
}

}  // namespace ktune::space_detail
