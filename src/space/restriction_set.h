// RestrictionSet: a SearchSpace's restriction expressions compiled with muparser, evaluated
// against one slot per parameter, with the space's named constants folded in. Private to the
// space module; the only code that sees muparser.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ktune/core/status.h"
#include "ktune/space/search_space.h"

namespace ktune::space_detail {

class RestrictionSet {
 public:
  // Checks every restriction (parses, names only parameters of `params` and `constants`, uses
  // string parameters only in == and != with string literals, evaluates at the first value of
  // each parameter) and compiles it. Messages name the restriction. Names are assumed distinct
  // (SearchSpace::create checks).
  [[nodiscard]] static Result<std::unique_ptr<RestrictionSet>> create(
      const std::vector<Param>& params, const std::vector<std::string>& restrictions,
      const std::vector<std::pair<std::string, double>>& constants);

  ~RestrictionSet();
  // The parsers hold pointers into slots_, so the set never moves.
  RestrictionSet(const RestrictionSet&) = delete;
  RestrictionSet& operator=(const RestrictionSet&) = delete;

  // Parameter i's value for the next evaluation, as values()[i] gives it.
  void set(std::size_t param, double value) { slots_[param] = value; }
  // Each parameter's values as restriction variables: integers as they are, strings as their
  // codes (restriction_strings.h).
  [[nodiscard]] const std::vector<std::vector<double>>& values() const { return values_; }
  // Index of the first restriction that rejects the current values, or -1 when all accept.
  // A restriction accepts when its value is non-zero and not NaN.
  [[nodiscard]] int first_failing() const;
  // The same over the restrictions listed (indices into the list given to create()), in order.
  [[nodiscard]] int first_failing(const std::vector<std::size_t>& among) const;
  // For each restriction, the parameters it names (indices into `params`), ascending.
  [[nodiscard]] const std::vector<std::vector<std::size_t>>& uses() const { return uses_; }
  // For each restriction, the constants it names (indices into `constants`), ascending.
  [[nodiscard]] const std::vector<std::vector<std::size_t>>& constant_uses() const {
    return constant_uses_;
  }

 private:
  struct Parsers;
  explicit RestrictionSet(std::size_t params);

  std::vector<double> slots_;
  std::vector<std::vector<double>> values_;
  std::vector<std::vector<std::size_t>> uses_;
  std::vector<std::vector<std::size_t>> constant_uses_;
  std::unique_ptr<Parsers> parsers_;
};

}  // namespace ktune::space_detail
