// Gathering a study's runs from other machines: the store-level half of
// `results import` and `results study`, shared with `slurm collect`.
#include "cli/gather.h"

#include <fmt/core.h>

#include <map>

#include "cli/app.h"
#include "study/store.h"
#include "study/transfer.h"
#include "util/error.h"
#include "util/text.h"
#include "util/text_table.h"

namespace nnbench::cli {

// The machine a run was made on, from its environment: the CPU's name,
// its microarchitecture, the logical CPUs, GPUs and cloud instance; "-"
// where none is recorded.
std::string machine_text(const nlohmann::json& env) {
  if (!env.is_object() || !env.contains("cpu") || !env["cpu"].is_object())
    return "-";
  const auto& c = env["cpu"];
  std::string m = c.value("name", std::string("?"));
  if (const std::string u = c.value("microarchitecture", std::string());
      !u.empty())
    m += " (" + u + ")";
  if (env.contains("logical_cpus") && env["logical_cpus"].is_number_integer())
    m += ", " + std::to_string(env["logical_cpus"].get<int>()) + " CPUs";
  for (const auto& g : env.value("gpus", nlohmann::json::array()))
    if (g.is_string()) m += ", " + g.get<std::string>();
  if (const auto i = env.value("instance", nlohmann::json());
      i.is_object() && i.value("name", nlohmann::json()).is_string())
    m += ", " + i["name"].get<std::string>();
  // The host's hash, shortened: enough to tell two machines apart.
  if (env.contains("host") && env["host"].is_string())
    m += ", host " + env["host"].get<std::string>().substr(7, 8);
  return util::printable(m);
}

// A study split over machines (study/shard.h), gathered in this store:
// every shard there once, each with all its cases, all of one plan.
int check_study(const std::string& db, const std::string& name) {
  study::Store s(study::Store::path_or_default(db),
                 study::Store::Open::kExisting);
  std::vector<study::RunRow> runs;
  for (const auto& r : s.runs())
    if (r.options.contains("shard") && r.options["shard"].is_object() &&
        r.options["shard"].value("study", std::string()) == name)
      runs.push_back(r);
  if (runs.empty())
    throw Error("no shard of study '" + name + "' in " + s.path() +
                " (import the shards' stores: nnbench results import)");
  const auto& first = runs.front().options["shard"];
  const int count = first.value("count", 0);
  const std::string plan = first.value("study_plan_sha256", std::string());
  const int planned = first.value("study_cases", 0);
  std::vector<std::string> problems;
  std::map<int, std::vector<const study::RunRow*>> by_shard;
  util::Table t({"shard", "run", "machine", "cases", "stored"});
  int stored = 0;
  for (const auto& r : runs) {
    const auto& sh = r.options["shard"];
    const int index = sh.value("index", -1);
    by_shard[index].push_back(&r);
    stored += r.stored;
    t.add({std::to_string(index) + "/" + std::to_string(sh.value("count", 0)),
           r.id, machine_text(r.environment), std::to_string(r.cases),
           std::to_string(r.stored)});
    if (sh.value("count", 0) != count ||
        sh.value("study_plan_sha256", std::string()) != plan)
      problems.push_back("run " + r.id +
                         " planned another study under the same name (its "
                         "shard count or whole plan differs from run " +
                         runs.front().id +
                         "'s: same suite file, options and "
                         "engines on every machine?)");
    if (r.stored < r.cases)
      problems.push_back("shard " + std::to_string(index) + " (run " + r.id +
                         ") stored " + std::to_string(r.stored) + " of its " +
                         std::to_string(r.cases) + " cases");
  }
  for (int i = 0; i < count; ++i) {
    if (!by_shard.count(i))
      problems.push_back("shard " + std::to_string(i) + " of " +
                         std::to_string(count) + " is missing");
    else if (by_shard[i].size() > 1)
      problems.push_back("shard " + std::to_string(i) + " is here " +
                         std::to_string(by_shard[i].size()) +
                         " times: its cases would count twice");
  }
  fmt::print("{}", t.str());
  if (problems.empty()) {
    fmt::print("study {}: complete, {} shards, {} of {} cases stored\n", name,
               count, stored, planned);
    return kExitOk;
  }
  fmt::print("study {}: incomplete:\n", name);
  for (const auto& p : problems) fmt::print("  {}\n", p);
  return kExitRunNotOk;
}

// Runs made elsewhere into this store, all or none (study/transfer.h).
int import_files(const std::vector<std::string>& files, const std::string& db) {
  study::Store s(study::Store::path_or_default(db));
  for (const auto& r : study::import_runs(s, files)) {
    if (r.known)
      fmt::print("run {}: already in {}, skipped\n", r.id, s.path());
    else
      fmt::print("run {}: imported from {} ({} results, {})\n", r.id, r.from,
                 r.results, machine_text(r.environment));
  }
  return kExitOk;
}

}  // namespace nnbench::cli
