// String-valued parameters in restrictions. muparser evaluates doubles only, so each string is
// given a numeric code from one table (the same string, the same code, in every restriction and
// parameter), string literals in an expression are replaced by their codes, and a string
// parameter's slot holds the code of its value. Comparing codes with == and != is comparing the
// strings; anything else (arithmetic, <, a number on the other side) would compare codes that mean
// nothing, so it is refused before muparser sees the expression. Private to the space module.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ktune/core/status.h"
#include "ktune/space/search_space.h"

namespace ktune::space_detail {

class StringCodes {
 public:
  // Strings get 0, 1, 2, ... in the order first seen; the integer values of a parameter that also
  // has strings get -1, -2, ..., so that no string literal equals them.
  double code(const ParamValue& value);

 private:
  std::map<std::string, double, std::less<>> strings_;
  std::map<std::int64_t, double> integers_;
};

// A parameter with any non-integer value is a string parameter.
[[nodiscard]] bool is_string_param(const Param& param);

// `expr` with every string literal ("dynamic" or 'dynamic') replaced by its code. Fails, naming
// the restriction, on an unterminated literal, a string parameter or literal that is not an
// operand of == or != with a string parameter or literal on the other side, or a string compared
// with a number. `string_params` are the names of the string parameters.
[[nodiscard]] Result<std::string> encode_strings(const std::string& expr,
                                                 const std::vector<std::string>& string_params,
                                                 StringCodes& codes);

}  // namespace ktune::space_detail
