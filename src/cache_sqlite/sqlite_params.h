// The `params` column of the candidates table (schema v6): CandidateRecord::params as JSON text,
// an array of [name, value] pairs in the space's order; NULL for library calls and in rows
// stored before v6.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ktune/core/status.h"

namespace ktune::cache {

inline constexpr std::string_view kSchemaV6Params =
    "ALTER TABLE candidates ADD COLUMN params TEXT NULL;";

using ParamList = std::vector<std::pair<std::string, std::string>>;

// nullopt for an empty list (stored as NULL).
[[nodiscard]] std::optional<std::string> params_to_text(const ParamList& params);
// kParse naming `where` when the text is not such an array.
[[nodiscard]] Result<ParamList> params_from_text(const std::string& text, const std::string& where);

}  // namespace ktune::cache
