// Reader: typed access to yaml-cpp nodes with positioned, field-named error messages.
#include "spec/spec_reader.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <set>

namespace ktune::spec_detail {

std::string field(std::string_view path, std::string_view key) {
  if (path.empty()) return std::string(key);
  return fmt::format("{}.{}", path, key);
}

std::string item(std::string_view path, std::size_t index) {
  return fmt::format("{}[{}]", path, index);
}

bool is_identifier(std::string_view text) {
  if (text.empty()) return false;
  auto is_start = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; };
  if (!is_start(text[0])) return false;
  for (char c : text) {
    if (!is_start(c) && !std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  return fmt::format("{}", fmt::join(parts, sep));
}

std::string describe(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "null";
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a mapping";
  return fmt::format("'{}'", node.Scalar());
}

bool parse_int(std::string_view text, std::int64_t& out) {
  if (!text.empty() && text[0] == '+') text.remove_prefix(1);
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

std::string Reader::where(const YAML::Node& at) const {
  if (!at.IsDefined()) return file_;
  YAML::Mark mark = at.Mark();
  if (mark.is_null() || mark.line < 0) return file_;
  return fmt::format("{}:{}:{}", file_, mark.line + 1, mark.column + 1);
}

std::unexpected<Error> Reader::fail(const YAML::Node& at, std::string_view path,
                                    std::string_view what, ErrorCode code) const {
  if (path.empty()) return make_error(code, fmt::format("{}: {}", where(at), what));
  return make_error(code, fmt::format("{}: {}: {}", where(at), path, what));
}

Status Reader::expect_map(const YAML::Node& node, std::string_view path) const {
  if (node.IsMap()) return {};
  return fail(node, path, fmt::format("expected a mapping; got {}", describe(node)));
}

Status Reader::expect_list(const YAML::Node& node, std::string_view path) const {
  if (node.IsSequence()) return {};
  return fail(node, path, fmt::format("expected a list; got {}", describe(node)));
}

Status Reader::check_keys(const YAML::Node& map, std::string_view path,
                          std::initializer_list<std::string_view> accepted) const {
  if (auto ok = expect_map(map, path); !ok) return ok;
  std::set<std::string> seen;
  for (const auto& kv : map) {
    const YAML::Node& key = kv.first;
    if (!key.IsScalar()) {
      return fail(key, path, fmt::format("expected a plain key; got {}", describe(key)));
    }
    const std::string& name = key.Scalar();
    bool known = false;
    for (std::string_view a : accepted) known = known || a == name;
    if (!known) {
      std::vector<std::string> names(accepted.begin(), accepted.end());
      return fail(key, field(path, name),
                  fmt::format("unknown key; expected one of {}", join(names)));
    }
    if (!seen.insert(name).second) return fail(key, field(path, name), "duplicate key");
  }
  return {};
}

Result<YAML::Node> Reader::require(const YAML::Node& map, std::string_view path,
                                   std::string_view key) const {
  YAML::Node value = map[std::string(key)];
  if (value.IsDefined() && !value.IsNull()) return value;
  if (value.IsDefined()) return fail(value, field(path, key), "required field is empty");
  return fail(map, field(path, key), "missing required field");
}

Result<std::string> Reader::string(const YAML::Node& node, std::string_view path) const {
  if (node.IsScalar()) return node.Scalar();
  return fail(node, path, fmt::format("expected a string; got {}", describe(node)));
}

Result<std::string> Reader::identifier(const YAML::Node& node, std::string_view path) const {
  auto text = string(node, path);
  if (!text) return text;
  if (!is_identifier(*text)) {
    return fail(node, path,
                fmt::format("'{}' is not an identifier; expected letters, digits and '_', "
                            "not starting with a digit",
                            *text));
  }
  return text;
}

Result<std::int64_t> Reader::integer(const YAML::Node& node, std::string_view path) const {
  std::int64_t value = 0;
  if (node.IsScalar() && parse_int(node.Scalar(), value)) return value;
  return fail(node, path, fmt::format("expected an integer; got {}", describe(node)));
}

Result<double> Reader::number(const YAML::Node& node, std::string_view path) const {
  if (node.IsScalar()) {
    std::string_view text = node.Scalar();
    if (!text.empty() && text[0] == '+') text.remove_prefix(1);
    double value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (!text.empty() && ec == std::errc() && end == text.data() + text.size() &&
        std::isfinite(value)) {
      return value;
    }
  }
  return fail(node, path, fmt::format("expected a number; got {}", describe(node)));
}

Result<std::vector<std::string>> Reader::strings(const YAML::Node& node,
                                                 std::string_view path) const {
  if (auto ok = expect_list(node, path); !ok) return std::unexpected(ok.error());
  std::vector<std::string> out;
  for (std::size_t i = 0; i < node.size(); ++i) {
    auto text = string(node[i], item(path, i));
    if (!text) return std::unexpected(text.error());
    out.push_back(std::move(*text));
  }
  return out;
}

}  // namespace ktune::spec_detail
