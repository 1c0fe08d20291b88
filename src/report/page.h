#pragma once
// The report: one self-contained HTML file (Chart.js embedded, no network at
// view time) with the environment, the validity summary, every figure the
// sources support and a table of numbers under each.
#include <string>
#include <vector>

#include "report/source.h"

namespace nnbench::report {

// Debian's libjs-chart.js, or $NNBENCH_CHARTJS.
std::string chartjs_path();
// "3.9.1" from the file's banner; "unknown" when it has none.
std::string chartjs_version(const std::string& script);

// Throws nnbench::Error when Chart.js cannot be read (naming the path and
// the package).
std::string render_page(const std::vector<Source>& sources);

}  // namespace nnbench::report
