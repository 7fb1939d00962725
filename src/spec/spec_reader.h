// Private to the spec module: reading yaml-cpp nodes into values with errors that carry the file,
// line, column and field path ("spec.yaml:12:12: args[2].dtype: ..."). Nothing here throws on its
// own; the one catch of YAML::Exception is in parse_spec.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ktune/core/status.h"

namespace ktune::spec_detail {

// "args" + "dtype" -> "args.dtype"; "" + "name" -> "name".
[[nodiscard]] std::string field(std::string_view path, std::string_view key);
// "args" + 2 -> "args[2]".
[[nodiscard]] std::string item(std::string_view path, std::size_t index);
[[nodiscard]] bool is_identifier(std::string_view text);
[[nodiscard]] std::string join(const std::vector<std::string>& parts, std::string_view sep = ", ");
// How a node looks, for "expected X; got Y": "a list", "a mapping", "null", "'text'".
[[nodiscard]] std::string describe(const YAML::Node& node);

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[nodiscard]] const std::string& file() const { return file_; }
  // "<file>:<line>:<col>" (1-based), or "<file>" when the node has no position.
  [[nodiscard]] std::string where(const YAML::Node& at) const;
  // The error "<where>: <path>: <what>".
  [[nodiscard]] std::unexpected<Error> fail(const YAML::Node& at, std::string_view path,
                                            std::string_view what,
                                            ErrorCode code = ErrorCode::kInvalidArgument) const;

  [[nodiscard]] Status expect_map(const YAML::Node& node, std::string_view path) const;
  [[nodiscard]] Status expect_list(const YAML::Node& node, std::string_view path) const;
  // Unknown keys (listing the accepted ones), duplicate keys and non-scalar keys are errors.
  [[nodiscard]] Status check_keys(const YAML::Node& map, std::string_view path,
                                  std::initializer_list<std::string_view> accepted) const;
  // map[key], or an error "<path>.<key>: missing required field" at the map.
  [[nodiscard]] Result<YAML::Node> require(const YAML::Node& map, std::string_view path,
                                           std::string_view key) const;

  [[nodiscard]] Result<std::string> string(const YAML::Node& node, std::string_view path) const;
  [[nodiscard]] Result<std::string> identifier(const YAML::Node& node, std::string_view path) const;
  [[nodiscard]] Result<std::int64_t> integer(const YAML::Node& node, std::string_view path) const;
  [[nodiscard]] Result<double> number(const YAML::Node& node, std::string_view path) const;
  // A list of scalars.
  [[nodiscard]] Result<std::vector<std::string>> strings(const YAML::Node& node,
                                                         std::string_view path) const;

 private:
  std::string file_;
};

// Parses a whole decimal integer ("-12"); nothing else is accepted.
[[nodiscard]] bool parse_int(std::string_view text, std::int64_t& out);

}  // namespace ktune::spec_detail
