// The parts of the report's document below the header (html_report.cpp assembles them): the
// overview table and one collapsible section per record, with its facts, the pick's confidence,
// the charts (html_charts.h), the failures and every candidate. Internal to the report module.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "ktune/cache/tuning_cache.h"
#include "ktune/report/html_report.h"

namespace ktune::report_internal {

// The section of record `index` (anchor rec-INDEX), open or collapsed.
void record_section(std::string& out, const TuningRecord& r, std::size_t index, bool open,
                    const ReportOptions& options);

// A sortable table with one row per record, each linking to its section.
void overview(std::string& out, std::span<const TuningRecord> records);

}  // namespace ktune::report_internal
