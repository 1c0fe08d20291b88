#pragma once
// The report's figures, each chosen by what the sources contain: time per
// mini-batch by model and backend, throughput against batch size with OOM
// cells, speed-up and efficiency against threads with the ideal line,
// training time and cost normalised to a baseline, accuracy against
// training time with the target, latency percentiles. Each is a Chart.js
// configuration plus the table of the numbers it draws.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/source.h"

namespace nnbench::report {

struct Chart {
  std::string id, title, caption;
  nlohmann::json config;  // Chart.js 3 configuration
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;  // plain text, escaped later
};

std::vector<Chart> charts(const std::vector<Source>& sources);

// One line per invalid result: what it is and why (reasons and details).
std::vector<std::string> invalid_results(const std::vector<Source>& sources);

}  // namespace nnbench::report
