// Size expressions through muparser: the names an expression uses, and its value for a problem.
#include "spec/spec_expr.h"

#include <fmt/format.h>
#include <muParser.h>

#include <cmath>
#include <deque>
#include <limits>

namespace ktune::spec_detail {
namespace {

// Backing storage for variables muparser creates for names it has not seen.
struct VarStore {
  std::deque<double> values;
  std::vector<std::string> order;
};

double* make_var(const char* name, void* user) {
  auto* store = static_cast<VarStore*>(user);
  store->order.emplace_back(name);
  store->values.push_back(0);
  return &store->values.back();
}

double floor_fn(double x) { return std::floor(x); }
double ceil_fn(double x) { return std::ceil(x); }
// Blocks for a extent: ceil(a / b) on whole numbers; NaN for b <= 0 (an error where used).
double ceil_div_fn(double a, double b) {
  return b > 0 ? std::ceil(a / b) : std::numeric_limits<double>::quiet_NaN();
}

// muparser's built-ins (min, max, ...) plus floor, ceil and ceil_div, which sizes and launch
// geometries need (tiles: ceil(N / 64), blocks: ceil_div(N, BLOCK)).
void add_functions(mu::Parser& parser) {
  parser.DefineFun("floor", floor_fn);
  parser.DefineFun("ceil", ceil_fn);
  parser.DefineFun("ceil_div", ceil_div_fn);
}

std::string parser_message(const mu::Parser::exception_type& e) {
  std::string msg = e.GetMsg();
  while (!msg.empty() && (msg.back() == '.' || msg.back() == ' ')) msg.pop_back();
  return msg;
}

}  // namespace

std::expected<std::vector<std::string>, std::string> expr_names(std::string_view expr) {
  VarStore store;
  try {
    mu::Parser parser;
    add_functions(parser);
    parser.SetVarFactory(make_var, &store);
    parser.SetExpr(std::string(expr));
    (void)parser.GetUsedVar();  // parses, creating a variable per unknown name
    if (parser.GetNumResults() > 1) return std::unexpected("expected one value; got a list");
  } catch (const mu::Parser::exception_type& e) {
    return std::unexpected(parser_message(e));
  }
  return store.order;
}

std::expected<double, std::string> eval_expr(std::string_view expr, const Bindings& bindings) {
  std::deque<double> values;
  double result = 0;
  try {
    mu::Parser parser;
    add_functions(parser);
    for (const auto& [name, value] : bindings) {
      values.push_back(static_cast<double>(value));
      parser.DefineVar(name, &values.back());
    }
    parser.SetExpr(std::string(expr));
    result = parser.Eval();
    if (parser.GetNumResults() > 1) return std::unexpected("expected one value; got a list");
  } catch (const mu::Parser::exception_type& e) {
    return std::unexpected(parser_message(e));
  }
  if (!std::isfinite(result)) return std::unexpected(fmt::format("evaluates to {}", result));
  return result;
}

std::expected<double, std::string> eval_real_expr(
    std::string_view expr, const std::vector<std::pair<std::string, double>>& bindings) {
  std::deque<double> values;
  double result = 0;
  try {
    mu::Parser parser;
    add_functions(parser);
    for (const auto& [name, value] : bindings) {
      values.push_back(value);
      parser.DefineVar(name, &values.back());
    }
    parser.SetExpr(std::string(expr));
    result = parser.Eval();
  } catch (const mu::Parser::exception_type& e) {
    return std::unexpected(parser_message(e));
  }
  if (!std::isfinite(result)) return std::unexpected(fmt::format("evaluates to {}", result));
  return result;
}

}  // namespace ktune::spec_detail
