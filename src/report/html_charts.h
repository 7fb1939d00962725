// The charts of a record's section (html_sections.cpp), drawn as inline SVG: the time chart of
// the fastest candidates and the time-by-parameter charts with their notes. Internal to the
// report module.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "ktune/cache/tuning_cache.h"
#include "ktune/report/html_report.h"

namespace ktune::report_internal {

// The time chart of the candidates `order` lists (measured, fastest first): the fastest
// `chart_candidates`, the pick and the runner-up, each a whisker, a box and a bar.
void time_chart(std::string& out, const TuningRecord& r, const std::vector<std::size_t>& order,
                const ReportOptions& options);

// "Time by parameter": one chart per parameter with two or more values (at most 64), the
// parameters with one value listed as fixed. Nothing when no candidate has parameters.
void param_section(std::string& out, const TuningRecord& r, const ReportOptions& options);

}  // namespace ktune::report_internal
