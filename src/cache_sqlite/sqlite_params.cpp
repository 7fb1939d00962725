// The candidates' params column (sqlite_params.h).
#include "cache_sqlite/sqlite_params.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace ktune::cache {

std::optional<std::string> params_to_text(const ParamList& params) {
  if (params.empty()) return std::nullopt;
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [name, value] : params) out.push_back({name, value});
  return out.dump();
}

Result<ParamList> params_from_text(const std::string& text, const std::string& where) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  auto bad = [&] {
    return make_error(
        ErrorCode::kParse,
        fmt::format("{}: params '{}' is not a JSON array of [name, value] strings", where, text));
  };
  if (!j.is_array()) return bad();
  ParamList out;
  for (const nlohmann::json& p : j) {
    if (!p.is_array() || p.size() != 2 || !p[0].is_string() || !p[1].is_string()) return bad();
    out.emplace_back(p[0].get<std::string>(), p[1].get<std::string>());
  }
  return out;
}

}  // namespace ktune::cache
