// RestrictionSet: a SearchSpace's restriction expressions, checked and parsed with muparser and
// evaluated against one slot per parameter, with the space's named constants folded in. Each is
// also compiled to a RestrictionProgram (restriction_program.h), which the walk evaluates instead
// of muparser; a restriction the compiler declines stays with muparser. Private to the space
// module; the only code that sees muparser.
#pragma once

#include <cmath>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ktune/core/status.h"
#include "ktune/space/search_space.h"
#include "restriction_program.h"

namespace ktune::space_detail {

class RestrictionSet {
 public:
  // Checks every restriction (parses, names only parameters of `params` and `constants`, uses
  // string parameters only in == and != with string literals, evaluates at the first value of
  // each parameter) and compiles it. Messages name the restriction. Names are assumed distinct
  // (SearchSpace::create checks). `compile` false keeps every restriction with muparser (the
  // tests' oracle for the compiled programs).
  [[nodiscard]] static Result<std::unique_ptr<RestrictionSet>> create(
      const std::vector<Param>& params, const std::vector<std::string>& restrictions,
      const std::vector<std::pair<std::string, double>>& constants, bool compile = true);

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
  // Whether restriction r accepts the current values.
  [[nodiscard]] bool accepts(std::size_t r) const {
    const double v = value(r);
    return v != 0 && !std::isnan(v);
  }
  // Restriction r's value at the current values (muparser's or its program's).
  [[nodiscard]] double value(std::size_t r) const;
  // Whether restriction r runs as a compiled program (false: muparser).
  [[nodiscard]] bool compiled(std::size_t r) const { return programs_[r].has_value(); }
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
  std::vector<std::optional<RestrictionProgram>> programs_;
  std::unique_ptr<Parsers> parsers_;
};

}  // namespace ktune::space_detail
