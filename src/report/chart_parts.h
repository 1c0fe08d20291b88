#pragma once
// What the report's figures share (charts.cpp, scaling_charts.cpp): colours,
// how a result is named and grouped, Chart.js axes and configurations.
// Internal to src/report.
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/charts.h"
#include "report/source.h"

namespace nnbench::report::parts {

inline constexpr const char* kInvalid = "#b0b0b0";  // invalid or contended

std::string color(size_t i);
// Colours for series that are not engines (thread counts of a bar group,
// percentiles): dark, mid grey and ochre, none of them an engine's (nor the
// light grey of invalid results).
std::string shade(size_t i);
// Marker shapes, one per model (or per run of one engine).
const char* marker(size_t i);

// One colour per series (backend, and source when several) in every chart
// of a report, in the order the series first appear.
class Palette {
 public:
  std::string of(const std::string& series);

 private:
  std::map<std::string, size_t> index_;
};

std::string threads_of(const results::RunResult& r);
// The series a result belongs to: its backend, and its source when the
// report has several.
std::string series(const Source& s, const std::string& backend, bool many);
std::string ms(double seconds);
nlohmann::json axis(const std::string& title, const std::string& type = "");
// An axis of counts (threads, processes): integer ticks only.
nlohmann::json count_axis(const std::string& title);
// A value axis over [lo, hi]: logarithmic where the values span a decade or
// more (a 1 ms bar beside a 140 ms one stays visible), else linear from 0.
nlohmann::json scale_axis(const std::string& title, double lo, double hi);
nlohmann::json base_config(const std::string& type, const nlohmann::json& data,
                           const nlohmann::json& x, const nlohmann::json& y);
bool many_sources(const std::vector<Source>& s);
// A throughput result that ran (state ok) and is valid: what speed-ups
// are computed from.
bool trusted_throughput(const results::RunResult& r);

// Speed-up and efficiency against threads; speed-up against processes.
std::vector<Chart> scaling(const std::vector<Source>& sources,
                           Palette& palette);
std::vector<Chart> process_scaling(const std::vector<Source>& sources,
                                   Palette& palette);

// Generation: time per output token with its interval, and a table with
// time to first token, tokens/s and the bandwidth share
// (generation_charts.cpp).
Chart generation(const std::vector<Source>& sources);

// LoadGen's runs: latency percentiles with the scenario percentile's
// interval, and the server's p99 against QPS (inference_charts.cpp).
std::vector<Chart> inference(const std::vector<Source>& sources,
                             Palette& palette);

}  // namespace nnbench::report::parts
