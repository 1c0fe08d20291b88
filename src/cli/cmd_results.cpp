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
#include "reporters/csv.h"
#include "reporters/markdown.h"
#include "results/kinds.h"
#include "study/derive.h"
#include "study/run_cost.h"
#include "study/store.h"
#include "study/transfer.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/text.h"
#include "util/text_table.h"

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
  util::Table t({"run", "suite", "machine", "created (UTC)", "finished",
                 "cases", "stored"});
  for (const auto& r : s.runs())
    t.add({r.id, r.suite, machine_text(r.environment), r.created_utc,
           r.finished_utc.empty() ? "no" : r.finished_utc,
           std::to_string(r.cases), std::to_string(r.stored)});
  fmt::print("{}", t.str());
  return kExitOk;
}

int show_run(const ResultsArgs& a) {
  auto s = open(a);
  const auto run = need_run(s, a.run_id);
  fmt::print("run {}: suite {} ({}), {} of {} cases stored, created {}{}\n",
             run.id, run.suite, run.suite_file, run.stored, run.cases,
             run.created_utc,
             run.finished_utc.empty() ? ", not finished (--resume it)"
                                      : ", finished " + run.finished_utc);
  util::Table t({"#", "case", "state", "validity", "median ms (training: s)",
                 "samples/s"});
  for (const auto& r : s.results(a.run_id))
    t.add({std::to_string(r.index + 1), r.label, r.state,
           reporters::validity_text(r), reporters::cell_text(r),
           r.samples_per_second > 0
               ? fmt::format("{:.1f}", r.samples_per_second)
               : "-"});
  fmt::print("{}", t.str());
  const auto derived = s.derived(a.run_id);
  if (!derived.empty()) {
    util::Table d({"figure", "cases", "x", "value"});
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

// A stored record of a kind this build cannot read (registered by another
// build, or damaged): exported from the store's own columns, as they were
// written.
struct ColumnsOnly : results::Record {
  nlohmann::json stored;
  results::Headline figures;
  nlohmann::json serialize() const override { return stored; }
  results::Headline headline() const override { return figures; }
};

std::unique_ptr<results::Record> stored_record(const study::ResultRow& row) {
  try {
    return results::record_from_json(row.record);
  } catch (const std::exception&) {
    auto r = std::make_unique<ColumnsOnly>();
    r->stored = row.record;
    r->figures = {row.median_seconds, row.samples_per_second};
    r->kind = row.scenario;
    r->state = results::state_from_name(row.state);
    if (!row.valid) r->validity.add("stored", "invalid in the results store");
    return r;
  }
}

int export_run(const ResultsArgs& a) {
  if (!a.out.empty()) util::check_writable(a.out);
  auto s = open(a);
  const auto run = need_run(s, a.run_id);
  const auto rows = s.results(a.run_id);
  const auto derived = s.derived(a.run_id);
  std::string text;
  if (a.format == "json") {
    // The whole run, as `results import` reads it on another machine.
    text = study::run_json({run, rows, derived, s.path()}).dump(2) + "\n";
  } else {
    // The stored records replayed through the format's reporter.
    reporters::Csv csv(text);
    reporters::Markdown md(text);
    results::Reporter& r =
        a.format == "csv" ? static_cast<results::Reporter&>(csv) : md;
    results::ReportContext c;
    c.environment = run.environment;
    c.suite = run.suite;
    c.suite_file = run.suite_file;
    c.run_id = run.id;
    c.command = run.command;
    r.begin(c);
    for (const auto& row : rows) {
      const auto record = stored_record(row);
      r.record(study::entry_of(row, *record));
    }
    results::Ending e;
    e.derived = derived;
    e.price_note = study::price_note_of(run);
    r.end(e);
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
