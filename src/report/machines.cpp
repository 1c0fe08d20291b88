#include "report/machines.h"

#include <fmt/core.h>

#include <algorithm>

#include "bench/statistics.h"
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

std::string time_text(const compare::OnMachine& f, bool training) {
  return training ? fmt::format("{:.1f} s", f.seconds)
                  : fmt::format("{:.3f} ms", f.seconds * 1e3);
}

std::string price_text(const compare::MachineId& m) {
  return m.instance
             ? fmt::format("${:.3f}/h, {} {} {} ({})", m.instance->usd_per_hour,
                           m.instance->provider, m.instance->pricing,
                           m.instance->date, m.instance->source)
             : "no price (not a catalog instance; record one with "
               "--instance NAME)";
}

// Every job on every machine: the studies' tables for a few machines.
std::string grid(const compare::MachineAnswer& a) {
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
    prices += "<li>" + escape_html(m.label + ": " + price_text(m)) + "</li>\n";
  return "<details open><summary>Every job on every machine</summary>\n" +
         html_table(header, rows, false) +
         "<p class=\"caption\">Median time per step (per run for training), "
         "samples per second, cost per 10,000 samples (per run), and in "
         "brackets each over the baseline machine, " +
         escape_html(a.machines.front().label) +
         " (the CPU-vs-GPU study's figure). \"-\": the machine has no such "
         "job; a state: it ran without a valid time (oom: the cloud GPU "
         "study's OOM cell).</p>\n</details>\n<p>Prices:</p>\n<ul>\n" +
         prices + "</ul>\n";
}

// One job's machines ranked by time: the leading ones, the rest in a line,
// the whole ranking folded away.
std::string ranking(const compare::MachineAnswer& a, const std::string& model,
                    const compare::MachineJob& j) {
  std::vector<std::pair<double, size_t>> by;
  std::vector<size_t> none;
  for (size_t m = 0; m < j.on.size(); ++m) {
    if (j.on[m].measured)
      by.emplace_back(j.on[m].seconds, m);
    else
      none.push_back(m);
  }
  std::sort(by.begin(), by.end());
  const auto row = [&](size_t rank, size_t m) {
    const auto& f = j.on[m];
    return std::vector<std::string>{
        std::to_string(rank),
        a.machines[m].label,
        time_text(f, j.training),
        j.training ? "-" : fmt::format("{:.0f}", f.per_second),
        f.usd ? compare::usd_text(*f.usd) : "-",
        fmt::format("{:.2f}", f.seconds / by.front().first)};
  };
  const std::vector<std::string> header = {
      "rank",
      "machine",
      j.training ? "time per run" : "time per step",
      "samples/s",
      j.training ? "$ per run" : "$ per 10,000",
      "x fastest"};
  std::vector<std::vector<std::string>> lead, all;
  for (size_t i = 0; i < by.size(); ++i) {
    if (i < kLeadingMachines) lead.push_back(row(i + 1, by[i].second));
    all.push_back(row(i + 1, by[i].second));
  }
  std::string rest;
  if (by.size() > kLeadingMachines) {
    std::vector<double> t;
    for (size_t i = kLeadingMachines; i < by.size(); ++i)
      t.push_back(by[i].first);
    const auto f = [&](double s) {
      return j.training ? fmt::format("{:.1f} s", s)
                        : fmt::format("{:.3f} ms", s * 1e3);
    };
    rest = fmt::format("{} more machines: median {}, from {} to {}.", t.size(),
                       f(bench::median(t)), f(t.front()), f(t.back()));
  }
  if (!none.empty())
    rest += fmt::format(" {} without a valid time (a gap or a failure).",
                        none.size());
  return "<h3>" + escape_html(model + ": " + j.name) + "</h3>\n" +
         html_table(header, lead, false) +
         (rest.empty() ? "" : "<p>" + escape_html(rest) + "</p>\n") +
         (by.size() > kLeadingMachines
              ? "<details><summary>All " + std::to_string(by.size()) +
                    " machines</summary>\n" + html_table(header, all, false) +
                    "</details>\n"
              : "");
}

// Many machines: the leading machines overall, then each model's headline
// job ranked.
std::string board(const compare::MachineAnswer& a) {
  std::vector<std::vector<std::string>> lead;
  for (size_t i = 0; i < a.ranked.size() && i < kLeadingMachines; ++i) {
    const auto& m = a.machines[a.ranked[i]];
    lead.push_back({std::to_string(i + 1), m.label,
                    a.behind_fastest[i]
                        ? fmt::format("{:.2f}", *a.behind_fastest[i])
                        : "-",
                    price_text(m)});
  }
  std::string out =
      "<h3>Leading machines of " + std::to_string(a.machines.size()) +
      "</h3>\n" +
      html_table({"rank", "machine", "x fastest (geometric mean)", "price"},
                 lead, false) +
      "<p class=\"caption\">Ranked by the geometric mean, over the models' "
      "headline jobs the machine ran, of its time over each job's fastest; "
      "machines that ran more of them first.</p>\n";
  for (size_t v = 0; v < a.verdicts.size(); ++v)
    out += ranking(a, a.verdicts[v].first, a.jobs[a.headline_jobs[v]]);
  return out;
}

}  // namespace

compare::MachineAnswer machine_answer(const std::vector<Source>& sources) {
  std::vector<compare::MachineRuns> in;
  for (const auto& s : sources)
    in.push_back({s.environment, &s.runs, &s.training});
  return compare::fastest_machines(in);
}

std::string machines_section(const compare::MachineAnswer& a) {
  if (a.machines.size() < 2) return "";
  std::vector<std::vector<std::string>> verdicts;
  for (const auto& [model, line] : a.verdicts)
    verdicts.push_back({model, line});
  return fmt::format(
      "<section id=\"machines\">\n<h2>Which machine is fastest and cheapest "
      "for this job?</h2>\n{}<p class=\"caption\">Per model (or task), from "
      "the job measured on the most machines: the runner-up machine's median "
      "time over the fastest's with its 95 % bootstrap interval, and the "
      "same for cost (time x the instance's price, so the interval is the "
      "time's, scaled). Each machine's results come from its own processes, "
      "so the interval is across processes and machines at once; under {:g} "
      "% or not significant (Mann-Whitney, p &lt; 0.05) is a tie.</p>\n{}"
      "</section>\n",
      html_table({"model", "fastest and cheapest machine"}, verdicts, false),
      compare::engine_options().noise * 100,
      a.machines.size() <= kGridMachines ? grid(a) : board(a));
}

std::vector<Source> shown_sources(const std::vector<Source>& sources,
                                  const compare::MachineAnswer& a) {
  if (a.machines.size() <= kGridMachines) return sources;
  std::vector<bool> lead(a.machines.size(), false);
  for (size_t i = 0; i < kGridMachines && i < a.ranked.size(); ++i)
    lead[a.ranked[i]] = true;
  std::vector<Source> out;
  for (size_t s = 0; s < sources.size(); ++s)
    if (lead[a.source_machine[s]]) out.push_back(sources[s]);
  return out;
}

}  // namespace nnbench::report
