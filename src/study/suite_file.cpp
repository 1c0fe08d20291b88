#include "study/suite_file.h"

#include <toml++/toml.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <regex>
#include <set>
#include <sstream>

#include "bench/stopping/registry.h"
#include "cost/catalog.h"
#include "model/zoo/zoo.h"
#include "results/limits.h"
#include "scenarios/scenario.h"
#include "train/task.h"
#include "util/error.h"
#include "util/paths.h"
#include "util/toml_reader.h"

namespace nnbench::study {
namespace {

namespace fs = std::filesystem;

using Reader = util::TomlReader;

// Largest thread count a suite may ask for (results/limits.h): more is a
// typo, not a study, and libgomp crashes on 65536 (an oversubscribed count
// below it is measured and marked invalid).
using results::kMaxThreads;

void read_axes(const Reader& r, const std::string& k, const toml::node& v,
               Axes& a, SuiteSpec& s) {
  const auto named = [&](const char* kind) {
    r.each(v, [&](const toml::node& x) {
      s.names.push_back({kind, *x.value<std::string>(), r.where(x)});
    });
  };
  if (k == "backends") a.backends = r.list<std::string>(v, k), named("backend");
  if (k == "precisions")
    a.precisions = r.list<std::string>(v, k), named("precision");
  if (k == "modes") {
    a.modes = r.list<std::string>(v, k);
    r.each(v, [&](const toml::node& x) {
      const auto m = *x.value<std::string>();
      if (m != "train" && m != "infer")
        r.fail(x.source(), "mode '" + m + "' is not train or infer");
    });
  }
  if (k == "batches") {
    a.batches = r.list<int64_t>(v, k);
    r.each(v, [&](const toml::node& x) {
      const int64_t b = *x.value<int64_t>();
      if (b <= 0) r.fail(x.source(), "batches must be > 0");
      if (b > results::kMaxBatch)
        r.fail(x.source(), "batches must be at most " +
                               std::to_string(results::kMaxBatch) +
                               " (the bound), not " + std::to_string(b));
    });
  }
  if (k == "threads") {
    if (v.is_string()) {
      if (*v.value<std::string>() != "sweep")
        r.fail(v.source(), "threads must be a list of counts or \"sweep\"");
      a.threads = {kThreadSweep};
    } else {
      a.threads.clear();
      for (const int64_t t : r.list<int64_t>(v, k)) a.threads.push_back(t);
      r.each(v, [&](const toml::node& x) {
        const int64_t t = *x.value<int64_t>();
        if (t < 0 || t > kMaxThreads)
          r.fail(x.source(), "threads must be between 0 (every CPU) and " +
                                 std::to_string(kMaxThreads) +
                                 ", or the string \"sweep\"; not " +
                                 std::to_string(t));
      });
    }
  }
}

void read_grid(const Reader& r, const toml::table& t, SuiteSpec& s) {
  r.only(t,
         {"models", "tasks", "backends", "precisions", "modes", "batches",
          "threads", "processes", "repetitions"},
         "[grid]");
  for (auto&& [key, v] : t) {
    const std::string k(key.str());
    if (k == "models" || k == "tasks") {
      if (!s.models.empty())
        r.fail(key.source(), "give models or tasks, not both");
      s.models = r.list<std::string>(v, k);
      r.each(v, [&](const toml::node& x) {
        s.names.push_back({k == "models" ? "model" : "task",
                           *x.value<std::string>(), r.where(x)});
      });
    } else if (k == "processes") {
      s.grid.processes = r.list<int>(v, k);
      r.each(v, [&](const toml::node& x) {
        const int64_t p = *x.value<int64_t>();
        if (p < 1) r.fail(x.source(), "processes must be >= 1");
        if (p > 1024)
          r.fail(x.source(),
                 "processes must be at most 1024 (the bound), "
                 "not " +
                     std::to_string(p));
      });
    } else if (k == "repetitions") {
      s.repetitions = r.scalar<int>(v, k);
      if (s.repetitions < 1) r.fail(v.source(), "repetitions must be >= 1");
      if (s.repetitions > results::kMaxRepetitions)
        r.fail(v.source(), "repetitions must be at most " +
                               std::to_string(results::kMaxRepetitions) +
                               " (the bound), not " +
                               std::to_string(s.repetitions));
    } else {
      read_axes(r, k, v, s.grid, s);
    }
  }
}

void read_model_overrides(const Reader& r, const toml::node& n, SuiteSpec& s) {
  const toml::array* a = n.as_array();
  if (!a) r.fail(n.source(), "'model' must be an array of tables ([[model]])");
  std::vector<std::pair<std::string, int>> blocks;  // name, line
  for (const auto& e : *a) {
    const toml::table& t = r.table(e, "model");
    r.only(t, {"name", "backends", "precisions", "modes", "batches", "threads"},
           "[[model]]");
    if (!t.contains("name")) r.fail(t.source(), "[[model]] needs a name");
    ModelOverride o;
    o.name = r.scalar<std::string>(*t.get("name"), "name");
    for (const auto& [seen, line] : blocks)
      if (seen == o.name)
        r.fail(t.get("name")->source(),
               "[[model]] '" + o.name + "' is given twice (first at line " +
                   std::to_string(line) + "): merge the two blocks");
    blocks.emplace_back(o.name, t.get("name")->source().begin.line);
    if (std::find(s.models.begin(), s.models.end(), o.name) == s.models.end())
      r.fail(t.get("name")->source(),
             "[[model]] '" + o.name + "' is not in [grid] models");
    Axes axes = s.grid;
    for (auto&& [key, v] : t) {
      const std::string k(key.str());
      if (k == "name") continue;
      read_axes(r, k, v, axes, s);
      if (k == "backends") o.backends = axes.backends;
      if (k == "precisions") o.precisions = axes.precisions;
      if (k == "modes") o.modes = axes.modes;
      if (k == "batches") o.batches = axes.batches;
      if (k == "threads") o.threads = axes.threads;
    }
    s.overrides.push_back(o);
  }
}

void read_exclusions(const Reader& r, const toml::node& n, SuiteSpec& s) {
  const toml::array* a = n.as_array();
  if (!a)
    r.fail(n.source(), "'exclude' must be an array of tables ([[exclude]])");
  for (const auto& e : *a) {
    const toml::table& t = r.table(e, "exclude");
    r.only(t, {"model", "backend", "precision", "mode", "batch", "threads"},
           "[[exclude]]");
    if (t.empty()) r.fail(t.source(), "an empty [[exclude]] drops every case");
    Exclusion x;
    for (auto&& [key, v] : t) {
      const std::string k(key.str());
      if (k == "model" || k == "backend" || k == "precision")
        if (const auto name = v.value_exact<std::string>())
          s.names.push_back({k, *name, r.where(v)});
      if (k == "model") x.model = r.scalar<std::string>(v, k);
      if (k == "backend") x.backend = r.scalar<std::string>(v, k);
      if (k == "precision") x.precision = r.scalar<std::string>(v, k);
      if (k == "mode") x.mode = r.scalar<std::string>(v, k);
      if (k == "batch") x.batch = r.scalar<int64_t>(v, k);
      if (k == "threads") x.threads = r.scalar<int>(v, k);
    }
    s.exclusions.push_back(x);
  }
}

// [stop]: the bounds, the criterion by name and its parameters as keys of
// their own ("max_rel = 0.02"); max_relative_ci is the median-ci shorthand.
void read_stop(const Reader& r, const toml::table& t, SuiteSpec& s) {
  const std::set<std::string> bounds = {"min_iterations", "min_seconds",
                                        "max_iterations", "max_seconds"};
  if (const auto* c = t.get("criterion")) {
    s.stop.criterion = r.scalar<std::string>(*c, "criterion");
    if (!bench::stopping::find_criterion(s.stop.criterion))
      r.fail(c->source(), bench::stopping::problem(s.stop));
  }
  for (auto&& [key, v] : t) {
    const std::string k(key.str());
    if (k == "min_iterations") s.stop.min_iterations = r.scalar<int>(v, k);
    if (k == "min_seconds") s.stop.min_seconds = r.scalar<double>(v, k);
    if (k == "max_iterations") s.stop.max_iterations = r.scalar<int>(v, k);
    if (k == "max_seconds") s.stop.max_seconds = r.scalar<double>(v, k);
    if (bounds.count(k) || k == "criterion") continue;
    if (k == "max_relative_ci") {
      if (t.get("criterion"))
        r.fail(key.source(),
               "[stop] max_relative_ci is the median-ci shorthand: give "
               "either it or 'criterion'");
      results::set_max_relative_ci(s.stop, r.scalar<double>(v, k));
      continue;
    }
    s.stop.parameters[k] = r.scalar<double>(v, k);
    if (const std::string why = bench::stopping::problem(s.stop); !why.empty())
      r.fail(key.source(),
             why.find("has no parameter") == std::string::npos
                 ? why
                 : "unknown key '" + k +
                       "' in [stop]: neither a bound (min_iterations "
                       "min_seconds max_iterations max_seconds) nor a "
                       "parameter of criterion '" +
                       s.stop.criterion + "'");
  }
}

void read_rules(const Reader& r, const toml::table& root, SuiteSpec& s) {
  if (const auto* n = root.get("warmup")) {
    const toml::table& t = r.table(*n, "warmup");
    r.only(t, {"min_iterations", "min_seconds", "max_seconds"}, "[warmup]");
    for (auto&& [key, v] : t) {
      const std::string k(key.str());
      if (k == "min_iterations") s.warmup.min_iterations = r.scalar<int>(v, k);
      if (k == "min_seconds") s.warmup.min_seconds = r.scalar<double>(v, k);
      if (k == "max_seconds") s.warmup.max_seconds = r.scalar<double>(v, k);
    }
  }
  if (const auto* n = root.get("stop")) read_stop(r, r.table(*n, "stop"), s);
  if (const std::string why = bench::stopping::rules_problem(s.warmup, s.stop);
      !why.empty()) {
    const auto* at =
        root.get(why.rfind("[warmup]", 0) == 0 ? "warmup" : "stop");
    r.fail(at ? at->source() : root.source(), why);
  }
  if (const auto* n = root.get("isolation")) {
    const toml::table& t = r.table(*n, "isolation");
    r.only(t, {"timeout_seconds", "memory_limit_gib"}, "[isolation]");
    for (auto&& [key, v] : t) {
      const std::string k(key.str());
      const double x = r.scalar<double>(v, k);
      // A week, and 64 TiB: beyond either is a typo.
      const double most = k == "timeout_seconds" ? results::kMaxSeconds : 65536;
      if (!(x >= 0 && x <= most))
        r.fail(v.source(), "'" + k + "' must be between 0 and " +
                               std::to_string(static_cast<int64_t>(most)));
      if (k == "timeout_seconds") s.isolation.timeout_seconds = x;
      if (k == "memory_limit_gib") s.isolation.memory_limit_gib = x;
    }
  }
  if (const auto* n = root.get("settings")) {
    for (auto&& [key, v] : r.table(*n, "settings")) {
      const std::string k(key.str());
      s.names.push_back({"setting", k, r.where(v)});
      if (v.is_string())
        s.settings[k] = *v.value<std::string>();
      else if (v.is_boolean())
        s.settings[k] = *v.value<bool>() ? "true" : "false";
      else if (v.is_integer())
        s.settings[k] = std::to_string(*v.value<int64_t>());
      else if (v.is_floating_point())
        s.settings[k] = std::to_string(*v.value<double>());
      else
        r.fail(v.source(), "setting '" + k + "' must be a string or number");
    }
  }
}

void read_cost(const Reader& r, const toml::node& n, SuiteSpec& s) {
  const toml::table& t = r.table(n, "cost");
  r.only(t, {"instance", "baseline_threads"}, "[cost]");
  CostRule c;
  const auto* inst = t.get("instance");
  if (!inst) r.fail(t.source(), "[cost] needs an instance from the catalog");
  c.instance = r.scalar<std::string>(*inst, "instance");
  try {
    cost::find_instance(cost::load_catalog(cost::default_catalog_path()),
                        c.instance);
  } catch (const Error& e) {
    r.fail(inst->source(), e.what());
  }
  if (const auto* b = t.get("baseline_threads")) {
    c.baseline_threads = r.scalar<int>(*b, "baseline_threads");
    if (c.baseline_threads < 0)
      r.fail(b->source(), "baseline_threads must be >= 0 (0: the most)");
    if (c.baseline_threads > kMaxThreads)
      r.fail(b->source(),
             "baseline_threads must be at most " + std::to_string(kMaxThreads) +
                 " (the bound), not " + std::to_string(c.baseline_threads));
  }
  s.cost = c;
}

void read_distributed(const Reader& r, const toml::node& n, SuiteSpec& s) {
  const toml::table& t = r.table(n, "distributed");
  r.only(t, {"engine", "scaling", "overlap", "bucket_bytes"}, "[distributed]");
  DistributedRule d;
  const auto* e = t.get("engine");
  if (!e) r.fail(t.source(), "[distributed] needs an engine (mpi or gloo)");
  d.engine = r.scalar<std::string>(*e, "engine");
  if (d.engine != "mpi" && d.engine != "gloo")
    r.fail(e->source(), "engine '" + d.engine + "' is not mpi or gloo");
  if (const auto* x = t.get("scaling")) {
    d.scaling = r.scalar<std::string>(*x, "scaling");
    if (d.scaling != "strong" && d.scaling != "weak")
      r.fail(x->source(), "scaling '" + d.scaling + "' is not strong or weak");
  }
  if (const auto* x = t.get("overlap"))
    d.overlap = r.scalar<bool>(*x, "overlap");
  if (const auto* x = t.get("bucket_bytes")) {
    d.bucket_bytes = r.scalar<int64_t>(*x, "bucket_bytes");
    if (d.bucket_bytes < 4096 || d.bucket_bytes > (int64_t{1} << 32))
      r.fail(x->source(),
             "bucket_bytes must be between 4096 and 4294967296 (4 GiB)");
  }
  s.distributed = d;
}

// Strong scaling divides each global batch over the ranks: a batch that
// does not split is an error at its line, not a failed case at run time.
void check_batches_split(const Reader& r, const toml::table& root,
                         const SuiteSpec& s) {
  const auto check = [&](const toml::node* batches,
                         const std::vector<int64_t>& list) {
    for (int p : s.grid.processes)
      for (size_t i = 0; i < list.size(); ++i)
        if (p > 1 && list[i] % p != 0) {
          const toml::node* at = batches;
          if (batches && batches->is_array()) at = batches->as_array()->get(i);
          r.fail(at ? at->source() : root.source(),
                 "batch " + std::to_string(list[i]) + " does not split over " +
                     std::to_string(p) +
                     " processes (strong scaling divides the global batch)");
        }
  };
  const auto* grid = root.get("grid");
  check(grid && grid->as_table() ? grid->as_table()->get("batches") : nullptr,
        s.grid.batches);
  if (const auto* models = root.get("model"); models && models->is_array())
    for (size_t i = 0; i < s.overrides.size(); ++i)
      if (s.overrides[i].batches)
        if (const auto* t = models->as_array()->get(i)->as_table())
          check(t->get("batches"), *s.overrides[i].batches);
}

}  // namespace

SuiteSpec parse_suite_file(const std::string& path) {
  toml::table root;
  try {
    root = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    Reader(path).fail(e.source(), std::string(e.description()));
  }
  const Reader r(path);
  r.only(root,
         {"description", "scenario", "device", "grid", "model", "exclude",
          "warmup", "stop", "isolation", "settings", "cost", "distributed"},
         "the suite");
  SuiteSpec s;
  s.file = path;
  s.name = fs::path(path).stem().string();
  if (const auto* n = root.get("description"))
    s.description = r.scalar<std::string>(*n, "description");
  if (const auto* n = root.get("scenario")) {
    s.scenario = r.scalar<std::string>(*n, "scenario");
    s.names.push_back({"scenario", s.scenario, r.where(*n)});
  }
  if (const auto* n = root.get("device")) {
    s.device = r.scalar<std::string>(*n, "device");
    static const std::regex kDevice("cpu|cuda(:[0-9]+)?");
    if (!std::regex_match(*s.device, kDevice))
      r.fail(n->source(), "device '" + *s.device +
                              "': cpu, cuda or cuda:N (N the GPU's index)");
  }
  const auto* grid = root.get("grid");
  if (!grid) r.fail(root.source(), "the suite needs a [grid] table");
  read_grid(r, r.table(*grid, "grid"), s);
  if (s.models.empty())
    r.fail(grid->source(), "[grid] needs models (or tasks for training)");
  if (const auto* n = root.get("model")) read_model_overrides(r, *n, s);
  if (const auto* n = root.get("exclude")) read_exclusions(r, *n, s);
  read_rules(r, root, s);
  if (const auto* n = root.get("cost")) read_cost(r, *n, s);
  if (const auto* n = root.get("distributed")) read_distributed(r, *n, s);
  for (int p : s.grid.processes)
    if (p > 1 && !s.distributed)
      r.fail(grid->source(),
             "[grid] processes above 1 need a [distributed] table naming the "
             "engine");
  if (s.distributed && s.distributed->scaling == "strong")
    check_batches_split(r, root, s);
  return s;
}

void check_names(const SuiteSpec& s, const std::vector<std::string>& backends) {
  std::vector<std::string> tasks;
  for (const auto& t : train::tasks()) tasks.push_back(t.name);
  const std::map<std::string, std::vector<std::string>> known = {
      {"model", model::zoo::names()},
      {"task", tasks},
      {"scenario", scenarios::scenario_names()},
      {"precision", {"fp32", "bf16", "fp16", "int8"}},
      {"backend", backends},
  };
  // An unknown scenario is named below, where its line is known.
  const auto& listed = known.at("scenario");
  const bool training =
      std::find(listed.begin(), listed.end(), s.scenario) != listed.end() &&
      scenarios::make_scenario(s.scenario)->runs_tasks();
  for (const auto& n : s.names) {
    // The scenario decides what a grid entry is, whichever key named it.
    if (n.kind == "setting") continue;  // the scenario's, below
    const bool entry = n.kind == "model" || n.kind == "task";
    const std::string kind = entry ? (training ? "task" : "model") : n.kind;
    if (kind == "backend" && (n.value == "all" || n.value == "default"))
      continue;
    const auto& names = known.at(kind);
    if (std::find(names.begin(), names.end(), n.value) != names.end()) continue;
    std::string list;
    for (const auto& x : names) list += (list.empty() ? "" : ", ") + x;
    std::string hint;
    if (kind == "task")
      hint = " (the training scenario runs tasks: nnbench train --list)";
    else if (kind == "model")
      hint = " (nnbench models lists the zoo)";
    throw Error(n.where + ": unknown " + kind + " '" + n.value + "'" + hint +
                "; known: " + list);
  }
  std::string which;
  const std::string why = scenarios::make_scenario(s.scenario)
                              ->settings_problem(s.settings, &which);
  if (why.empty()) return;
  std::string where = s.file;
  for (const auto& n : s.names)
    if (n.kind == "setting" && n.value == which) where = n.where;
  throw Error(where + ": [settings] " + why);
}

std::string suites_dir() {
  if (const char* env = std::getenv("NNBENCH_SUITES_DIR"); env && *env)
    return env;
  return util::shipped_path("suites", "suites");
}

std::vector<std::string> shipped_suites() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(suites_dir(), ec))
    if (e.path().extension() == ".toml") out.push_back(e.path().stem());
  std::sort(out.begin(), out.end());
  return out;
}

SuiteSpec load_suite(const std::string& name_or_file) {
  if (name_or_file.find('/') != std::string::npos ||
      fs::path(name_or_file).extension() == ".toml") {
    if (!fs::exists(name_or_file))
      throw Error(name_or_file + ": no such suite file");
    return parse_suite_file(name_or_file);
  }
  const fs::path p = fs::path(suites_dir()) / (name_or_file + ".toml");
  if (!fs::exists(p)) {
    std::string known;
    for (const auto& n : shipped_suites()) known += " " + n;
    throw Error("unknown suite '" + name_or_file + "'; shipped:" + known +
                " (or give a .toml file)");
  }
  return parse_suite_file(p.string());
}

}  // namespace nnbench::study
