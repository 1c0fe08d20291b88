// Speed-up and efficiency against threads, speed-up against processes.
#include <fmt/core.h>

#include <algorithm>
#include <iterator>
#include <map>

#include "bench/statistics.h"
#include "report/chart_parts.h"
#include "results/case_key.h"

namespace nnbench::report::parts {

using nlohmann::json;

// --- speed-up and efficiency against threads --------------------------------

std::vector<Chart> scaling(const std::vector<Source>& sources,
                           Palette& palette) {
  // group (model backend mode batch) -> threads -> medians of repetitions;
  // a line is coloured by its series (as in every chart) and marked by its
  // model, so 13 lines stay tellable apart.
  std::map<std::string, std::map<int, std::vector<double>>> groups;
  std::map<std::string, std::string> series_of;
  std::map<std::string, size_t> model_index;
  std::map<std::string, std::string> model_of, mode_of;
  std::vector<std::string> order;
  for (const auto& s : sources)
    for (const auto& r : s.runs) {
      if (!trusted_throughput(r)) continue;
      // The case without its threads (the axis), named by its series.
      results::CaseKey k = results::key_of(r);
      k.backend = series(s, r.backend, many_sources(sources));
      const std::string g = k.name(results::CaseKey::kThreads);
      if (!groups.count(g)) order.push_back(g);
      series_of[g] = series(s, r.backend, many_sources(sources));
      model_of[g] = r.model;
      mode_of[g] = k.mode;
      model_index.emplace(r.model, model_index.size());
      groups[g][std::atoi(threads_of(r).c_str())].push_back(r.stats.median);
    }
  Chart speed{"speedup",
              "Speed-up against threads",
              "Median time at 1 thread / median time at t threads (valid "
              "results only, median over repetitions). Colour: engine; marker: "
              "model; solid: training, dotted: inference; dashed grey: ideal.",
              {},
              {"case", "threads", "median ms", "speed-up", "efficiency"},
              {}};
  Chart eff{"efficiency",
            "Parallel efficiency against threads",
            "Speed-up / threads. Colour: engine; marker: model; solid: "
            "training, dotted: inference; dashed grey: ideal (1).",
            {},
            {},
            {}};
  json sd = json::array(), ed = json::array();
  int max_t = 1;
  for (const auto& g : order) {
    const auto& by = groups[g];
    if (by.size() < 2 || !by.count(1)) continue;
    const double base = bench::median(by.at(1));
    json sp = json::array(), ep = json::array();
    for (const auto& [t, v] : by) {
      const double m = bench::median(v), su = base / m;
      sp.push_back({{"x", t}, {"y", su}});
      ep.push_back({{"x", t}, {"y", su / t}});
      max_t = std::max(max_t, t);
      speed.rows.push_back({g, std::to_string(t), ms(m),
                            fmt::format("{:.2f}", su),
                            fmt::format("{:.2f}", su / t)});
    }
    // Colour: the engine; marker: the model; line: solid for training,
    // dotted for inference (the ideal is dashed grey).
    json style = {{"showLine", true},
                  {"borderColor", palette.of(series_of[g])},
                  {"backgroundColor", palette.of(series_of[g])},
                  {"pointRadius", 5},
                  {"pointStyle", marker(model_index[model_of[g]])}};
    if (mode_of[g] != "train") style["borderDash"] = {2, 3};
    json line = style;
    line["label"] = g;
    line["data"] = sp;
    sd.push_back(line);
    line["data"] = ep;
    ed.push_back(line);
  }
  if (sd.empty()) return {};
  const json dash = {{"borderDash", {6, 4}},
                     {"borderColor", "#555"},
                     {"pointRadius", 0},
                     {"showLine", true}};
  json ideal = dash, flat = dash;
  ideal["label"] = "ideal";
  ideal["data"] =
      json::array({json{{"x", 1}, {"y", 1}}, json{{"x", max_t}, {"y", max_t}}});
  flat["label"] = "ideal";
  flat["data"] =
      json::array({json{{"x", 1}, {"y", 1}}, json{{"x", max_t}, {"y", 1}}});
  sd.push_back(ideal);
  ed.push_back(flat);
  speed.config = base_config("scatter", {{"datasets", sd}},
                             count_axis("threads"), axis("speed-up"));
  eff.config = base_config("scatter", {{"datasets", ed}}, count_axis("threads"),
                           axis("efficiency"));
  eff.header = speed.header;
  eff.rows = speed.rows;
  return {speed, eff};
}

// --- speed-up against processes (the cloud study's GPUs) -------------------

std::vector<Chart> process_scaling(const std::vector<Source>& sources,
                                   Palette& palette) {
  // One-process samples/s by case (model backend mode batch threads), and
  // each engine's ranks -> samples/s of the global batch. By backend, not
  // series: the 1-process and the P-rank runs are often separate files.
  std::map<std::string, std::vector<double>> one;
  std::map<std::string, std::map<int, std::vector<double>>> many;
  std::map<std::string, std::string> series_of;
  std::vector<std::string> order;
  for (const auto& s : sources)
    for (const auto& r : s.runs) {
      if (!trusted_throughput(r)) continue;
      const std::string& name = r.backend;
      const std::string key = results::key_of(r).name(results::CaseKey::kRanks);
      if (!r.distributed || r.distributed->ranks <= 1) {
        one[key].push_back(r.samples_per_second);
        continue;
      }
      const std::string g = key + " " + r.distributed->engine;
      if (!many.count(g)) order.push_back(g);
      series_of[g] = name;
      many[g][r.distributed->ranks].push_back(r.samples_per_second);
    }
  Chart c{"speedup-processes",
          "Speed-up against processes",
          "Samples/s of P data-parallel ranks (global batch) / samples/s of "
          "one process at the same batch and threads, measured (valid "
          "results, median over repetitions); dashed: ideal.",
          {},
          {"case", "processes", "samples/s", "speed-up", "efficiency"},
          {}};
  json data = json::array();
  int max_p = 1;
  for (const auto& g : order) {
    const auto base = one.find(g.substr(0, g.rfind(' ')));
    if (base == one.end()) continue;
    const double b = bench::median(base->second);
    json points = json::array({json{{"x", 1}, {"y", 1}}});
    c.rows.push_back({g, "1", fmt::format("{:.1f}", b), "1.00", "1.00"});
    for (const auto& [p, v] : many[g]) {
      const double sps = bench::median(v), su = sps / b;
      points.push_back({{"x", p}, {"y", su}});
      max_p = std::max(max_p, p);
      c.rows.push_back({g, std::to_string(p), fmt::format("{:.1f}", sps),
                        fmt::format("{:.2f}", su),
                        fmt::format("{:.2f}", su / p)});
    }
    data.push_back({{"label", g},
                    {"data", points},
                    {"showLine", true},
                    {"pointRadius", 5},
                    {"borderColor", palette.of(series_of[g])},
                    {"backgroundColor", palette.of(series_of[g])}});
  }
  if (data.empty()) return {};
  data.push_back({{"label", "ideal"},
                  {"data", json::array({json{{"x", 1}, {"y", 1}},
                                        json{{"x", max_p}, {"y", max_p}}})},
                  {"borderDash", {6, 4}},
                  {"borderColor", "#555"},
                  {"pointRadius", 0},
                  {"showLine", true}});
  c.config = base_config("scatter", {{"datasets", data}},
                         count_axis("processes"), axis("speed-up"));
  return {c};
}

}  // namespace nnbench::report::parts
