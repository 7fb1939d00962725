// SearchSpace: tunable parameters with their value lists, restrictions as expressions over them
// (muparser syntax: TILE_M * TILE_N <= 4096 && UNROLL != 3), and enumeration of valid configs.
// Restrictions may use && || == != < <= > >= + - * / ^ ?: and muparser's functions (min, max,
// abs, ...), plus `!` (logical not, prefix; `!!x` does not parse), `%` (fmod, binds like *),
// floor, ceil and ceil_div(a, b) (integer ceiling division; b <= 0 gives NaN). Besides the
// parameters they may name constants (problem sizes, device limits) bound for the whole space.
// A string parameter may only be compared with a string literal: SCHED == "dynamic",
// SCHED != 'static', "dynamic" == SCHED (or with another string parameter).
// Values are doubles during evaluation: integers are exact up to 2^53. A restriction keeps a
// config when it evaluates to a non-zero number (NaN rejects).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "ktune/core/status.h"

namespace ktune {

// Integers are usable in restrictions as numbers; strings in == and != with string literals. In
// the source both are raw tokens.
using ParamValue = std::variant<std::int64_t, std::string>;
[[nodiscard]] std::string param_value_str(const ParamValue& value);

struct Param {
  std::string name;  // a C identifier; becomes a #define in the rendered source
  std::vector<ParamValue> values;
};

// One point of the space: a value for each parameter, in the space's parameter order.
struct Config {
  std::vector<std::string> names;
  std::vector<ParamValue> values;

  // "TILE_M=32 TILE_N=64 UNROLL=4".
  [[nodiscard]] std::string str() const;
  [[nodiscard]] const ParamValue* find(std::string_view name) const;
};

// The valid configs as value indices, the parameters named once (SearchSpace::params()): row i is
// config i of SearchSpace::enumerate(), one index into each parameter's values, each index in the
// fewest bytes that hold every parameter's (1 up to 256 values, 2 up to 65536, else 4). Configs
// are made on demand (SearchSpace::config); a row costs a few bytes, a Config a few allocations.
struct ConfigIndices {
  std::size_t width = 0;           // parameters per row
  std::size_t rows = 0;            // configs (a space without parameters has one, empty)
  std::size_t bytes = 1;           // per index: 1, 2 or 4
  std::vector<std::uint8_t> data;  // rows x width indices, row after row, native byte order

  [[nodiscard]] std::size_t size() const { return rows; }
  // The index of parameter `param`'s value in config `row`.
  [[nodiscard]] std::uint32_t at(std::size_t row, std::size_t param) const {
    const std::uint8_t* p = data.data() + (row * width + param) * bytes;
    if (bytes == 1) return *p;
    if (bytes == 2) {
      std::uint16_t v = 0;
      std::memcpy(&v, p, 2);
      return v;
    }
    std::uint32_t v = 0;
    std::memcpy(&v, p, 4);
    return v;
  }
};

// Bounds on one walk of a SearchSpace, so that no spec can hang or exhaust memory: past them
// the walk stops and the call fails with kInvalidArgument saying which bound and how to stay
// within it.
struct SpaceLimits {
  std::uint64_t max_evaluations = 50'000'000;  // a second or so of evaluation
  std::uint64_t max_configs = 200'000;  // enumerate() and enumerate_indices(): configs listed
};

// A name bound to one value in every restriction of a space: a problem size, a device limit.
using SpaceConstants = std::vector<std::pair<std::string, double>>;

class SearchSpace {
 public:
  struct RestrictionCount {
    std::string expression;
    // The parameters (in parameter order) then the constants (in constant order) it names, so a
    // caller can tell restrictions on the device's limits from restrictions on the kernel.
    std::vector<std::string> names;
    bool names_constant = false;  // it names at least one constant
    // Configs this restriction rejected first. The walk binds parameters in their order and
    // evaluates each restriction as soon as its last parameter is bound (restrictions bound at
    // the same parameter in list order), so a rejection near the root counts a whole subtree; a
    // restriction that names only constants is evaluated once, and when false removes them all.
    std::uint64_t removed = 0;
  };
  struct Stats {
    std::uint64_t total = 0;  // product of the value-list sizes (saturates at 2^64 - 1)
    std::vector<RestrictionCount> restrictions;
    std::uint64_t valid = 0;
    std::uint64_t evaluations = 0;  // restriction evaluations the walk made
  };
  using Limits = SpaceLimits;

  // Fails (kInvalidArgument) on an empty or duplicate parameter, an empty value list, a name that
  // is not a C identifier, a constant that is not a C identifier, is not finite, or has the name
  // of a parameter or another constant, and a restriction that does not parse, names something
  // that is neither a parameter nor a constant, uses a string parameter other than in == or !=
  // with a string, or does not evaluate; the message names the restriction and the problem.
  [[nodiscard]] static Result<SearchSpace> create(std::vector<Param> params,
                                                  std::vector<std::string> restrictions,
                                                  SpaceConstants constants = {});

  SearchSpace();
  ~SearchSpace();
  SearchSpace(SearchSpace&&) noexcept;
  SearchSpace& operator=(SearchSpace&&) noexcept;

  [[nodiscard]] const std::vector<Param>& params() const { return params_; }
  [[nodiscard]] const std::vector<std::string>& restrictions() const { return restrictions_; }
  [[nodiscard]] const SpaceConstants& constants() const { return constants_; }
  // Valid configs in lexicographic order of value indices (the last parameter varies fastest),
  // by backtracking: a restriction prunes every config below the parameter where it fails, so
  // the walk visits the valid configs and the rejected prefixes, not the whole product.
  [[nodiscard]] Result<std::vector<Config>> enumerate(const Limits& limits = {}) const;
  // The same configs, in the same order, as value indices: what enumerate() builds its Configs
  // from, for callers that keep few of them or only need to count and index.
  [[nodiscard]] Result<ConfigIndices> enumerate_indices(const Limits& limits = {}) const;
  // Config `row` of a list that enumerate_indices() of this space made.
  [[nodiscard]] Config config(const ConfigIndices& list, std::size_t row) const;
  // Counts without materialising: below the deepest parameter that a restriction names, every
  // completion is valid and is counted by multiplication, not visited.
  [[nodiscard]] Result<Stats> stats(const Limits& limits = {}) const;
  // Which restriction leaves no config, for an error a person can act on: the restrictions are
  // applied in list order and the first after which nothing is valid is named, with the configs
  // the ones before it left (all of which it removed). nullopt when some config is valid.
  struct EmptyCause {
    std::size_t restriction = 0;  // index into restrictions()
    std::uint64_t removed = 0;    // the configs left before it
  };
  [[nodiscard]] Result<std::optional<EmptyCause>> empty_cause(const Limits& limits = {}) const;

 private:
  struct Impl;
  std::vector<Param> params_;
  std::vector<std::string> restrictions_;
  SpaceConstants constants_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ktune
