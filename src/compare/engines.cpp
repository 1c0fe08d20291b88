#include "compare/engines.h"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "bench/statistics.h"
#include "results/case_key.h"

namespace nnbench::compare {
namespace {

struct Engine {
  Side side;
  double median = 0;
  std::string state;  // the last failure, when nothing valid ran
};

int threads_in(const results::CaseKey& k) {
  return std::atoi(k.threads.c_str());
}

Cell judge(const std::string& name, std::map<std::string, Engine>& engines,
           const Options& o) {
  Cell c;
  c.name = name;
  std::vector<std::pair<double, std::string>> ranked;
  for (auto& [e, x] : engines) {
    if (x.side.repetitions.empty()) continue;
    x.median = bench::median(samples_of(x.side, false));
    ranked.push_back({x.median, e});
  }
  std::sort(ranked.begin(), ranked.end());
  if (ranked.empty()) return c;
  c.fastest = ranked[0].second;
  if (ranked.size() < 2) return c;
  c.runner_up = ranked[1].second;
  // A is the runner-up, B the fastest: the ratio B/A is below 1.
  const Comparison cmp =
      compare_case(name, engines[c.runner_up].side, engines[c.fastest].side, o);
  c.speedup = 1 / cmp.ratio;
  c.speedup_ci = {1 / cmp.ratio_ci.hi, 1 / cmp.ratio_ci.lo,
                  cmp.ratio_ci.coverage};
  c.tie = cmp.verdict != Verdict::kFaster;
  c.why = cmp.why;
  return c;
}

std::string sentence(const ModelVerdict& v) {
  const Cell& h = v.headline;
  std::string s;
  if (h.fastest.empty()) {
    s = "no engine measured a valid time";
  } else if (h.runner_up.empty()) {
    s = h.fastest + " only";
  } else if (h.tie) {
    s = fmt::format("tie: {} and {} ({:.2f}x, 95 % CI {:.2f}-{:.2f}; {})",
                    h.fastest, h.runner_up, h.speedup, h.speedup_ci.lo,
                    h.speedup_ci.hi, h.why);
  } else {
    s = fmt::format("{} is {:.2f}x faster than {} (95 % CI {:.2f}-{:.2f})",
                    h.fastest, h.speedup, h.runner_up, h.speedup_ci.lo,
                    h.speedup_ci.hi);
  }
  s += ", " + h.name;
  if (v.cells > 1) {
    // The cells each engine won, most first.
    std::vector<std::pair<int, std::string>> won;
    for (const auto& [e, n] : v.wins_by) won.push_back({-n, e});
    std::sort(won.begin(), won.end());
    std::string list;
    for (const auto& [n, e] : won)
      list += (list.empty() ? "" : ", ") + e + " " + std::to_string(-n);
    s += fmt::format("; cells won of {}: {}{}", v.cells,
                     list.empty() ? "none" : list,
                     v.ties ? fmt::format(", {} tied", v.ties) : "");
  }
  for (const auto& m : v.missing) s += "; " + m;
  return s;
}

}  // namespace

std::vector<ModelVerdict> fastest_engines(
    const std::vector<results::RunResult>& runs, const Options& o) {
  struct CellRuns {
    results::CaseKey key;  // as ran where one ran; the backend left out
    bool ran = false;
    std::map<std::string, Engine> engines;
  };
  // model -> cell name -> its runs by engine
  std::map<std::string, std::map<std::string, CellRuns>> by;
  std::vector<std::string> models;
  for (const auto& r : runs) {
    if (r.kind != "throughput") continue;
    // Cells by the threads asked: a run that failed before its backend
    // said how many threads it runs ("0": every CPU) shares the cell of
    // the runs that did; the cell is named by the threads that ran.
    results::CaseKey asked = results::key_of(r.model, r.kind, r.requested);
    asked.what = "";
    if (r.distributed && r.distributed->ranks > 1) {
      asked.ranks = r.distributed->ranks;
      asked.engine = r.distributed->engine;
    }
    if (!by.count(r.model)) models.push_back(r.model);
    CellRuns& c = by[r.model][asked.name(results::CaseKey::kBackend)];
    if (!c.ran) c.key = asked;
    if (r.state == results::State::kOk) {
      c.key = results::key_of(r);
      c.key.what = "";
      c.ran = true;
    }
    Engine& e = c.engines[r.backend];
    if (r.state == results::State::kOk && r.validity.valid() &&
        !r.samples.empty())
      e.side.repetitions.push_back(r.samples);
    else if (r.state == results::State::kNotRun)
      e.state = "not run here";  // the reason is said once, under the table
    else if (r.state != results::State::kOk)
      e.state = results::state_name(r.state) +
                (r.message.empty() ? "" : " (" + r.message + ")");
    else
      e.state = "invalid (" + r.validity.summary() + ")";
  }
  std::vector<ModelVerdict> out;
  for (const auto& m : models) {
    ModelVerdict v;
    v.model = m;
    // The headline: a cell two engines ran in before one only one did,
    // then training before inference, the most threads, the largest batch.
    const CellRuns* head = nullptr;
    const auto rank = [](const CellRuns& c) {
      int ran = 0;
      for (const auto& [e, x] : c.engines) ran += !x.side.repetitions.empty();
      return std::make_tuple(std::min(ran, 2), c.key.mode == "train",
                             threads_in(c.key), c.key.batch);
    };
    for (const auto& [name, c] : by[m])
      if (!head || rank(c) > rank(*head)) head = &c;
    std::vector<Cell> judged;
    for (auto& [name, c] : by[m]) {
      const std::string shown = c.key.name(results::CaseKey::kBackend);
      judged.push_back(judge(shown.substr(1), c.engines, o));
      for (const auto& [e, x] : c.engines) {
        if (x.side.repetitions.empty()) {
          if (&c == head) v.missing.push_back(e + ": " + x.state);
        } else if (std::find(v.engines.begin(), v.engines.end(), e) ==
                   v.engines.end()) {
          v.engines.push_back(e);
        }
      }
      if (&c == head) v.headline = judged.back();
    }
    for (const Cell& c : judged) {
      if (c.runner_up.empty()) continue;
      ++v.cells;
      if (c.tie) {
        ++v.ties;
      } else {
        ++v.wins_by[c.fastest];
        if (c.fastest == v.headline.fastest) ++v.wins;
      }
    }
    v.line = sentence(v);
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace nnbench::compare
