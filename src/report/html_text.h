// Text for the HTML report (html_report.cpp, html_sections.cpp, html_charts.cpp): escaping of
// untrusted text (every string of a tuning record), cutting on character boundaries, and the
// numbers, times and dates as the page shows them. Internal to the report module.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ktune/cache/tuning_cache.h"

namespace ktune::report_text {

// Length of the valid UTF-8 sequence at s[i] (a lead byte >= 0x80), 0 when it is not one.
[[nodiscard]] std::size_t utf8_sequence(std::string_view s, std::size_t i);
// `s` appended with & < > " ' as entities, invalid UTF-8 and control characters as U+FFFD.
void append_escaped(std::string& out, std::string_view s);
[[nodiscard]] std::string esc(std::string_view s);
// At most `max_bytes` of `s`, cut on a character boundary, with a mark when cut.
[[nodiscard]] std::string cut(std::string_view s, std::size_t max_bytes);
[[nodiscard]] bool finite_positive(double v);
// A duration in ns with three significant digits and a unit.
[[nodiscard]] std::string time_text(double ns);
// A number as a table's sort key.
[[nodiscard]] std::string sort_value(double v);
[[nodiscard]] std::string utc_text(std::int64_t unix_s);
[[nodiscard]] double median_of(std::vector<double> v);
// Measured to the end (outcome ok with statistics).
[[nodiscard]] bool measured(const CandidateRecord& c);
// Not a failure of the candidate: the search stopped measuring it, or never proposed it.
[[nodiscard]] bool not_measured_to_end(Outcome o);

}  // namespace ktune::report_text
