// The HTML report of tuning records (`ktune report`): one self-contained file, inline CSS, a
// little inline JavaScript (sorting, filtering) and charts as inline SVG drawn here, so that it
// opens anywhere without a network. Every string from the records is escaped: a tuning cache is a
// file that others may have written (names, messages, parameters, keys).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "ktune/cache/tuning_cache.h"

namespace ktune {

struct ReportOptions {
  std::string title = "ktune tuning report";
  std::string source;               // where the records came from (a cache folder); "" not shown
  std::int64_t generated_unix = 0;  // when the report was made; 0: not shown
  // The time chart of a problem draws its fastest valid candidates, this many (the winner and
  // the runner-up always); every candidate is in the problem's table.
  std::size_t chart_candidates = 30;
  // A parameter's chart draws at most this many values (in order), the others are counted.
  std::size_t chart_values = 40;
  // A failure message longer than this is cut (at a character boundary) and says so.
  std::size_t max_message_bytes = 4000;
  // A problem's section starts open when the report has at most this many records.
  std::size_t open_up_to = 3;
};

// The whole document. Records are shown in the order given (the cache lists newest first); an
// empty span gives a document that says there is nothing to report. Deterministic: the same
// records and options give the same bytes.
[[nodiscard]] std::string render_html_report(std::span<const TuningRecord> records,
                                             const ReportOptions& options = {});

// Text and attribute values for HTML: & < > " ' as entities, invalid UTF-8 and control characters
// (other than tab and newline) as U+FFFD.
[[nodiscard]] std::string html_escape(std::string_view text);

}  // namespace ktune
