#include "compare/verdict.h"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include "bench/statistics.h"
#include "results/case_key.h"
#include "results/kinds.h"

namespace nnbench::compare {
namespace {

struct Engine {
  Side side;
  std::optional<double> median;  // none: no valid time
  std::string state;             // the last failure, when nothing valid ran
  bool not_run = false;          // cannot run on this machine (said elsewhere)
  // From its first valid record: what may explain a slow time, and the
  // threads it ran (0: not reported).
  std::vector<std::string> known;
  int threads = 0;
};

std::string first_line(const std::string& s) {
  return s.substr(0, s.find('\n'));
}

// What a valid record says that may explain a slow time: reference kernels
// (oneDNN's loops of last resort) and a precision other than the one asked.
std::vector<std::string> known_reasons(const results::RunResult& r) {
  std::vector<std::string> out;
  const auto& x = r.effective.extras;
  if (const auto it = x.find("reference_kernels");
      it != x.end() && !it->second.empty() && it->second != "none")
    out.push_back("reference kernels: " + it->second);
  const std::string& asked = r.requested.options.precision;
  if (!asked.empty() && !r.effective.precision.empty() &&
      asked != r.effective.precision)
    out.push_back("ran " + r.effective.precision + " where " + asked +
                  " was asked");
  return out;
}

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
    ranked.push_back({*x.median, e});
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
  return s;
}

// The reasons a slow engine's records give in a cell, the threads it ran
// beside the fastest's among them.
std::string why_slow(const Engine& slow, const std::string& fastest_name,
                     const Engine& fastest) {
  std::vector<std::string> why = slow.known;
  if (slow.threads > 0 && fastest.threads > slow.threads)
    why.push_back(fmt::format("ran {} thread{} where {} ran {}", slow.threads,
                              slow.threads == 1 ? "" : "s", fastest_name,
                              fastest.threads));
  if (why.empty()) return "no reason in its record";
  std::string out;
  for (const auto& w : why) out += (out.empty() ? "" : "; ") + w;
  return out;
}

// One engine's candidates of one kind (far behind, or no time) over a
// model's cells, each with whether its cell is the headline: one entry,
// showing the headline cell when it is one of them, else the worst (the
// largest factor; the first cell for no time).
Behind pick(const std::vector<std::pair<Behind, bool>>& candidates, int of) {
  const std::pair<Behind, bool>* shown = &candidates.front();
  for (const auto& c : candidates) {
    if (c.second) {
      shown = &c;
      break;
    }
    if (c.first.factor && *c.first.factor > *shown->first.factor) shown = &c;
  }
  Behind b = shown->first;
  b.cells = static_cast<int>(candidates.size());
  b.of = of;
  return b;
}

}  // namespace

bool far_behind(std::optional<double> median, std::optional<double> fastest) {
  if (!median || !fastest || !(*fastest > 0)) return false;
  return *median / *fastest > kFarBehind;
}

std::string behind_heading() {
  return fmt::format(
      "Far behind the fastest (median more than {:g}x the fastest's in a "
      "cell) or with no valid time, and why, from the records:",
      kFarBehind);
}

std::string behind_text(const Behind& b) {
  std::string s =
      b.factor ? fmt::format("{} {:.2f}x behind {} in {}", b.engine, *b.factor,
                             b.fastest, b.cell)
               : fmt::format("{} ran no valid time in {}", b.engine, b.cell);
  if (b.of > 1)
    s += b.factor ? fmt::format(" (more than {:g}x in {} of its {} cells)",
                                kFarBehind, b.cells, b.of)
                  : fmt::format(" ({} of its {} cells)", b.cells, b.of);
  return s + ": " + b.why;
}

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
    if (results::measure_of(r) != results::Measure::kSteps) continue;
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
        !r.samples.empty()) {
      if (e.side.repetitions.empty()) {
        e.known = known_reasons(r);
        e.threads = r.effective.threads;
      }
      e.side.repetitions.push_back(r.samples);
    } else if (r.state == results::State::kNotRun) {
      e.not_run = true;  // the reason is said once, under the table
    } else if (r.state != results::State::kOk) {
      const std::string m = first_line(r.message);
      e.state =
          results::state_name(r.state) + (m.empty() ? "" : " (" + m + ")");
    } else {
      // "invalid: contended"
      e.state = r.validity.valid() ? "ok, no samples" : r.validity.summary();
    }
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
    // engine -> its far-behind cells, its cells with no time, its cells
    using Candidates = std::vector<std::pair<Behind, bool>>;
    std::map<std::string, std::tuple<Candidates, Candidates, int>> behind;
    for (auto& [name, c] : by[m]) {
      const std::string shown = c.key.name(results::CaseKey::kBackend);
      judged.push_back(judge(shown.substr(1), c.engines, o));
      const Cell& cell = judged.back();
      const bool is_head = &c == head;
      for (const auto& [e, x] : c.engines) {
        if (x.side.repetitions.empty() && x.not_run) continue;
        auto& [slow, none, of] = behind[e];
        ++of;
        if (x.side.repetitions.empty()) {
          none.push_back(
              {{e, cell.name, "", std::nullopt, 0, 0, x.state}, is_head});
          continue;
        }
        if (std::find(v.engines.begin(), v.engines.end(), e) == v.engines.end())
          v.engines.push_back(e);
        const Engine& fast = c.engines.at(cell.fastest);
        if (far_behind(x.median, fast.median))
          slow.push_back({{e, cell.name, cell.fastest, *x.median / *fast.median,
                           0, 0, why_slow(x, cell.fastest, fast)},
                          is_head});
      }
      if (is_head) v.headline = cell;
    }
    v.asked = static_cast<int>(behind.size());
    for (const auto& [e, b] : behind) {
      const auto& [slow, none, of] = b;
      if (!slow.empty()) v.behind.push_back(pick(slow, of));
      if (!none.empty()) v.behind.push_back(pick(none, of));
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
