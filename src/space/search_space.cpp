// SearchSpace: parameter validation, and the enumeration and statistics built on the
// backtracking walk (space_walk.h). Restriction expressions live in restriction_set.{h,cpp}.
#include "ktune/space/search_space.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "restriction_set.h"
#include "space_walk.h"

namespace ktune {

using space_detail::RestrictionSet;
using space_detail::SpaceWalk;

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
    if (p.values.size() > std::numeric_limits<std::uint32_t>::max()) {
      // ConfigIndices holds 32-bit indices.
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("parameter '{}': {} values; expected at most {}", p.name,
                                    p.values.size(), std::numeric_limits<std::uint32_t>::max()));
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

// Constants share the restrictions' namespace with the parameters, so a clash would make a name
// mean two things.
Status validate_constants(const std::vector<Param>& params, const SpaceConstants& constants) {
  std::set<std::string_view> seen;
  for (const auto& [name, value] : constants) {
    if (!is_c_identifier(name)) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("constant '{}': not a C identifier; expected letters, digits "
                                    "and '_', not starting with a digit",
                                    name));
    }
    if (!seen.insert(name).second) {
      return make_error(
          ErrorCode::kInvalidArgument,
          fmt::format("constant '{}': duplicate name; expected each name once", name));
    }
    for (const Param& p : params) {
      if (p.name == name) {
        return make_error(ErrorCode::kInvalidArgument,
                          fmt::format("'{}' is both a parameter and a constant (= {}); expected "
                                      "distinct names (rename the parameter)",
                                      name, value));
      }
    }
    if (!std::isfinite(value)) {
      return make_error(
          ErrorCode::kInvalidArgument,
          fmt::format("constant '{}': value {} is not finite; expected a number", name, value));
    }
  }
  return {};
}

}  // namespace

struct SearchSpace::Impl {
  // Per restriction, the names for Stats (RestrictionCount::names, names_constant).
  std::vector<std::vector<std::string>> names;
  std::vector<bool> names_constant;

  // Runs a SpaceWalk with a fresh RestrictionSet (the parsers hold the variable slots), which
  // keeps the const methods of SearchSpace safe to call from several threads.
  Result<std::uint64_t> walk(const std::vector<Param>& params,
                             const std::vector<std::string>& restrictions,
                             const SpaceConstants& constants, std::uint64_t max_evaluations,
                             SpaceWalk::Visitor& visitor) const {
    Result<std::unique_ptr<RestrictionSet>> set =
        RestrictionSet::create(params, restrictions, constants);
    KTUNE_CHECK(set.has_value());  // create() of the space validated the same input
    SpaceWalk walk(params, **set);
    if (Status s = walk.run(max_evaluations, visitor); !s) return std::unexpected(s.error());
    return walk.evaluations();
  }
};

SearchSpace::SearchSpace() : impl_(std::make_unique<Impl>()) {}
SearchSpace::~SearchSpace() = default;
SearchSpace::SearchSpace(SearchSpace&&) noexcept = default;
SearchSpace& SearchSpace::operator=(SearchSpace&&) noexcept = default;

Result<SearchSpace> SearchSpace::create(std::vector<Param> params,
                                        std::vector<std::string> restrictions,
                                        SpaceConstants constants) {
  if (Status ok = validate_params(params); !ok) return std::unexpected(ok.error());
  if (Status ok = validate_constants(params, constants); !ok) return std::unexpected(ok.error());
  auto set = RestrictionSet::create(params, restrictions, constants);
  if (!set) return std::unexpected(set.error());
  SearchSpace space;
  for (std::size_t r = 0; r < restrictions.size(); ++r) {
    std::vector<std::string>& names = space.impl_->names.emplace_back();
    for (std::size_t p : (*set)->uses()[r]) names.push_back(params[p].name);
    for (std::size_t c : (*set)->constant_uses()[r]) names.push_back(constants[c].first);
    space.impl_->names_constant.push_back(!(*set)->constant_uses()[r].empty());
  }
  space.params_ = std::move(params);
  space.restrictions_ = std::move(restrictions);
  space.constants_ = std::move(constants);
  return space;
}

namespace {

// Appends every completion of a valid block in odometer order, last parameter fastest, each index
// as an Index (the ConfigIndices' width).
template <class Index>
struct EmitIndices final : SpaceWalk::Visitor {
  const std::vector<Param>& params;
  ConfigIndices& out;
  std::uint64_t max_configs;
  bool too_many = false;
  std::vector<Index> row;
  EmitIndices(const std::vector<Param>& p, ConfigIndices& o, std::uint64_t m)
      : params(p), out(o), max_configs(m), row(p.size()) {}
  void rejected(std::size_t, std::uint64_t) override {}
  [[nodiscard]] bool wants_rejections() const override { return false; }
  bool valid_block(const std::vector<std::size_t>& prefix, int depth,
                   std::uint64_t count) override {
    if (count == std::numeric_limits<std::uint64_t>::max() || out.rows + count > max_configs) {
      too_many = true;
      return false;
    }
    const std::size_t first_free = depth < 0 ? 0 : static_cast<std::size_t>(depth) + 1;
    for (std::size_t p = 0; p < row.size(); ++p) {
      row[p] = p < first_free ? static_cast<Index>(prefix[p]) : 0;
    }
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(row.data());
    for (std::uint64_t i = 0; i < count; ++i) {
      out.data.insert(out.data.end(), bytes, bytes + row.size() * sizeof(Index));
      for (std::size_t p = row.size(); p > first_free; --p) {  // advance the free digits
        if (++row[p - 1] < params[p - 1].values.size()) break;
        row[p - 1] = 0;
      }
    }
    out.rows += static_cast<std::size_t>(count);
    return true;
  }
};

}  // namespace

Result<ConfigIndices> SearchSpace::enumerate_indices(const Limits& limits) const {
  ConfigIndices out;
  out.width = params_.size();
  if (!impl_) return out;  // moved-from
  std::size_t largest = 0;
  for (const Param& p : params_) largest = std::max(largest, p.values.size());
  out.bytes = largest <= 256 ? 1 : largest <= 65536 ? 2 : 4;
  const auto walk = [&](auto& emit) -> Status {
    Result<std::uint64_t> walked =
        impl_->walk(params_, restrictions_, constants_, limits.max_evaluations, emit);
    if (emit.too_many) {
      return make_error(ErrorCode::kInvalidArgument,
                        fmt::format("search space: more than {} valid configs; expected at most "
                                    "{} to tune every one (add restrictions, or fewer values)",
                                    limits.max_configs, limits.max_configs));
    }
    if (!walked) return std::unexpected(walked.error());
    return {};
  };
  Status done;
  if (out.bytes == 1) {
    EmitIndices<std::uint8_t> emit(params_, out, limits.max_configs);
    done = walk(emit);
  } else if (out.bytes == 2) {
    EmitIndices<std::uint16_t> emit(params_, out, limits.max_configs);
    done = walk(emit);
  } else {
    EmitIndices<std::uint32_t> emit(params_, out, limits.max_configs);
    done = walk(emit);
  }
  if (!done) return std::unexpected(done.error());
  return out;
}

Config SearchSpace::config(const ConfigIndices& list, std::size_t row) const {
  Config c;
  c.names.reserve(params_.size());
  c.values.reserve(params_.size());
  for (std::size_t p = 0; p < params_.size() && p < list.width; ++p) {
    c.names.push_back(params_[p].name);
    c.values.push_back(params_[p].values[list.at(row, p)]);
  }
  return c;
}

Result<std::vector<Config>> SearchSpace::enumerate(const Limits& limits) const {
  Result<ConfigIndices> indices = enumerate_indices(limits);
  if (!indices) return std::unexpected(indices.error());
  std::vector<Config> configs;
  configs.reserve(indices->size());
  for (std::size_t i = 0; i < indices->size(); ++i) configs.push_back(config(*indices, i));
  return configs;
}

Result<SearchSpace::Stats> SearchSpace::stats(const Limits& limits) const {
  Stats stats;
  if (!impl_) return stats;  // moved-from
  for (std::size_t r = 0; r < restrictions_.size(); ++r) {
    stats.restrictions.push_back(
        {restrictions_[r], impl_->names[r], static_cast<bool>(impl_->names_constant[r]), 0});
  }
  struct Count final : SpaceWalk::Visitor {
    Stats& stats;
    explicit Count(Stats& s) : stats(s) {}
    static std::uint64_t add(std::uint64_t a, std::uint64_t b) {
      std::uint64_t out = 0;
      return __builtin_add_overflow(a, b, &out) ? std::numeric_limits<std::uint64_t>::max() : out;
    }
    void rejected(std::size_t r, std::uint64_t removed) override {
      stats.restrictions[r].removed = add(stats.restrictions[r].removed, removed);
    }
    bool valid_block(const std::vector<std::size_t>&, int, std::uint64_t count) override {
      stats.valid = add(stats.valid, count);
      return true;
    }
  } count(stats);
  Result<std::uint64_t> walked =
      impl_->walk(params_, restrictions_, constants_, limits.max_evaluations, count);
  if (!walked) return std::unexpected(walked.error());
  stats.evaluations = *walked;
  stats.total = 1;
  for (const Param& p : params_)
    stats.total = space_detail::saturating_mul(stats.total, p.values.size());
  return stats;
}

Result<std::optional<SearchSpace::EmptyCause>> SearchSpace::empty_cause(
    const Limits& limits) const {
  Result<Stats> all = stats(limits);
  if (!all) return std::unexpected(all.error());
  if (all->valid > 0) return std::optional<EmptyCause>();
  // Counted again under each prefix of the list; only on this error path, and counting is cheap
  // (it multiplies below the restricted parameters instead of visiting).
  std::uint64_t left = all->total;
  for (std::size_t k = 0; k < restrictions_.size(); ++k) {
    std::vector<std::string> prefix(restrictions_.begin(),
                                    restrictions_.begin() + static_cast<std::ptrdiff_t>(k) + 1);
    Result<SearchSpace> space = create(params_, std::move(prefix), constants_);
    if (!space) return std::unexpected(space.error());
    Result<Stats> st = space->stats(limits);
    if (!st) return std::unexpected(st.error());
    if (st->valid == 0) return std::optional<EmptyCause>(EmptyCause{k, left});
    left = st->valid;
  }
  return make_error(ErrorCode::kInternal, "empty space without a restriction that empties it");
}

}  // namespace ktune
