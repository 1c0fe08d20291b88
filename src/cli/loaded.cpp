#include "cli/loaded.h"

#include <filesystem>
#include <fstream>

#include "results/case_key.h"
#include "results/kinds.h"
#include "study/store.h"
#include "util/error.h"

namespace nnbench::cli {

Loaded load_results(const std::string& name, const std::string& db) {
  Loaded l;
  l.name = name;
  if (std::filesystem::is_regular_file(name)) {
    results::Report rep;
    try {
      rep =
          results::report_from_json(nlohmann::json::parse(std::ifstream(name)));
    } catch (const std::exception& e) {
      // The JSON library's "[json.exception.out_of_range.403] " names its
      // own code, not the problem: keep what follows it.
      std::string why = e.what();
      if (why.rfind("[json.exception.", 0) == 0 &&
          why.find("] ") != std::string::npos)
        why = why.substr(why.find("] ") + 2);
      throw Error(name + ": not a results file: " + why);
    }
    l.label = std::filesystem::path(name).filename().string();
    l.environment = rep.environment;
    l.runs = rep.results;
    l.training = rep.training;
    l.inference = results::inference_runs(rep.other);
    l.price_note = rep.price_note;
    l.derived = results::figures_from_json(rep.derived);
    return l;
  }
  const std::string path = study::Store::path_or_default(db);
  if (!std::filesystem::exists(path))
    throw Error("'" + name +
                "' is neither a results file nor a run id (no results store "
                "at " +
                path + ")");
  study::Store store(path, study::Store::Open::kExisting);
  const auto run = store.run(name);
  if (!run)
    throw Error("'" + name +
                "' is neither a results file nor a run in the results store");
  l.label = "run " + run->id + " (" + run->suite + ")";
  l.environment = run->environment;
  l.derived = store.derived(name);
  l.price_note = study::price_note_of(*run);
  for (const auto& row : store.results(name))
    report::add_record(l, *results::record_from_json(row.record));
  return l;
}

std::string case_key(const results::RunResult& r, bool with_threads) {
  return results::key_of(r).name(with_threads ? results::CaseKey::kNone
                                              : results::CaseKey::kThreads);
}

std::string case_key(const results::TrainRun& r, bool with_threads) {
  return results::key_of(r).name(with_threads ? results::CaseKey::kNone
                                              : results::CaseKey::kThreads);
}

}  // namespace nnbench::cli
