// render_mustache: the one adapter around kainjow mustache (its exceptions and error strings
// become a Status here). Variables are inserted verbatim: source code must never be HTML-escaped.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ktune/core/status.h"

namespace ktune {

// `where` prefixes error messages (the template's name).
[[nodiscard]] Result<std::string> render_mustache(
    std::string_view where, const std::string& text,
    const std::vector<std::pair<std::string, std::string>>& variables);

}  // namespace ktune
