#include "reporters/markdown.h"

#include <fmt/core.h>

#include <map>
#include <set>

#include "results/kinds.h"
#include "study/derive.h"
#include "study/run_cost.h"
#include "util/text.h"

namespace nnbench::reporters {
namespace {

// A training case's seconds: the priced time when there is one (time to
// target, or all fixed epochs), else the training time it ran.
double train_seconds(const study::ResultRow& r) {
  if (const auto s = study::priced_seconds(r)) return *s;
  if (!r.record.is_object()) return 0;
  const auto it = r.record.find("total_train_seconds");
  return it != r.record.end() && it->is_number() ? it->get<double>() : 0.0;
}

bool training(const study::ResultRow& r) {
  return results::traits_of(r.scenario).measure == results::Measure::kTraining;
}

// The figure in the cells, by the first row's measure (a suite runs one
// scenario).
const char* what_cells_hold(const std::vector<study::ResultRow>& rows) {
  if (rows.empty()) return "median ms per mini-batch";
  switch (results::traits_of(rows[0].scenario).measure) {
    case results::Measure::kTraining:
      return "seconds per training run (time to target, or all epochs)";
    case results::Measure::kGeneration:
      return "median ms per output token (time to first token and more: "
             "the results file)";
    default:
      return "median ms per mini-batch";
  }
}

bool measured(const study::ResultRow& r) {
  return r.state == "ok" ||
         (training(r) && (r.state == "completed" || r.state == "converged"));
}

// The key columns of a table row and the cell's column, from one result.
// Every dimension the run varies is a key: the column axis (threads when
// several, else batch), model, backend, precision, mode or scenario, and
// batch, threads and processes wherever they vary without being the
// column. A cell then holds only repetitions of one case, never an average
// of different cases.
struct TableAxes {
  std::set<int> threads;
  std::set<int64_t> batches;
  bool by_threads = false, batch_key = false, ranks_key = false,
       scenario_key = false;
};

TableAxes table_axes(const std::vector<study::ResultRow>& rows) {
  TableAxes t;
  std::set<int> ranks;
  std::set<std::string> scenarios;
  for (const auto& r : rows) {
    t.threads.insert(r.threads);
    t.batches.insert(r.batch);
    ranks.insert(study::ranks_of(r));
    scenarios.insert(r.scenario);
  }
  t.by_threads = t.threads.size() > 1;
  t.batch_key = t.by_threads && t.batches.size() > 1;
  t.ranks_key = ranks.size() > 1;
  t.scenario_key = scenarios.size() > 1;
  return t;
}

std::vector<std::string> row_key(const TableAxes& t,
                                 const study::ResultRow& r) {
  std::vector<std::string> k{r.model, r.backend, r.precision, r.mode};
  if (t.scenario_key) k.push_back(r.scenario);
  if (t.batch_key) k.push_back(std::to_string(r.batch));
  if (t.ranks_key) {
    const int p = study::ranks_of(r);
    k.push_back(p > 1 ? std::to_string(p) + " " + study::engine_of(r) : "1");
  }
  return k;
}

// A row per case without its column axis; columns: threads when several,
// else batch sizes; cells: median ms per mini-batch (the median over the
// repetitions' medians), OOM where it ran out of memory.
}  // namespace

std::string rows_md(const std::string& suite, const std::string& run_id,
                    const std::vector<study::ResultRow>& rows) {
  const TableAxes axes = table_axes(rows);
  const auto column = [&](const study::ResultRow& r) {
    return axes.by_threads ? util::count(r.threads, "thread")
                           : "batch " + std::to_string(r.batch);
  };
  std::vector<std::string> cols;
  if (axes.by_threads)
    for (int t : axes.threads) cols.push_back(util::count(t, "thread"));
  else
    for (int64_t b : axes.batches) cols.push_back("batch " + std::to_string(b));
  std::vector<std::vector<std::string>> row_keys;
  std::map<std::vector<std::string>,
           std::map<std::string, std::vector<const study::ResultRow*>>>
      cells;
  for (const auto& r : rows) {
    const auto key = row_key(axes, r);
    if (!cells.count(key)) row_keys.push_back(key);
    cells[key][column(r)].push_back(&r);
  }
  std::string out = fmt::format(
      "Suite {} (run {}): {}; OOM: out of memory; (invalid: reasons): "
      "contended or otherwise untrustworthy.\n\n",
      suite, run_id, what_cells_hold(rows));
  std::vector<std::string> head{"model", "backend", "precision", "mode"};
  if (axes.scenario_key) head.push_back("scenario");
  if (axes.batch_key) head.push_back("batch");
  if (axes.ranks_key) head.push_back("processes");
  out += "|";
  for (const auto& h : head) out += " " + h + " |";
  for (const auto& c : cols) out += " " + c + " |";
  out += "\n|";
  for (size_t i = 0; i < head.size(); ++i) out += "---|";
  for (size_t i = 0; i < cols.size(); ++i) out += "---:|";
  out += "\n";
  for (const auto& key : row_keys) {
    out += "|";
    for (const auto& k : key) out += " " + k + " |";
    for (const auto& c : cols) {
      const auto it = cells[key].find(c);
      if (it == cells[key].end()) {
        out += " |";
        continue;
      }
      std::vector<double> ok;
      std::string other, invalid;
      for (const auto* r : it->second) {
        if (measured(*r)) {
          ok.push_back(training(*r) ? train_seconds(*r)
                                    : r->median_seconds * 1e3);
          if (!r->valid) invalid = " (" + validity_text(*r) + ")";
        } else {
          other = r->state == "oom" ? "OOM" : r->state;
        }
      }
      if (ok.empty()) {
        out += " " + other + " |";
        continue;
      }
      const double med = study::median_of(ok);
      out += fmt::format(" {:.3f}{} |", med, invalid);
    }
    out += "\n";
  }
  return out;
}

// Speed-up and efficiency as the thread-sweep table DLBench prints: a row
// per case group, a column per thread count.
std::string derived_md(const std::vector<study::DerivedRow>& rows) {
  std::string out;
  for (const char* name : {"speedup", "efficiency", "speedup_processes",
                           "efficiency_processes", "max_batch", "train_seconds",
                           "cost_usd", "relative_time", "relative_cost"}) {
    std::vector<std::string> groups;
    std::set<double> xs;
    std::map<std::string, std::map<double, double>> v;
    for (const auto& r : rows)
      if (r.name == name) {
        if (!v.count(r.group)) groups.push_back(r.group);
        v[r.group][r.x] = r.value;
        xs.insert(r.x);
      }
    if (groups.empty()) continue;
    const std::string n = name;
    const bool processes = n.find("_processes") != std::string::npos;
    out += fmt::format("\n{} against {}:\n\n| cases |",
                       processes ? n.substr(0, n.find('_')) : n,
                       processes ? "processes" : "threads");
    for (double x : xs) out += fmt::format(" {:g} |", x);
    out += "\n|---|";
    for (size_t i = 0; i < xs.size(); ++i) out += "---:|";
    out += "\n";
    for (const auto& g : groups) {
      out += "| " + g + " |";
      for (double x : xs) {
        const auto it = v[g].find(x);
        out += it == v[g].end() ? " |" : fmt::format(" {:.3g} |", it->second);
      }
      out += "\n";
    }
  }
  return out;
}

// "valid", or "invalid: " and the record's reasons (contended, ...).
std::string validity_text(const study::ResultRow& r) {
  if (r.valid) return "valid";
  std::string out = "invalid:";
  if (r.record.is_object() && r.record.contains("validity"))
    for (const auto& x :
         r.record["validity"].value("reasons", nlohmann::json::array()))
      out += " " + x.value("reason", std::string("?"));
  return out;
}

// Median ms per mini-batch, or seconds per training run ("s" appended).
std::string cell_text(const study::ResultRow& r) {
  if (r.state == "oom") return "OOM";
  if (!measured(r)) return r.state;
  const std::string v = training(r)
                            ? fmt::format("{:.1f} s", train_seconds(r))
                            : fmt::format("{:.3f}", r.median_seconds * 1e3);
  return r.valid ? v : v + " (" + validity_text(r) + ")";
}

void Markdown::begin(const results::ReportContext& c) {
  suite_ = c.suite;
  run_id_ = c.run_id;
}

void Markdown::record(const results::Entry& e) {
  rows_.push_back(study::result_row(e));
}

void Markdown::end(const results::Ending& e) {
  out_ += rows_md(suite_, run_id_, rows_) + derived_md(e.derived);
  if (!e.price_note.empty())
    out_ += "\nCosts priced as " + e.price_note + ".\n";
}

}  // namespace nnbench::reporters
