// The report document's fixed parts (html_assets.cpp): its style sheet, its one script, and
// the hash by which the page's Content-Security-Policy allows that script. Internal to the
// report module.
#pragma once

#include <string>
#include <string_view>

namespace ktune::report_internal {

// The inline CSS of the page.
extern const std::string_view kStyle;
// The page's one script: sorting, the filter, expand/collapse, opening a linked section, and the
// self-test of #selftest (the comment at its definition says more).
extern const std::string_view kScript;

// SHA-256 of `data` in base64 (as a CSP hash source wants it), "" when libcrypto fails.
[[nodiscard]] std::string sha256_base64(std::string_view data);

}  // namespace ktune::report_internal
