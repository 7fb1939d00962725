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

// The same, keeping compiler line numbers: every output line that does not sit at its template
// line's number (after a section that was left out, or repeated) is preceded by `#line N`, N the
// number the compiler gives that template line (a `#line` in the template counted), so that
// messages still name the template's own lines. A line continued with `\` is never split.
[[nodiscard]] Result<std::string> render_mustache_keeping_lines(
    std::string_view where, const std::string& text,
    const std::vector<std::pair<std::string, std::string>>& variables);

}  // namespace ktune
