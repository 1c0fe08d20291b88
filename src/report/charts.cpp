#include "report/charts.h"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "bench/statistics.h"
#include "report/chart_parts.h"
#include "results/case_key.h"
#include "results/kinds.h"

namespace nnbench::report {
namespace {

using nlohmann::json;
using namespace parts;

// --- time per mini-batch ---------------------------------------------------

Chart time_per_batch(const std::vector<Source>& sources, Palette& palette) {
  Chart c{
      "time-per-batch",
      "Time per mini-batch by model and backend",
      "Median ms per mini-batch; error bars: the distribution-free 95 % "
      "interval of the median; a log axis where the medians span a decade. "
      "Grey bars: invalid or contended results.",
      {},
      {"case", "series", "state", "median ms", "median CI ms", "n", "validity"},
      {}};
  std::vector<std::string> cats, names;
  std::map<std::string, std::map<std::string, const results::RunResult*>> at;
  for (const auto& s : sources)
    for (const auto& r : s.runs) {
      if (results::measure_of(r) != results::Measure::kSteps) continue;
      // The backend is the series.
      const std::string cat =
          results::key_of(r).name(results::CaseKey::kBackend);
      const std::string name = series(s, r.backend, many_sources(sources));
      if (std::find(cats.begin(), cats.end(), cat) == cats.end())
        cats.push_back(cat);
      if (std::find(names.begin(), names.end(), name) == names.end())
        names.push_back(name);
      at[name][cat] = &r;  // the last repetition stands for the cell
      c.rows.push_back(
          {cat, name, results::state_name(r.state),
           r.state == results::State::kOk ? ms(r.stats.median) : "-",
           r.state == results::State::kOk
               ? ms(r.stats.median_ci.lo) + "-" + ms(r.stats.median_ci.hi)
               : "-",
           std::to_string(r.stats.n), r.validity.summary()});
    }
  if (cats.empty()) return c;
  // A log axis when the medians span a decade (a 1 ms MLP beside a 140 ms
  // ResNet); crosses for cells without a time sit at its floor.
  double lo = 0, hi = 0;
  for (const auto& [name, cells] : at)
    for (const auto& [cat, r] : cells)
      if (r->state == results::State::kOk) {
        const double v = r->stats.median * 1e3;
        lo = lo == 0 ? v : std::min(lo, v);
        hi = std::max(hi, v);
      }
  const json y = scale_axis("ms per mini-batch", lo, hi);
  const double floor = y.value("type", "") == "logarithmic" ? lo / 2 : 0;
  json datasets = json::array(), failed = json::array();
  for (size_t i = 0; i < names.size(); ++i) {
    json data = json::array(), bars = json::array(), colors = json::array();
    json missing = json::array();  // a cross on the axis: ran, no time
    bool any_missing = false;
    for (const auto& cat : cats) {
      const auto it = at[names[i]].find(cat);
      const results::RunResult* r =
          it == at[names[i]].end() ? nullptr : it->second;
      missing.push_back(r && r->state != results::State::kOk ? json(floor)
                                                             : json());
      any_missing = any_missing || (r && r->state != results::State::kOk);
      if (!r || r->state != results::State::kOk) {
        data.push_back(nullptr);
        bars.push_back(nullptr);
        colors.push_back(palette.of(names[i]));
        continue;
      }
      data.push_back(r->stats.median * 1e3);
      bars.push_back(
          {r->stats.median_ci.lo * 1e3, r->stats.median_ci.hi * 1e3});
      colors.push_back(r->validity.valid() ? palette.of(names[i]) : kInvalid);
    }
    datasets.push_back({{"label", names[i]},
                        {"data", data},
                        {"errorBars", bars},
                        {"backgroundColor", colors}});
    if (any_missing)
      failed.push_back({{"type", "line"},
                        {"label", names[i] + ": no time (oom, unimplemented "
                                             "or failed; see Numbers)"},
                        {"data", missing},
                        {"showLine", false},
                        {"pointStyle", "crossRot"},
                        {"pointRadius", 8},
                        {"borderWidth", 3},
                        {"borderColor", palette.of(names[i])}});
  }
  for (auto& f : failed) datasets.push_back(std::move(f));
  c.config = base_config("bar", {{"labels", cats}, {"datasets", datasets}},
                         axis("case"), y);
  return c;
}

// --- throughput against batch size ------------------------------------------

std::vector<Chart> throughput_vs_batch(const std::vector<Source>& sources,
                                       Palette& palette) {
  // group (model mode threads) -> series -> batch -> result
  std::map<std::string,
           std::map<std::string, std::map<int64_t, const results::RunResult*>>>
      groups;
  std::vector<std::string> order;
  for (const auto& s : sources)
    for (const auto& r : s.runs) {
      if (results::measure_of(r) != results::Measure::kSteps) continue;
      // The case without its batch (the axis) and backend (the series).
      const std::string g = results::key_of(r).name(results::CaseKey::kBackend |
                                                    results::CaseKey::kBatch);
      if (!groups.count(g)) order.push_back(g);
      groups[g][series(s, r.backend, many_sources(sources))]
            [r.requested.batch] = &r;
    }
  std::vector<Chart> out;
  for (const auto& g : order) {
    std::set<int64_t> batches;
    for (const auto& [name, by] : groups[g])
      for (const auto& [b, r] : by) batches.insert(b);
    if (batches.size() < 2) continue;
    Chart c{"throughput-" + std::to_string(out.size()),
            "Throughput against batch size: " + g,
            "Samples per second (batch / median time). Red crosses on the "
            "axis: out of memory at that batch. Grey points: invalid.",
            {},
            {"series", "batch", "state", "samples/s", "validity"},
            {}};
    json datasets = json::array();
    for (const auto& [name, by] : groups[g]) {
      json pts = json::array(), colors = json::array(), oom = json::array();
      for (const auto& [b, r] : by) {
        c.rows.push_back({name, std::to_string(b),
                          results::state_name(r->state),
                          r->state == results::State::kOk
                              ? fmt::format("{:.1f}", r->samples_per_second)
                              : "-",
                          r->validity.summary()});
        if (r->state == results::State::kOom)
          oom.push_back({{"x", b}, {"y", 0}});
        if (r->state != results::State::kOk) continue;
        pts.push_back({{"x", b}, {"y", r->samples_per_second}});
        colors.push_back(r->validity.valid() ? palette.of(name) : kInvalid);
      }
      datasets.push_back({{"label", name},
                          {"data", pts},
                          {"showLine", true},
                          {"borderColor", palette.of(name)},
                          {"pointBackgroundColor", colors}});
      if (!oom.empty())
        datasets.push_back({{"label", "OOM: " + name},
                            {"data", oom},
                            {"pointStyle", "crossRot"},
                            {"pointRadius", 9},
                            {"borderColor", palette.of(name)},
                            {"borderWidth", 3}});
    }
    c.config =
        base_config("scatter", {{"datasets", datasets}},
                    axis("batch size", "logarithmic"), axis("samples/s"));
    out.push_back(c);
  }
  return out;
}

// --- training: time and cost normalised, accuracy against time ---------------

std::vector<Chart> training_time_cost(const std::vector<Source>& sources) {
  Chart c{"training-time",
          "Training time and cost, normalised",
          "Time per training run (time to target, or all fixed epochs) and, "
          "where the run was priced, its cost, each relative to the case "
          "with the most threads of its task (1.0).",
          {},
          {"task", "threads", "seconds", "relative time", "cost $",
           "relative cost"},
          {}};
  // group -> threads -> seconds (median over repetitions)
  std::map<std::string, std::map<int, std::vector<double>>> groups;
  std::map<std::string, std::map<int, std::pair<double, double>>> costs;
  std::vector<std::string> order;
  for (const auto& s : sources) {
    for (const auto& r : s.training) {
      const auto sec = results::priced_seconds(r);
      if (!sec) continue;
      const std::string g =
          r.task + " " +
          series(s, results::engine_label(r), many_sources(sources));
      if (!groups.count(g)) order.push_back(g);
      groups[g][r.effective.threads].push_back(*sec);
    }
    for (const auto& d : s.derived) {
      const std::string g =
          d.group.substr(0, d.group.rfind(' '));  // drop the precision
      if (d.name == "cost_usd") costs[g][int(d.x)].first = d.value;
      if (d.name == "relative_cost") costs[g][int(d.x)].second = d.value;
    }
  }
  if (order.empty()) return {};
  std::set<int> all_threads;
  for (const auto& g : order)
    for (const auto& [t, v] : groups[g]) all_threads.insert(t);
  json datasets = json::array();
  std::map<int, json> time_data, cost_data;
  bool any_cost = false;
  for (const auto& g : order) {
    const auto& by = groups[g];
    const double base = bench::median(by.rbegin()->second);
    for (int t : all_threads) {
      const auto it = by.find(t);
      if (it == by.end()) {
        time_data[t].push_back(nullptr);
        cost_data[t].push_back(nullptr);
        continue;
      }
      const double sec = bench::median(it->second);
      time_data[t].push_back(sec / base);
      const auto ct = costs[g].find(t);
      const bool has_cost = ct != costs[g].end();
      any_cost = any_cost || has_cost;
      cost_data[t].push_back(has_cost ? json(ct->second.second) : json());
      c.rows.push_back(
          {g, std::to_string(t), fmt::format("{:.1f}", sec),
           fmt::format("{:.3f}", sec / base),
           has_cost ? fmt::format("{:.6f}", ct->second.first) : "-",
           has_cost ? fmt::format("{:.3f}", ct->second.second) : "-"});
    }
  }
  size_t i = 0;
  for (int t : all_threads) {
    datasets.push_back({{"label", std::to_string(t) + " threads: time"},
                        {"data", time_data[t]},
                        {"backgroundColor", shade(i)}});
    if (any_cost)
      datasets.push_back({{"label", std::to_string(t) + " threads: cost"},
                          {"data", cost_data[t]},
                          {"backgroundColor", shade(i) + "80"}});
    ++i;
  }
  c.config = base_config("bar", {{"labels", order}, {"datasets", datasets}},
                         axis("task"), axis("relative to the baseline"));
  return {c};
}

std::vector<Chart> accuracy_vs_time(const std::vector<Source>& sources,
                                    Palette& palette) {
  std::map<std::string,
           std::vector<std::pair<const Source*, const results::TrainRun*>>>
      tasks;
  std::vector<std::string> order;
  for (const auto& s : sources)
    for (const auto& r : s.training) {
      if (r.epochs.empty()) continue;
      if (!tasks.count(r.task)) order.push_back(r.task);
      tasks[r.task].push_back({&s, &r});
    }
  std::vector<Chart> out;
  for (const auto& task : order) {
    Chart c{"accuracy-" + std::to_string(out.size()),
            "Validation accuracy against training time: " + task,
            "One line per run (backend, threads, seed); colour: engine, "
            "marker: run; dashed: the target; "
            "stars: where a run reached it (its time to target). Grey: "
            "invalid runs.",
            {},
            {"run", "epoch", "train s", "val accuracy"},
            {}};
    json datasets = json::array();
    double target = 0, max_t = 0;
    std::map<std::string, size_t> runs_of;
    for (const auto& [s, r] : tasks[task]) {
      if (r->synthetic_data) continue;  // no accuracy was measured
      const std::string name =
          series(*s, results::engine_label(*r), many_sources(sources)) + " t" +
          std::to_string(r->effective.threads) + " seed " +
          std::to_string(r->seed);
      json pts = json::array();
      for (const auto& e : r->epochs) {
        pts.push_back({{"x", e.train_seconds}, {"y", e.val_accuracy}});
        max_t = std::max(max_t, e.train_seconds);
        c.rows.push_back({name, std::to_string(e.epoch),
                          fmt::format("{:.1f}", e.train_seconds),
                          fmt::format("{:.4f}", e.val_accuracy)});
      }
      // Colour: the engine, as in every chart; marker: the run.
      const std::string engine =
          series(*s, results::engine_label(*r), many_sources(sources));
      const std::string col =
          r->validity.valid() ? palette.of(engine) : kInvalid;
      datasets.push_back({{"label", name},
                          {"data", pts},
                          {"showLine", true},
                          {"pointStyle", marker(runs_of[engine]++)},
                          {"pointRadius", 4},
                          {"borderColor", col},
                          {"backgroundColor", col}});
      if (r->state == results::State::kConverged) {
        double acc = r->target;
        for (const auto& e : r->epochs)
          if (e.train_seconds == r->time_to_target) acc = e.val_accuracy;
        datasets.push_back({{"label", "target reached: " + name},
                            {"data", json::array({json{{"x", r->time_to_target},
                                                       {"y", acc}}})},
                            {"pointStyle", "star"},
                            {"pointRadius", 10},
                            {"borderColor", col},
                            {"borderWidth", 2}});
      }
      target = std::max(target, r->target);
    }
    if (target > 0)
      datasets.push_back(
          {{"label", fmt::format("target {:.4g}", target)},
           {"data", json::array({json{{"x", 0}, {"y", target}},
                                 json{{"x", max_t}, {"y", target}}})},
           {"showLine", true},
           {"borderDash", {6, 4}},
           {"borderColor", "#555"},
           {"pointRadius", 0}});
    c.config =
        base_config("scatter", {{"datasets", datasets}},
                    axis("training seconds"), axis("validation accuracy"));
    out.push_back(c);
  }
  return out;
}

// --- latency percentiles ----------------------------------------------------

Chart latency(const std::vector<Source>& sources) {
  Chart c{"latency",
          "Latency percentiles (batch 1)",
          "p50, p90 and p99 of single-item inference in ms.",
          {},
          {"case", "p50 ms", "p90 ms", "p99 ms", "n", "validity"},
          {}};
  std::vector<std::string> cats;
  json p50 = json::array(), p90 = json::array(), p99 = json::array();
  auto add = [&](const std::string& cat, double a, double b, double d,
                 const std::string& n, const std::string& v) {
    cats.push_back(cat);
    p50.push_back(a * 1e3);
    p90.push_back(b * 1e3);
    p99.push_back(d * 1e3);
    c.rows.push_back({cat, ms(a), ms(b), ms(d), n, v});
  };
  for (const auto& s : sources) {
    for (const auto& r : s.runs)
      if (results::measure_of(r) == results::Measure::kLatency &&
          r.state == results::State::kOk)
        add(r.model + " " + series(s, r.backend, many_sources(sources)) + " t" +
                threads_of(r),
            r.stats.median, r.stats.p90, r.stats.p99, std::to_string(r.stats.n),
            r.validity.summary());
    for (const auto& r : s.training)
      if (r.latency && r.latency->items > 0)
        add(r.task + " " +
                series(s, results::engine_label(r), many_sources(sources)) +
                " (trained)",
            r.latency->p50, r.latency->p90, r.latency->p99,
            std::to_string(r.latency->items), r.validity.summary());
  }
  if (cats.empty()) return c;
  json ds = json::array();
  ds.push_back(
      {{"label", "p50"}, {"data", p50}, {"backgroundColor", shade(0)}});
  ds.push_back(
      {{"label", "p90"}, {"data", p90}, {"backgroundColor", shade(1)}});
  ds.push_back(
      {{"label", "p99"}, {"data", p99}, {"backgroundColor", shade(2)}});
  c.config = base_config("bar", {{"labels", cats}, {"datasets", ds}},
                         axis("case"), axis("ms"));
  return c;
}

}  // namespace

std::vector<Chart> charts(const std::vector<Source>& sources) {
  Palette palette;
  std::vector<Chart> out;
  auto add = [&](std::vector<Chart> cs) {
    for (auto& c : cs)
      if (!c.config.is_null()) out.push_back(std::move(c));
  };
  add({time_per_batch(sources, palette)});
  add(throughput_vs_batch(sources, palette));
  add(scaling(sources, palette));
  add(process_scaling(sources, palette));
  add(training_time_cost(sources));
  add(accuracy_vs_time(sources, palette));
  add({latency(sources)});
  add(inference(sources, palette));
  add({generation(sources)});
  return out;
}

std::vector<std::string> invalid_results(const std::vector<Source>& sources) {
  std::vector<std::string> out;
  auto reasons = [](const results::Validity& v) {
    std::string s;
    for (const auto& r : v.reasons)
      s += (s.empty() ? "" : "; ") + r.reason + ": " + r.detail;
    return s;
  };
  for (const auto& s : sources) {
    for (const auto& r : s.runs)
      if (!r.validity.valid())
        out.push_back(results::key_of(r).name() + " [" + s.label +
                      "]: " + reasons(r.validity));
    for (const auto& r : s.training)
      if (!r.validity.valid())
        out.push_back(r.task + " " + results::engine_label(r) + " [" + s.label +
                      "]: " + reasons(r.validity));
    for (const auto& r : s.inference)
      if (!r.validity.valid())
        out.push_back(r.model + " " + r.backend + " " + r.kind + " " +
                      r.requested.options.precision + " [" + s.label +
                      "]: " + reasons(r.validity));
    for (const auto& r : s.generation)
      if (!r.validity.valid())
        out.push_back(r.model + " " + r.backend + " " + r.kind + " [" +
                      s.label + "]: " + reasons(r.validity));
  }
  return out;
}

}  // namespace nnbench::report
