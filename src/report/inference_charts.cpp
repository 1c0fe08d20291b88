// LoadGen's runs in the report: latency percentiles with the interval of
// the scenario's percentile, and the server's p99 against QPS.
#include <fmt/core.h>

#include <cmath>
#include <map>

#include "report/chart_parts.h"
#include "results/kinds.h"

namespace nnbench::report::parts {

using nlohmann::json;

namespace {

bool measured(const results::InferenceRun& r) {
  return r.state == results::State::kOk && r.mode == "performance";
}

std::string name_of(const Source& s, const results::InferenceRun& r,
                    bool many) {
  return r.model + " " + series(s, r.backend, many) + " " +
         r.requested.options.precision + " " + r.kind + " " +
         std::to_string(r.instances) + "x" +
         std::to_string(r.effective.threads) +
         (results::traits_of(r.kind).paced
              ? fmt::format(" @{:g} QPS", r.target_qps)
              : "");
}

std::string dollars(double x) {
  return std::isfinite(x) && x > 0 ? fmt::format("{:.3g}", x) : "-";
}

std::string interval(const results::InferenceRun& r) {
  if (r.latency_samples <= 0) return "-";
  return ms(r.percentile_ci.lo) + " - " + ms(r.percentile_ci.hi) +
         fmt::format(" ({:.1f} %)", r.percentile_ci.coverage * 100);
}

Chart percentiles(const std::vector<Source>& sources) {
  Chart c{"loadgen-latency",
          "Latency under LoadGen",
          "LoadGen's p50, p90 and p99 latency (per query for multi-stream) "
          "in ms, and the 95 % order-statistic interval of each scenario's "
          "own percentile (p90 single-stream, p99 otherwise) from LoadGen's "
          "per-sample latencies. Offline runs have a throughput only.",
          {},
          {"case", "LoadGen", "p50 ms", "p90 ms", "p99 ms",
           "scenario percentile interval ms", "early-stopping estimate ms",
           "samples/s", "$ per 10k", "validity"},
          {}};
  std::vector<std::string> cats;
  json p50 = json::array(), p90 = json::array(), p99 = json::array(),
       band = json::array();
  for (const auto& s : sources)
    for (const auto& r : s.inference) {
      if (!measured(r)) continue;
      const auto pct = [&](const char* k) {
        const auto it = r.latency_percentiles.find(k);
        return it == r.latency_percentiles.end() ? NAN : it->second;
      };
      const std::string cat = name_of(s, r, many_sources(sources));
      c.rows.push_back({cat, r.loadgen_valid ? "VALID" : "INVALID",
                        ms(pct("50.00")), ms(pct("90.00")), ms(pct("99.00")),
                        interval(r),
                        std::isfinite(r.early_stopping_latency)
                            ? ms(r.early_stopping_latency)
                            : "-",
                        std::isfinite(r.samples_per_second)
                            ? fmt::format("{:.1f}", r.samples_per_second)
                            : "-",
                        dollars(r.usd_per_10k), r.validity.summary()});
      if (!results::traits_of(r.kind).query_latencies) continue;
      cats.push_back(cat);
      p50.push_back(pct("50.00") * 1e3);
      p90.push_back(pct("90.00") * 1e3);
      p99.push_back(pct("99.00") * 1e3);
      if (r.latency_samples > 0)
        band.push_back({r.percentile_ci.lo * 1e3, r.percentile_ci.hi * 1e3});
      else
        band.push_back(nullptr);
    }
  if (cats.empty()) return c;
  json ds = json::array();
  const char* names[] = {"p50", "p90", "p99"};
  const json* data[] = {&p50, &p90, &p99};
  for (int i = 0; i < 3; ++i)
    ds.push_back({{"label", names[i]},
                  {"data", *data[i]},
                  {"backgroundColor", shade(i)}});
  ds.push_back({{"label", "interval of the scenario's percentile"},
                {"data", band},
                {"backgroundColor", "rgba(214, 39, 40, 0.55)"}});
  c.config = base_config("bar", {{"labels", cats}, {"datasets", ds}},
                         axis("case"), axis("ms"));
  return c;
}

Chart server_curve(const std::vector<Source>& sources, Palette& palette) {
  Chart c{"loadgen-server",
          "Server: p99 latency against QPS",
          "Each point a LoadGen server run at its target QPS (Poisson "
          "arrivals): LoadGen's p99 latency in ms, the thin lines its 95 % "
          "interval; open points are runs LoadGen judged INVALID.",
          {},
          {"series", "target QPS", "completed samples/s", "p99 ms",
           "interval ms", "bound ms", "LoadGen"},
          {}};
  // series -> points (target QPS order)
  std::map<std::string, std::map<double, const results::InferenceRun*>> by;
  for (const auto& s : sources)
    for (const auto& r : s.inference) {
      if (!measured(r) || !results::traits_of(r.kind).paced ||
          !std::isfinite(r.target_qps))
        continue;
      const std::string name =
          r.model + " " + series(s, r.backend, many_sources(sources)) + " " +
          r.requested.options.precision + " " + std::to_string(r.instances) +
          "x" + std::to_string(r.effective.threads);
      by[name][r.target_qps] = &r;
    }
  if (by.empty()) return c;
  json ds = json::array();
  for (const auto& [name, points] : by) {
    const std::string color = palette.of(name);
    json mid = json::array(), lo = json::array(), hi = json::array();
    json radius = json::array(), fill = json::array();
    for (const auto& [qps, r] : points) {
      mid.push_back({{"x", qps}, {"y", r->percentile_latency * 1e3}});
      if (r->latency_samples > 0) {
        lo.push_back({{"x", qps}, {"y", r->percentile_ci.lo * 1e3}});
        hi.push_back({{"x", qps}, {"y", r->percentile_ci.hi * 1e3}});
      }
      fill.push_back(r->loadgen_valid ? color : "#ffffff");
      c.rows.push_back({name, fmt::format("{:.1f}", qps),
                        fmt::format("{:.1f}", r->samples_per_second),
                        ms(r->percentile_latency), interval(*r),
                        ms(r->latency_bound),
                        r->loadgen_valid ? "VALID" : "INVALID"});
    }
    ds.push_back({{"label", name},
                  {"data", mid},
                  {"borderColor", color},
                  {"pointBackgroundColor", fill},
                  {"pointRadius", 4},
                  {"showLine", true}});
    for (const json* band : {&lo, &hi})
      ds.push_back({{"label", name + " interval"},
                    {"data", *band},
                    {"borderColor", color},
                    {"borderWidth", 1},
                    {"borderDash", {4, 3}},
                    {"pointRadius", 0},
                    {"showLine", true}});
  }
  c.config = base_config("scatter", {{"datasets", ds}}, axis("target QPS"),
                         axis("p99 latency, ms"));
  return c;
}

}  // namespace

std::vector<Chart> inference(const std::vector<Source>& sources,
                             Palette& palette) {
  return {percentiles(sources), server_curve(sources, palette)};
}

}  // namespace nnbench::report::parts
