#include "report/page.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "compare/verdict.h"
#include "report/charts.h"
#include "report/html.h"
#include "report/machines.h"
#include "util/error.h"

namespace nnbench::report {
namespace {

using nlohmann::json;

// Draws the error bars of a bar chart (Chart.js has none built in), then,
// once every chart is drawn, records on each canvas how many pixels it
// painted: a blank chart is visible in the page's DOM, not only to the eye.
// Each canvas also records its axes' types and tick labels and its series'
// colours, so a browser test reads what a reader sees.
constexpr const char* kScript = R"JS(
(function () {
  const errorBars = {
    id: 'errorBars',
    afterDatasetsDraw(chart) {
      const ctx = chart.ctx, y = chart.scales.y;
      chart.data.datasets.forEach((ds, i) => {
        const meta = chart.getDatasetMeta(i);
        if (!ds.errorBars || meta.hidden) return;
        ctx.save();
        ctx.strokeStyle = '#222';
        ctx.lineWidth = 1.5;
        meta.data.forEach((bar, j) => {
          const e = ds.errorBars[j];
          if (!e) return;
          const x = bar.x, lo = y.getPixelForValue(e[0]),
                hi = y.getPixelForValue(e[1]);
          ctx.beginPath();
          ctx.moveTo(x, lo); ctx.lineTo(x, hi);
          ctx.moveTo(x - 4, lo); ctx.lineTo(x + 4, lo);
          ctx.moveTo(x - 4, hi); ctx.lineTo(x + 4, hi);
          ctx.stroke();
        });
        ctx.restore();
      });
    }
  };
  const specs = JSON.parse(
      document.getElementById('nnbench-charts').textContent);
  const drawn = [];
  for (const s of specs) {
    const config = s.config;
    config.plugins = [errorBars];
    drawn.push(new Chart(document.getElementById(s.id), config));
  }
  for (const chart of drawn) {
    const d = chart.canvas.dataset;
    d.xType = chart.scales.x.type;
    d.yType = chart.scales.y.type;
    d.xTicks = JSON.stringify(chart.scales.x.ticks.map(t => String(t.label)));
    d.series = JSON.stringify(chart.data.datasets.map(
        ds => [ds.label, String(ds.borderColor || ds.backgroundColor)]));
  }
  for (const canvas of document.querySelectorAll('canvas')) {
    const d = canvas.getContext('2d')
                  .getImageData(0, 0, canvas.width, canvas.height).data;
    let painted = 0;
    for (let i = 3; i < d.length; i += 4) if (d[i]) painted++;
    canvas.dataset.paintedPixels = painted;
  }
  document.body.dataset.charts = specs.length;
})();
)JS";

constexpr const char* kStyle = R"CSS(
body { font-family: sans-serif; margin: 2em auto; max-width: 1100px;
       color: #222; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 2em; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }
td, th { border: 1px solid #ccc; padding: 2px 6px; text-align: left; }
td.n { text-align: right; }
.chart { position: relative; height: 380px; }
.caption { color: #555; font-size: 0.9em; }
.invalid { color: #a00; }
#answer { background: #eef5ea; border: 1px solid #9c9; padding: 0.2em 1em;
          margin: 1em 0; }
#answer h2 { margin-top: 0.5em; }
#answer table { font-size: 0.95em; background: #fff; }
#answer .behind { color: #a00; }
details { margin: 0.5em 0; }
)CSS";

std::string text(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number()) return it->dump();
  return "";
}

std::string environment(const Source& s) {
  const json& e = s.environment;
  if (!e.is_object()) return "<p>No environment recorded.</p>\n";
  const json cpu = e.value("cpu", json::object());
  std::string isa;
  const json isa_list = cpu.value("isa", json::array());
  for (const auto& x : isa_list)
    if (x.is_string()) isa += (isa.empty() ? "" : " ") + x.get<std::string>();
  std::string libs;
  const json backends = e.value("backends", json::object());
  for (const auto& [name, b] : backends.items()) {
    const json l = b.value("libraries", json::object());
    for (const auto& [lib, ver] : l.items())
      libs += (libs.empty() ? "" : ", ") + name + ": " + lib + " " +
              (ver.is_string() ? ver.get<std::string>() : ver.dump());
  }
  std::vector<std::vector<std::string>> rows = {
      {"CPU", text(cpu, "name") + " (" + text(cpu, "microarchitecture") + ")"},
      {"ISA", isa},
      {"logical CPUs", text(e, "logical_cpus")},
      {"libraries", libs},
      {"BLAS kernel", text(e, "openblas_core")},
      {"nnbench", text(e, "nnbench_version") + " " + text(e, "git_revision")},
  };
  const json fixes = e.value("fixes_applied", json::array());
  for (const auto& f : fixes)
    if (f.is_string()) rows.push_back({"fix applied", f.get<std::string>()});
  const json warnings = e.value("warnings", json::array());
  for (const auto& w : warnings)
    if (w.is_string()) rows.push_back({"warning", w.get<std::string>()});
  return "<h3>" + escape_html(s.label) + "</h3>\n" +
         html_table({"", ""}, rows, false);
}

// "AMD EPYC (Zen 5), 2 logical CPUs, AVX-512 with BF16": the machine in the
// words the studies use, from the recorded environment.
std::string machine_line(const json& e) {
  if (!e.is_object()) return "machine not recorded";
  const json cpu = e.value("cpu", json::object());
  std::vector<std::string> isa;
  for (const auto& x : cpu.value("isa", json::array()))
    if (x.is_string()) isa.push_back(x.get<std::string>());
  const auto has = [&](const char* f) {
    return std::find(isa.begin(), isa.end(), f) != isa.end();
  };
  std::string vec = has("avx512f") ? "AVX-512"
                    : has("avx2")  ? "AVX2"
                    : has("neon")  ? "NEON"
                                   : "no wide vectors";
  std::vector<std::string> extra;
  if (has("avx512_bf16")) extra.push_back("BF16");
  if (has("avx512_vnni") || has("avx_vnni")) extra.push_back("VNNI");
  if (has("amx_bf16")) extra.push_back("AMX");
  for (size_t i = 0; i < extra.size(); ++i)
    vec += (i ? ", " : " with ") + extra[i];
  const std::string micro = text(cpu, "microarchitecture");
  return text(cpu, "name") + (micro.empty() ? "" : " (" + micro + ")") + ", " +
         text(e, "usable_cpus") + " usable of " + text(e, "logical_cpus") +
         " logical CPUs, " + vec;
}

// The engines a suite named that cannot run on this machine (the
// studies' Caffe and CNTK), each with its reason: "cntk: ...; caffe: ...".
std::string not_run_engines(const std::vector<results::RunResult>& runs) {
  std::map<std::string, std::string> why;
  for (const auto& r : runs)
    if (r.state == results::State::kNotRun) why[r.backend] = r.message;
  std::string out;
  for (const auto& [b, w] : why)
    out += (out.empty() ? "" : "; ") + b + ": " + w;
  return out;
}

// "onednn (oneDNN 2.6.3), torch (LibTorch 1.13.1)": the engines that ran;
// then those that could not.
std::string engines_line(const Source& s) {
  std::map<std::string, std::string> version;
  for (const auto& r : s.runs)
    if (r.state != results::State::kNotRun)
      version[r.backend] = r.backend_version;
  std::string out;
  for (const auto& [b, v] : version)
    out += (out.empty() ? "" : ", ") + b + (v.empty() ? "" : " (" + v + ")");
  const std::string missing = not_run_engines(s.runs);
  return missing.empty() ? out : out + "; not run here: " + missing;
}

// The first screen: the studies' question, the answer per model, the
// machine it holds for; the evidence follows. Empty when no model ran on
// two engines (nothing to choose between).
std::string first_screen(const std::vector<Source>& sources) {
  std::string body;
  for (const auto& s : sources) {
    const auto verdicts = compare::fastest_engines(s.runs);
    bool choice = false;
    for (const auto& v : verdicts) choice = choice || v.asked > 1;
    if (!choice) continue;
    std::vector<std::vector<std::string>> rows;
    std::string behind;
    for (const auto& v : verdicts) {
      rows.push_back({v.model, v.line});
      if (v.asked > 1)
        for (const auto& b : v.behind)
          behind += "<li>" +
                    escape_html(v.model + ": " + compare::behind_text(b)) +
                    "</li>\n";
    }
    if (sources.size() > 1) body += "<h3>" + escape_html(s.label) + "</h3>\n";
    body += "<p class=\"machine\">On " +
            escape_html(machine_line(s.environment)) +
            "; engines: " + escape_html(engines_line(s)) + ".</p>\n" +
            html_table({"model", "fastest engine"}, rows, false);
    if (!behind.empty())
      body += "<p class=\"behind\">" + escape_html(compare::behind_heading()) +
              "</p>\n<ul class=\"behind\">\n" + behind + "</ul>\n";
  }
  if (body.empty()) return "";
  return fmt::format(
      "<section id=\"answer\">\n<h2>Which engine is fastest on this "
      "machine?</h2>\n{}<p class=\"caption\">Per model, from its headline "
      "cell (one that two engines ran; training at the most threads "
      "first): the ratio of the runner-up's "
      "median time per mini-batch to the fastest's, with its 95 % bootstrap "
      "interval; a difference that is not significant (Mann-Whitney, p &lt; "
      "0.05) or under {:g} % is a tie (one process per engine: processes of "
      "one case differ by a few per cent). Then how many of the model's "
      "cells (mode, batch, threads) each engine won. The evidence "
      "follows.</p>\n</section>\n",
      body, compare::engine_options().noise * 100);
}

std::string summary(const std::vector<Source>& sources) {
  int n = 0, ok = 0, invalid = 0;
  std::map<std::string, int> other;
  auto count = [&](const results::Record& r) {
    ++n;
    if (r.state == results::State::kOk ||
        r.state == results::State::kConverged ||
        r.state == results::State::kCompleted)
      ++ok;
    else
      ++other[results::state_name(r.state)];
    if (!r.validity.valid()) ++invalid;
  };
  for (const auto& s : sources) {
    for (const auto& r : s.runs) count(r);
    for (const auto& r : s.training) count(r);
    for (const auto& r : s.inference) count(r);
    for (const auto& r : s.generation) count(r);
  }
  std::string states, missing;
  for (const auto& [k, v] : other) states += fmt::format(", {} {}", v, k);
  for (const auto& s : sources)
    if (const std::string m = not_run_engines(s.runs); !m.empty())
      missing += "<p>Not run on this machine: " + escape_html(m) + ".</p>\n";
  return fmt::format(
      "<p>{} results: {} measured{}; <span class=\"{}\">{} invalid</span> "
      "(drawn grey, listed below).</p>\n{}",
      n, ok, escape_html(states), invalid ? "invalid" : "", invalid, missing);
}

}  // namespace

std::string chartjs_path() {
  if (const char* p = std::getenv("NNBENCH_CHARTJS"); p && *p) return p;
  return "/usr/share/javascript/chart.js/chart.min.js";
}

std::string chartjs_version(const std::string& script) {
  std::smatch m;
  const std::string head = script.substr(0, 300);
  if (std::regex_search(head, m, std::regex(R"(Chart\.js v([0-9][0-9.]*))")))
    return m[1];
  return "unknown";
}

std::string render_page(const std::vector<Source>& sources) {
  const std::string path = chartjs_path();
  std::ifstream in(path);
  if (!in)
    throw Error("cannot read Chart.js at " + path +
                " (Debian package libjs-chart.js; scripts/setup installs it)");
  std::stringstream js;
  js << in.rdbuf();
  std::string chartjs = js.str();
  // The library must not end the <script> element it is embedded in.
  for (size_t at; (at = chartjs.find("</script")) != std::string::npos;)
    chartjs.replace(at, 2, "<\\/");
  // Many machines: the answer across all of them, then the rest of the
  // page for the leading ones (report/machines.h).
  const compare::MachineAnswer machines = machine_answer(sources);
  const std::vector<Source> shown = shown_sources(sources, machines);
  const auto figures = charts(shown);
  std::string labels;
  if (shown.size() < sources.size())
    labels = fmt::format("{} runs from {} machines", sources.size(),
                         machines.machines.size());
  else
    for (const auto& s : sources)
      labels += (labels.empty() ? "" : ", ") + s.label;
  std::string details;
  if (shown.size() < sources.size())
    details = fmt::format(
        "<p>What follows details the runs of the {} leading machines ({} of "
        "the {} runs); the table above ranks every machine.</p>\n",
        kGridMachines, shown.size(), sources.size());
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<title>nnbench report: " +
      escape_html(labels) + "</title>\n<style>" + kStyle +
      "</style>\n</head><body>\n<h1>nnbench report</h1>\n<p>" +
      escape_html(labels) + "</p>\n" + machines_section(machines) + details +
      first_screen(shown) + summary(sources) + "<h2>Environment</h2>\n";
  for (const auto& s : shown) out += environment(s);
  json specs = json::array();
  for (const auto& f : figures) {
    out += "<h2>" + escape_html(f.title) + "</h2>\n<p class=\"caption\">" +
           escape_html(f.caption) + "</p>\n<div class=\"chart\"><canvas id=\"" +
           escape_html(f.id) +
           "\"></canvas></div>\n<details><summary>"
           "Numbers</summary>\n" +
           html_table(f.header, f.rows) + "</details>\n";
    specs.push_back({{"id", f.id}, {"config", f.config}});
  }
  if (figures.empty())
    out +=
        "<p>No figures: the sources hold no results "
        "that any figure draws.</p>\n";
  const auto bad = invalid_results(shown);
  if (!bad.empty()) {
    out += "<h2>Invalid results</h2>\n<ul>\n";
    for (const auto& b : bad) out += "<li>" + escape_html(b) + "</li>\n";
    out += "</ul>\n";
  }
  for (const auto& s : shown)
    if (!s.price_note.empty())
      out += "<p class=\"caption\">Costs of " + escape_html(s.label) + ": " +
             escape_html(s.price_note) + "</p>\n";
  out += "<p class=\"caption\">Charts: Chart.js " +
         escape_html(chartjs_version(chartjs)) + " (" + escape_html(path) +
         "), embedded.</p>\n";
  out += "<script type=\"application/json\" id=\"nnbench-charts\">" +
         json_for_script(specs) + "</script>\n<script>" + chartjs +
         "</script>\n<script>" + kScript + "</script>\n</body></html>\n";
  return out;
}

}  // namespace nnbench::report
