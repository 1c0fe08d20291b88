#include <fmt/core.h>

#include <algorithm>

#include "compare/verdict.h"
#include "reporters/tables.h"
#include "util/text_table.h"

namespace nnbench::reporters {
namespace {

// The coverage the interval achieves, never an assumed 95 %: fewer than 6
// samples give [min, max] at less (93.8 % at 5), one sample none at all.
std::string median_ci_cell(const results::Interval& ci) {
  if (ci.coverage <= 0) return "-";
  return fmt::format("{:.3f}-{:.3f} ({:.1f}%)", ci.lo * 1e3, ci.hi * 1e3,
                     ci.coverage * 100);
}

// A run refused on its memory estimate never allocated anything: say so,
// so it is not read as a measured out-of-memory.
std::string state_cell(const results::RunResult& r) {
  const std::string s = results::state_name(r.state);
  return r.oom_source == "estimate" ? s + " (estimate)" : s;
}

// Data-parallel runs: "16 = 2 x 8 mpi", the global batch over the ranks.
std::string batch_cell(const results::RunResult& r) {
  if (!r.distributed || r.distributed->global_batch <= 0)
    return std::to_string(r.requested.batch);
  const auto& d = *r.distributed;
  return fmt::format("{} = {} x {} {}", d.global_batch, d.ranks,
                     d.batch_per_rank, d.engine);
}

}  // namespace

std::string results_table(const std::vector<results::RunResult>& runs) {
  util::Table t({"model", "backend", "precision", "mode", "batch", "threads",
                 "state", "validity", "median ms", "median CI ms (coverage)",
                 "cv %", "n", "samples/s", "GFLOP/s", "% peak"});
  for (const auto& r : runs) {
    std::vector<std::string> row = {
        r.model, r.backend, r.requested.options.precision,
        backend::mode_name(r.requested.mode), batch_cell(r),
        // What ran: "0" (every CPU) resolved to its count.
        std::to_string(r.effective.threads > 0 ? r.effective.threads
                                               : r.requested.options.threads),
        state_cell(r),
        r.state == results::State::kOk ? r.validity.summary() : ""};
    if (r.state == results::State::kOk) {
      const auto& s = r.stats;
      row.insert(
          row.end(),
          {fmt::format("{:.3f}", s.median * 1e3), median_ci_cell(s.median_ci),
           fmt::format("{:.1f}", s.cv * 100), std::to_string(s.n),
           fmt::format("{:.1f}", r.samples_per_second),
           fmt::format("{:.1f}", r.gflops),
           // "-": no peak of this device (an accelerator's is not measured)
           r.peak_gflops > 0 ? fmt::format("{:.1f}", r.peak_fraction * 100)
                             : "-"});
    }
    t.add(row);
  }
  return t.str();
}

std::string verdict_lines(const std::vector<results::RunResult>& runs) {
  const auto verdicts = compare::fastest_engines(runs);
  bool any = false;
  size_t width = 0;
  std::string behind;
  for (const auto& v : verdicts) {
    any = any || v.asked > 1;
    width = std::max(width, v.model.size());
  }
  if (!any) return "";
  const auto o = compare::engine_options();
  std::string out = fmt::format(
      "\nFastest engine per model (ratio of medians with its 95 % bootstrap "
      "CI; one process per engine, so under {:g} % is a tie):\n",
      o.noise * 100);
  for (const auto& v : verdicts) {
    out += fmt::format("  {:<{}}  {}\n", v.model, width, v.line);
    if (v.asked > 1)
      for (const auto& b : v.behind)
        behind += fmt::format("  {:<{}}  {}\n", v.model, width,
                              compare::behind_text(b));
  }
  if (!behind.empty()) out += "\n" + compare::behind_heading() + "\n" + behind;
  return out;
}

// Engines a suite names that cannot run here (the studies' Caffe and
// CNTK): their rows say not_run, and this says why, once per engine.
std::string not_run_lines(const std::vector<results::RunResult>& runs) {
  std::vector<std::string> seen;
  std::string out;
  for (const auto& r : runs) {
    if (r.state != results::State::kNotRun ||
        std::find(seen.begin(), seen.end(), r.backend) != seen.end())
      continue;
    seen.push_back(r.backend);
    out += fmt::format("  {}: {}\n", r.backend, r.message);
  }
  return out.empty() ? "" : "\nNot run on this machine:\n" + out;
}

}  // namespace nnbench::reporters
