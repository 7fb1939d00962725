// The HTML report (ktune/report/html_report.h). Layout of the document: a header, an overview
// table with one row per record, then one collapsible section per record: its key facts, the
// pick's confidence, a chart of the fastest candidates' time distributions, one small chart per
// parameter (median time of each value), the failures grouped by outcome and message, and a table
// of every candidate. Charts are SVG written in C++ (html_charts.cpp); the script only sorts
// tables, filters problems and opens a section that a link points to. A Content-Security-Policy
// allows no network and only that script (by its hash), so that even text that escaped escaping
// could not run. This file assembles the document: html_sections.cpp writes the overview and the
// records' sections, html_assets.cpp holds the style sheet and the script.
#include "ktune/report/html_report.h"

#include <fmt/format.h>

#include <string>

#include "report/html_assets.h"
#include "report/html_sections.h"
#include "report/html_text.h"

namespace ktune {
namespace {

using report_internal::kScript;
using report_internal::kStyle;
using report_internal::overview;
using report_internal::record_section;
using report_internal::sha256_base64;
using report_text::append_escaped;
using report_text::esc;
using report_text::utc_text;

}  // namespace

std::string html_escape(std::string_view text) { return esc(text); }

std::string render_html_report(std::span<const TuningRecord> records,
                               const ReportOptions& options) {
  std::string out;
  out.reserve(16384 + records.size() * 8192);
  // No network, no plugins, no other script than ours (by its hash; without a hash the page
  // works unscripted).
  const std::string hash = sha256_base64(kScript);
  const std::string script_src = hash.empty() ? "'none'" : "'sha256-" + hash + "'";
  out += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  out += fmt::format(
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "style-src 'unsafe-inline'; img-src data:; script-src {}; base-uri 'none'; "
      "form-action 'none'\">\n",
      script_src);
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>";
  append_escaped(out, options.title);
  out += "</title>\n<style>";
  out += kStyle;
  out += "</style></head>\n<body>\n<header><h1>";
  append_escaped(out, options.title);
  out += "</h1><div class=\"meta\">";
  std::size_t problems = records.size();
  std::size_t candidates = 0;
  for (const TuningRecord& r : records) candidates += r.candidates.size();
  out += fmt::format("{} record{}, {} candidate{}", problems, problems == 1 ? "" : "s", candidates,
                     candidates == 1 ? "" : "s");
  if (!options.source.empty()) {
    out += " &#183; from <code>";
    append_escaped(out, options.source);
    out += "</code>";
  }
  if (options.generated_unix != 0) {
    out += " &#183; made " + esc(utc_text(options.generated_unix));
  }
  out += "</div></header>\n<main>\n";
  if (records.empty()) {
    out += "<p class=\"empty\">No tuning records: nothing to report.</p>\n";
  } else {
    out +=
        "<div class=\"toolbar\"><input id=\"filter\" type=\"search\" placeholder=\"filter "
        "problems (op, problem key, pick)\" aria-label=\"filter problems\">"
        "<button id=\"expand\" type=\"button\">expand all</button>"
        "<button id=\"collapse\" type=\"button\">collapse all</button></div>\n";
    overview(out, records);
    const bool open = records.size() <= options.open_up_to;
    for (std::size_t i = 0; i < records.size(); ++i) {
      record_section(out, records[i], i, open, options);
    }
  }
  out += "</main>\n<script>";
  out += kScript;
  out += "</script>\n</body></html>\n";
  return out;
}

}  // namespace ktune
