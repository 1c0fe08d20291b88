// `nnbench results`: what the store holds. list (each run's machine), show
// RUN_ID, export RUN_ID --format csv|json|md (markdown in the studies'
// shape: a row per network, a column per thread count or batch size, OOM
// cells marked), import FILE... (runs made elsewhere: study/transfer.h).
#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <set>

#include "cli/app.h"
#include "cli/commands.h"
#include "cli/gather.h"
#include "cli/table.h"
#include "results/kinds.h"
#include "study/derive.h"
#include "study/run_cost.h"
#include "study/store.h"
#include "study/transfer.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/text.h"

namespace nnbench::cli {
namespace {

struct ResultsArgs {
  std::string db, run_id, format = "md", out;
  std::vector<std::string> files;  // import
  std::string study;               // study
};

study::Store open(const ResultsArgs& a) {
  return study::Store(study::Store::path_or_default(a.db),
                      study::Store::Open::kExisting);
}

study::RunRow need_run(study::Store& s, const std::string& id) {
  auto r = s.run(id);
  if (!r) throw Error("no run '" + id + "' in the results store");
  return *r;
}

int list_runs(const ResultsArgs& a) {
  auto s = open(a);
  Table t({"run", "suite", "machine", "created (UTC)", "finished", "cases",
           "stored"});
  for (const auto& r : s.runs())
    t.add({r.id, r.suite, machine_text(r.environment), r.created_utc,
           r.finished_utc.empty() ? "no" : r.finished_utc,
           std::to_string(r.cases), std::to_string(r.stored)});
  fmt::print("{}", t.str());
  return kExitOk;
}

// "valid", or "invalid: " and the record's reasons (contended, ...).
std::string validity(const study::ResultRow& r) {
  if (r.valid) return "valid";
  std::string out = "invalid:";
  if (r.record.is_object() && r.record.contains("validity"))
    for (const auto& x :
         r.record["validity"].value("reasons", nlohmann::json::array()))
      out += " " + x.value("reason", std::string("?"));
  return out;
}

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

bool measured(const study::ResultRow& r) {
  return r.state == "ok" ||
         (training(r) && (r.state == "completed" || r.state == "converged"));
}

// Median ms per mini-batch, or seconds per training run ("s" appended).
std::string cell(const study::ResultRow& r) {
  if (r.state == "oom") return "OOM";
  if (!measured(r)) return r.state;
  const std::string v = training(r)
                            ? fmt::format("{:.1f} s", train_seconds(r))
                            : fmt::format("{:.3f}", r.median_seconds * 1e3);
  return r.valid ? v : v + " (" + validity(r) + ")";
}

int show_run(const ResultsArgs& a) {
  auto s = open(a);
  const auto run = need_run(s, a.run_id);
  fmt::print("run {}: suite {} ({}), {} of {} cases stored, created {}{}\n",
             run.id, run.suite, run.suite_file, run.stored, run.cases,
             run.created_utc,
             run.finished_utc.empty() ? ", not finished (--resume it)"
                                      : ", finished " + run.finished_utc);
  Table t({"#", "case", "state", "validity", "median ms (training: s)",
           "samples/s"});
  for (const auto& r : s.results(a.run_id))
    t.add({std::to_string(r.index + 1), r.label, r.state, validity(r), cell(r),
           r.samples_per_second > 0
               ? fmt::format("{:.1f}", r.samples_per_second)
               : "-"});
  fmt::print("{}", t.str());
  const auto derived = s.derived(a.run_id);
  if (!derived.empty()) {
    Table d({"figure", "cases", "x", "value"});
    for (const auto& r : derived)
      d.add({r.name, r.group, fmt::format("{:g}", r.x),
             fmt::format("{:.4g}", r.value)});
    fmt::print(
        "\nDerived (x: batch for samples_per_second, processes for "
        "*_processes, else threads){}:\n{}",
        run.options.contains("cost")
            ? "; priced as " +
                  run.options["cost"].value("price_source", std::string())
            : "",
        d.str());
  }
  return kExitOk;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string export_csv(const std::vector<study::ResultRow>& rows) {
  std::string out =
      "index,model,backend,precision,mode,batch,threads,repetition,state,"
      "valid,median_seconds,samples_per_second,case_key\n";
  for (const auto& r : rows)
    out += fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{},{},{}\n", r.index, csv_field(r.model),
        csv_field(r.backend), r.precision, r.mode, r.batch, r.threads,
        r.repetition, r.state, r.valid ? 1 : 0,
        r.median_seconds > 0 ? fmt::format("{:.9g}", r.median_seconds) : "",
        r.samples_per_second > 0 ? fmt::format("{:.6g}", r.samples_per_second)
                                 : "",
        r.key);
  return out;
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
std::string export_md(const study::RunRow& run,
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
      run.suite, run.id,
      !rows.empty() && training(rows[0])
          ? "seconds per training run (time to target, or all epochs)"
          : "median ms per mini-batch");
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
          if (!r->valid) invalid = " (" + validity(*r) + ")";
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

int export_run(const ResultsArgs& a) {
  if (!a.out.empty()) util::check_writable(a.out);
  auto s = open(a);
  const auto run = need_run(s, a.run_id);
  const auto rows = s.results(a.run_id);
  const auto derived = s.derived(a.run_id);
  std::string text;
  if (a.format == "csv") {
    text = export_csv(rows);
  } else if (a.format == "json") {
    // The whole run, as `results import` reads it on another machine.
    text = study::run_json({run, rows, derived, s.path()}).dump(2) + "\n";
  } else {
    text = export_md(run, rows) + derived_md(derived);
    if (run.options.contains("cost"))
      text += "\nCosts priced as " +
              run.options["cost"].value("price_source", std::string()) +
              "; relative figures against " +
              run.options["cost"].value("baseline", std::string()) + ".\n";
  }
  if (a.out.empty())
    fmt::print("{}", text);
  else
    util::write_file_atomically(a.out, text);
  return kExitOk;
}

}  // namespace

Action add_results(CLI::App& app) {
  auto a = std::make_shared<ResultsArgs>();
  app.add_option("--db", a->db,
                 "Results store (default $NNBENCH_DB, else "
                 "~/.local/share/nnbench/results.db)");
  app.require_subcommand(1);
  auto* list = app.add_subcommand("list", "The stored runs");
  auto* show = app.add_subcommand("show", "One run's cases and states");
  show->add_option("run", a->run_id, "Run id (see list)")->required();
  auto* exp = app.add_subcommand("export", "One run as CSV, JSON or markdown");
  exp->add_option("run", a->run_id, "Run id (see list)")->required();
  exp->add_option("--format", a->format, "csv, json or md")
      ->check(CLI::IsMember({"csv", "json", "md"}))
      ->capture_default_str();
  exp->add_option("--out", a->out, "Write here instead of stdout");
  auto* imp = app.add_subcommand(
      "import",
      "Runs made elsewhere into this store: other stores (.db) or JSON "
      "exports (results export --format json); a run already here is "
      "skipped, an id clash with other content is an error");
  imp->add_option("files", a->files, "Stores or run exports")
      ->required()
      ->check(CLI::ExistingFile);
  auto* stu = app.add_subcommand(
      "study",
      "A study split over machines (suite --shard), gathered here: every "
      "shard once, each with all its cases (exit 1 when not)");
  stu->add_option("name", a->study, "The study's name (--study)")->required();
  return [a, list, show, exp, imp, stu] {
    if (list->parsed()) return list_runs(*a);
    if (stu->parsed()) return check_study(a->db, a->study);
    if (show->parsed()) return show_run(*a);
    if (imp->parsed()) return import_files(a->files, a->db);
    return export_run(*a);
  };
}

}  // namespace nnbench::cli
