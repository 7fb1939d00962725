// SearchSpace: parameter validation, the odometer walk over value indices, and the enumeration
// and statistics built on it. Restriction expressions live in restriction_set.{h,cpp}.
#include "ktune/space/search_space.h"

#include <fmt/format.h>

#include <set>

#include "restriction_set.h"

namespace ktune {

using space_detail::RestrictionSet;

std::string param_value_str(const ParamValue& value) {
  if (const auto* i = std::get_if<std::int64_t>(&value)) return std::to_string(*i);
  return std::get<std::string>(value);
}

std::string Config::str() const {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < values.size(); ++i) {
    if (i > 0) out += ' ';
    out += names[i];
    out += '=';
    out += param_value_str(values[i]);
  }
  return out;
}

const ParamValue* Config::find(std::string_view name) const {
  for (std::size_t i = 0; i < names.size() && i < values.size(); ++i) {
    if (names[i] == name) return &values[i];
  }
  return nullptr;
}

namespace {

bool is_c_identifier(std::string_view name) {
  const auto alpha = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  };
  if (name.empty() || !alpha(name.front())) return false;
  for (char c : name) {
    if (!alpha(c) && !(c >= '0' && c <= '9')) return false;
  }
  return true;
}

Status validate_params(const std::vector<Param>& params) {
  std::set<std::string_view> seen;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const Param& p = params[i];
    if (p.name.empty()) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("parameter {}: empty name; expected a C identifier", i));
    }
    if (!is_c_identifier(p.name)) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("parameter '{}': not a C identifier; expected letters, "
                                    "digits and '_', not starting with a digit",
                                    p.name));
    }
    if (!seen.insert(p.name).second) {
      return make_error(
          ErrorCode::kInvalidArgument,
          fmt::format("parameter '{}': duplicate name; expected each name once", p.name));
    }
    if (p.values.empty()) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("parameter '{}': empty value list; expected at least one "
                                    "value",
                                    p.name));
    }
    std::set<ParamValue> values;
    for (const ParamValue& v : p.values) {
      if (!values.insert(v).second) {
        return make_error(ErrorCode::kInvalidArgument,
                          fmt::format("parameter '{}': duplicate value '{}'; expected each value "
                                      "once",
                                      p.name, param_value_str(v)));
      }
    }
  }
  return {};
}

}  // namespace

struct SearchSpace::Impl {
  // Each parameter's values as restriction variables (0 for string values, never read).
  std::vector<std::vector<double>> numeric;

  // Calls visit(indices, failing) for every point in odometer order, last parameter fastest;
  // `failing` is the first restriction that rejects it, or -1. A fresh RestrictionSet per walk
  // keeps the const methods of SearchSpace safe to call from several threads.
  template <class Visit>
  void walk(const std::vector<Param>& params, const std::vector<std::string>& restrictions,
            Visit&& visit) const {
    Result<std::unique_ptr<RestrictionSet>> set = RestrictionSet::create(params, restrictions);
    KTUNE_CHECK(set.has_value());  // create() of the space validated the same input
    RestrictionSet& eval = **set;
    const std::size_t n = params.size();
    std::vector<std::size_t> index(n, 0);
    for (std::size_t p = 0; p < n; ++p) eval.set(p, numeric[p][0]);
    while (true) {
      visit(index, eval.first_failing());
      // Advance the odometer; only the digits that changed get new variable values.
      std::size_t p = n;
      while (p > 0) {
        --p;
        if (++index[p] < numeric[p].size()) {
          eval.set(p, numeric[p][index[p]]);
          break;
        }
        index[p] = 0;
        eval.set(p, numeric[p][0]);
        if (p == 0) return;
      }
      if (n == 0) return;
    }
  }
};

SearchSpace::SearchSpace() : impl_(std::make_unique<Impl>()) {}
SearchSpace::~SearchSpace() = default;
SearchSpace::SearchSpace(SearchSpace&&) noexcept = default;
SearchSpace& SearchSpace::operator=(SearchSpace&&) noexcept = default;

Result<SearchSpace> SearchSpace::create(std::vector<Param> params,
                                        std::vector<std::string> restrictions) {
  if (Status ok = validate_params(params); !ok) return std::unexpected(ok.error());
  if (auto set = RestrictionSet::create(params, restrictions); !set) {
    return std::unexpected(set.error());
  }
  SearchSpace space;
  for (const Param& p : params) {
    std::vector<double>& numeric = space.impl_->numeric.emplace_back();
    for (const ParamValue& v : p.values) {
      const auto* i = std::get_if<std::int64_t>(&v);
      numeric.push_back(i ? static_cast<double>(*i) : 0.0);
    }
  }
  space.params_ = std::move(params);
  space.restrictions_ = std::move(restrictions);
  return space;
}

std::vector<Config> SearchSpace::enumerate() const {
  std::vector<Config> configs;
  if (!impl_) return configs;  // moved-from
  std::vector<std::string> names;
  for (const Param& p : params_) names.push_back(p.name);
  impl_->walk(params_, restrictions_, [&](const std::vector<std::size_t>& index, int failing) {
    if (failing >= 0) return;
    Config& c = configs.emplace_back();
    c.names = names;
    c.values.reserve(index.size());
    for (std::size_t p = 0; p < index.size(); ++p) c.values.push_back(params_[p].values[index[p]]);
  });
  return configs;
}

SearchSpace::Stats SearchSpace::stats() const {
  Stats stats;
  for (const std::string& r : restrictions_) stats.restrictions.push_back({r, 0});
  if (!impl_) return stats;
  impl_->walk(params_, restrictions_, [&](const std::vector<std::size_t>&, int failing) {
    ++stats.total;
    if (failing < 0) {
      ++stats.valid;
    } else {
      ++stats.restrictions[static_cast<std::size_t>(failing)].removed;
    }
  });
  return stats;
}

}  // namespace ktune
