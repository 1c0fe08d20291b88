#include "study/plan.h"

#include <algorithm>
#include <filesystem>
#include <random>
#include <set>

#include "data/dataset.h"
#include "data/manifest.h"
#include "results/result.h"
#include "scenarios/scenario.h"
#include "util/error.h"

namespace nnbench::study {
namespace {

template <typename T>
const std::vector<T>& pick(const std::optional<std::vector<T>>& o,
                           const std::vector<T>& grid) {
  return o ? *o : grid;
}

bool excluded(const SuiteSpec& s, const std::string& model,
              const std::string& backend, const std::string& precision,
              const std::string& mode, int64_t batch, int threads) {
  for (const auto& x : s.exclusions) {
    if (x.model && *x.model != model) continue;
    if (x.backend && *x.backend != backend) continue;
    if (x.precision && *x.precision != precision) continue;
    if (x.mode && *x.mode != mode) continue;
    if (x.batch && *x.batch != batch) continue;
    if (x.threads && *x.threads != threads) continue;
    return true;
  }
  return false;
}

bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

std::vector<std::string> resolve_backends(const std::vector<std::string>& b,
                                          const PlanOptions& o) {
  std::vector<std::string> out;
  for (const auto& name : b) {
    if (name == "all")
      out.insert(out.end(), o.all_backends.begin(), o.all_backends.end());
    else
      out.push_back(name == "default" ? o.default_backend : name);
  }
  std::vector<std::string> unique;
  for (const auto& n : out)
    if (std::find(unique.begin(), unique.end(), n) == unique.end())
      unique.push_back(n);
  return unique;
}

std::vector<int> resolve_threads(const std::vector<int>& t, int cpus) {
  if (t.size() == 1 && t[0] == kThreadSweep) return thread_sweep(cpus);
  return t;
}

}  // namespace

std::vector<int> thread_sweep(int cpus) {
  std::vector<int> out;
  for (int t = 1; t < cpus; t *= 2) out.push_back(t);
  out.push_back(std::max(cpus, 1));
  return out;
}

results::CaseKey PlannedCase::case_key() const {
  std::string what = c.task.empty() ? c.model : c.task;
  if (what.empty()) what = c.model_file;
  return results::key_of(what, scenario, c.request);
}

std::string PlannedCase::group() const {
  return case_key().name(results::CaseKey::kBatch | results::CaseKey::kThreads);
}

std::string PlannedCase::label() const {
  return case_key().name() + " r" + std::to_string(repetition + 1);
}

nlohmann::json case_json(const PlannedCase& p) {
  return {{"scenario", p.scenario},
          {"model", p.c.model},
          {"model_file", p.c.model_file},
          {"task", p.c.task},
          {"request", results::request_json(p.c.request)},
          {"settings", p.c.settings},
          {"repetition", p.repetition}};
}

PlannedCase case_from_json(const nlohmann::json& j) {
  PlannedCase p;
  p.scenario = j.at("scenario");
  p.c.model = j.at("model");
  p.c.model_file = j.at("model_file");
  p.c.task = j.at("task");
  p.c.request = results::request_from_json(j.at("request"));
  p.c.settings = j.at("settings").get<std::map<std::string, std::string>>();
  p.repetition = j.at("repetition");
  p.key = data::sha256_hex(case_json(p).dump());
  return p;
}

std::vector<PlannedCase> plan(const SuiteSpec& s, const PlanOptions& o) {
  std::vector<PlannedCase> out;
  const auto precisions = [&](const ModelOverride* ov) {
    return o.precision ? std::vector<std::string>{*o.precision}
                       : pick(ov->precisions, s.grid.precisions);
  };
  const auto thread_list = [&](const ModelOverride* ov) {
    return o.threads ? std::vector<int>{*o.threads}
                     : pick(ov->threads, s.grid.threads);
  };
  const int repetitions = o.repetitions.value_or(s.repetitions);
  // A training scenario's entries are tasks, and it trains whatever the
  // mode axis says.
  const auto scenario = scenarios::make_scenario(s.scenario);
  const bool tasks = scenario->runs_tasks();
  const bool infers = scenario->infers_only();
  for (const auto& model : s.models) {
    const ModelOverride* ov = nullptr;
    for (const auto& x : s.overrides)
      if (x.name == model) ov = &x;
    const ModelOverride none;
    if (!ov) ov = &none;
    const auto& listed = pick(ov->backends, s.grid.backends);
    // An inference engine that came with "all" sits out training cases
    // (a scenario that only infers has none, whatever its mode axis says).
    const auto sits_out = [&](const std::string& backend,
                              const std::string& mode) {
      return ((mode == "train" && !infers) || tasks) &&
             contains(o.inference_only, backend) && !contains(listed, backend);
    };
    for (const auto& backend : resolve_backends(listed, o))
      for (const auto& precision : precisions(ov))
        for (const auto& mode : pick(ov->modes, s.grid.modes))
          for (auto batch : pick(ov->batches, s.grid.batches))
            for (auto threads : resolve_threads(thread_list(ov), o.usable_cpus))
              for (int processes : s.grid.processes) {
                if (excluded(s, model, backend, precision, mode, batch,
                             threads) ||
                    sits_out(backend, mode))
                  continue;
                for (int rep = 0; rep < repetitions; ++rep) {
                  PlannedCase p;
                  p.scenario = s.scenario;
                  (tasks ? p.c.task : p.c.model) = model;
                  results::RunRequest& r = p.c.request;
                  r = o.base;
                  r.backend = backend;
                  r.mode = backend::mode_from_name(mode);
                  r.batch = batch;
                  r.options.precision = precision;
                  r.options.threads = threads;
                  if (!o.device && s.device) r.options.device = *s.device;
                  if (processes > 1)
                    r.distributed = {s.distributed->engine, processes,
                                     s.distributed->scaling};
                  r.warmup = o.warmup ? *o.warmup : s.warmup;
                  r.stop = o.stop ? *o.stop : s.stop;
                  p.c.settings = s.settings;
                  p.repetition = rep;
                  p.key = data::sha256_hex(case_json(p).dump());
                  out.push_back(std::move(p));
                }
              }
  }
  // Two cases with one key would be run twice and stored once: the suite
  // reader refuses the lists that make them; this guards the rest.
  std::set<std::string> keys;
  for (const auto& p : out)
    if (!keys.insert(p.key).second)
      throw Error(s.file + ": the case " + p.label() +
                  " is planned twice (a model, backend or other value listed "
                  "twice): each case runs once per repetition");
  if (o.interleave_seed) {
    std::mt19937_64 rng(*o.interleave_seed);
    std::shuffle(out.begin(), out.end(), rng);
  }
  return out;
}

double estimate_seconds(const PlannedCase& p) {
  return scenarios::make_scenario(p.scenario)->estimate_seconds(p.c);
}

void check_datasets(const std::vector<PlannedCase>& cases) {
  namespace fs = std::filesystem;
  std::set<std::pair<std::string, std::string>> seen;  // data set, path
  for (const auto& p : cases) {
    const auto& c = p.c;
    scenarios::Scenario::DataNeed need;
    try {
      need = scenarios::make_scenario(p.scenario)->data_need(c);
    } catch (const Error& e) {
      throw Error(p.label() + ": " + e.what());
    }
    const auto& [name, path, how] = need;
    if (name.empty() || path == data::kSyntheticData) continue;
    if (!seen.insert({name, path}).second) continue;
    std::string where;
    try {
      where = data::dataset_path(name, path);
    } catch (const Error& e) {
      throw Error(p.label() + ": " + e.what() + "; give it with " + how);
    }
    std::error_code ec;
    if (!fs::exists(where, ec))
      throw Error(p.label() + ": data set '" + name + "': " + where +
                  " does not exist; give its location with " + how);
  }
}

}  // namespace nnbench::study
