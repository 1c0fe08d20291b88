#include "report/machines.h"

#include <fmt/core.h>

#include "compare/machines.h"
#include "report/html.h"

namespace nnbench::report {
namespace {

// "12.3 ms, 650 samples/s, $0.0012 (0.52x, 0.71x)"; "-" for a gap, the
// reason for a job that ran without a valid time.
std::string cell(const compare::OnMachine& f, bool training) {
  if (!f.measured) return f.state.empty() ? "-" : f.state;
  std::string s = training ? fmt::format("{:.1f} s", f.seconds)
                           : fmt::format("{:.2f} ms, {:.0f}/s", f.seconds * 1e3,
                                         f.per_second);
  if (f.usd) s += ", " + compare::usd_text(*f.usd);
  if (f.time_vs_base) {
    s += fmt::format(" ({:.2f}x time", *f.time_vs_base);
    s += f.usd_vs_base ? fmt::format(", {:.2f}x cost)", *f.usd_vs_base) : ")";
  }
  return s;
}

}  // namespace

std::string machines_section(const std::vector<Source>& sources) {
  std::vector<compare::MachineRuns> in;
  for (const auto& s : sources)
    in.push_back({s.environment, &s.runs, &s.training});
  const compare::MachineAnswer a = compare::fastest_machines(in);
  if (a.machines.size() < 2) return "";
  std::vector<std::vector<std::string>> verdicts;
  for (const auto& [model, line] : a.verdicts)
    verdicts.push_back({model, line});
  std::vector<std::string> header = {"job"};
  std::vector<std::vector<std::string>> rows;
  for (const auto& m : a.machines) header.push_back(m.label);
  for (const auto& j : a.jobs) {
    std::vector<std::string> row = {j.name};
    for (const auto& f : j.on) row.push_back(cell(f, j.training));
    rows.push_back(std::move(row));
  }
  std::string prices;
  for (const auto& m : a.machines)
    prices +=
        "<li>" + escape_html(m.label) + ": " +
        escape_html(m.instance
                        ? fmt::format("${:.3f}/h, {} {} {} ({})",
                                      m.instance->usd_per_hour,
                                      m.instance->provider, m.instance->pricing,
                                      m.instance->date, m.instance->source)
                        : "no price (not a catalog instance; record "
                          "one with --instance NAME)") +
        "</li>\n";
  return fmt::format(
      "<section id=\"machines\">\n<h2>Which machine is fastest and cheapest "
      "for this job?</h2>\n{}<p class=\"caption\">Per model (or task), from "
      "the job measured on the most machines: the runner-up machine's median "
      "time over the fastest's with its 95 % bootstrap interval, and the "
      "same for cost (time x the instance's price, so the interval is the "
      "time's, scaled). Each machine's results come from its own processes, "
      "so the interval is across processes and machines at once; under {:g} "
      "% or not significant (Mann-Whitney, p &lt; 0.05) is a tie.</p>\n"
      "<details open><summary>Every job on every machine</summary>\n{}"
      "<p class=\"caption\">Median time per step (per run for training), "
      "samples per second, cost per 10,000 samples (per run), and in "
      "brackets each over the baseline machine, {} (the CPU-vs-GPU "
      "study's figure). \"-\": the machine has no such job; a state: it ran "
      "without a valid time (oom: the cloud GPU study's OOM cell).</p>\n"
      "</details>\n<p>Prices:</p>\n<ul>\n{}</ul>\n</section>\n",
      html_table({"model", "fastest and cheapest machine"}, verdicts, false),
      compare::engine_options().noise * 100, html_table(header, rows, false),
      escape_html(a.machines.front().label), prices);
}

}  // namespace nnbench::report
