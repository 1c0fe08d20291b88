#include "report/chart_parts.h"

#include <fmt/core.h>

#include <iterator>

#include "results/kinds.h"

namespace nnbench::report::parts {
namespace {

const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd",
                          "#8c564b", "#e377c2", "#17becf", "#bcbd22"};

}  // namespace

using nlohmann::json;

static const char* kShades[] = {"#2b2b2b", "#6b6b6b", "#a6761d", "#4d4d80"};
static const char* kMarkers[] = {"circle", "rect",     "triangle",    "rectRot",
                                 "star",   "crossRot", "rectRounded", "cross"};

std::string color(size_t i) { return kPalette[i % std::size(kPalette)]; }
std::string shade(size_t i) { return kShades[i % std::size(kShades)]; }
const char* marker(size_t i) { return kMarkers[i % std::size(kMarkers)]; }

std::string Palette::of(const std::string& series) {
  return color(index_.emplace(series, index_.size()).first->second);
}

std::string threads_of(const results::RunResult& r) {
  return std::to_string(r.effective.threads > 0 ? r.effective.threads
                                                : r.requested.options.threads);
}

std::string series(const Source& s, const std::string& backend, bool many) {
  return many ? backend + " [" + s.label + "]" : backend;
}

std::string ms(double seconds) { return fmt::format("{:.3f}", seconds * 1e3); }

json axis(const std::string& title, const std::string& type) {
  json a = {{"title", {{"display", true}, {"text", title}}}};
  if (!type.empty()) a["type"] = type;
  return a;
}

json count_axis(const std::string& title) {
  json a = axis(title);
  a["ticks"] = {{"precision", 0}};  // 1, 2: never 1.10, 1.20
  return a;
}

json scale_axis(const std::string& title, double lo, double hi) {
  const bool decades = lo > 0 && hi / lo >= 10;
  json a = axis(title, decades ? "logarithmic" : "");
  if (!decades) a["beginAtZero"] = true;
  return a;
}

json base_config(const std::string& type, const json& data, const json& x,
                 const json& y) {
  return {{"type", type},
          {"data", data},
          {"options",
           {{"animation", false},
            {"responsive", true},
            {"maintainAspectRatio", false},
            {"scales", {{"x", x}, {"y", y}}},
            {"plugins",
             {{"legend",
               {{"position", "bottom"},
                {"labels", {{"usePointStyle", true}}}}}}}}}};
}

bool many_sources(const std::vector<Source>& s) { return s.size() > 1; }

bool trusted_throughput(const results::RunResult& r) {
  return results::measure_of(r) == results::Measure::kSteps &&
         r.state == results::State::kOk && r.validity.valid();
}

}  // namespace nnbench::report::parts
