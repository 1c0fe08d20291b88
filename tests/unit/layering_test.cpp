// The folders of src/ form layers whose includes only point down
// (docs/design.md, "Layers of the code"). Read from the sources themselves,
// so that a new include across the layering fails here, not in review.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <string>

namespace nnbench {
namespace {

namespace fs = std::filesystem;

// What each folder may include besides itself. Siblings stay apart: data/
// and backend/ share only tensor/, results/ knows nothing of bench/.
const std::map<std::string, std::set<std::string>>& allowed() {
  static const std::map<std::string, std::set<std::string>> table = {
      {"util", {}},
      {"model", {"util"}},
      {"host", {"model", "util"}},
      {"backend", {"host", "model", "util"}},
      {"engines", {"backend", "host", "model", "util"}},
      {"results", {"backend", "host", "model", "util"}},
      {"data", {"host", "model", "util"}},
      {"cost", {"util"}},
      {"scaling", {"util"}},
      {"distributed", {"backend", "host", "model", "util"}},
      // machine: the instance it is, priced from the catalog (cost).
      {"machine", {"backend", "cost", "host", "model", "util"}},
      {"verify",
       {"machine", "results", "backend", "data", "cost", "host", "model",
        "util"}},
      {"bench",
       {"distributed", "machine", "results", "backend", "data", "cost", "host",
        "model", "util"}},
      {"train",
       {"distributed", "bench", "machine", "results", "backend", "data", "cost",
        "host", "model", "util"}},
      {"inference",
       {"bench", "machine", "results", "backend", "data", "cost", "host",
        "model", "util"}},
      {"scenarios",
       {"inference", "distributed", "train", "bench", "verify", "machine",
        "results", "backend", "data", "cost", "host", "model", "util"}},
      {"compare",
       {"distributed", "bench", "machine", "results", "backend", "data", "cost",
        "host", "model", "util"}},
      {"study",
       {"inference", "distributed", "scenarios", "train", "bench", "verify",
        "machine", "results", "backend", "data", "cost", "host", "model",
        "util"}},
      {"report",
       {"inference", "compare", "distributed", "study", "scenarios", "train",
        "bench", "verify", "machine", "results", "backend", "data", "cost",
        "host", "model", "util"}},
      // reporters: results/reporter.h's implementations, over the store
      // (study) and the HTML page (report).
      {"reporters",
       {"report", "inference", "compare", "distributed", "study", "scenarios",
        "train", "bench", "verify", "machine", "results", "backend", "data",
        "cost", "host", "model", "util"}},
      {"cli", {"reporters", "inference", "distributed", "engines",   "report",
               "compare",   "scaling",   "study",       "scenarios", "train",
               "bench",     "verify",    "machine",     "results",   "backend",
               "data",      "cost",      "host",        "model",     "util"}},
  };
  return table;
}

struct Include {
  std::string file, target;
  int line;
};

// Project includes ("folder/...") of every source under src/<folder>/.
std::map<std::string, std::vector<Include>> includes_by_folder() {
  const fs::path src = fs::path(NNBENCH_SOURCE_DIR) / "src";
  const std::regex include(R"re(^\s*#\s*include\s+"([a-z_]+)/)re");
  std::map<std::string, std::vector<Include>> out;
  for (const auto& e : fs::recursive_directory_iterator(src)) {
    const auto rel = fs::relative(e.path(), src);
    if (!e.is_regular_file() || rel.begin() == std::prev(rel.end())) continue;
    const std::string folder = rel.begin()->string();
    std::ifstream in(e.path());
    std::string text;
    std::smatch m;
    for (int n = 1; std::getline(in, text); ++n)
      if (std::regex_search(text, m, include))
        out[folder].push_back({rel.string(), m[1], n});
  }
  return out;
}

TEST(Layering, EveryFolderOfSrcHasALayer) {
  const auto found = includes_by_folder();
  ASSERT_GE(found.size(), 8u);  // the walk found the sources
  for (const auto& [folder, incs] : found)
    EXPECT_TRUE(allowed().count(folder))
        << "src/" << folder << "/ is not in the layering table";
}

TEST(Layering, IncludesOnlyPointDown) {
  for (const auto& [folder, incs] : includes_by_folder()) {
    auto it = allowed().find(folder);
    if (it == allowed().end()) continue;
    for (const auto& i : incs)
      EXPECT_TRUE(i.target == folder || it->second.count(i.target))
          << "src/" << i.file << ":" << i.line << " includes " << i.target
          << "/, above or beside " << folder << "/";
  }
}

// The table itself has no loop: following "may include" never returns to
// where it started.
TEST(Layering, TheTableHasNoCycle) {
  std::map<std::string, int> state;  // 1 visiting, 2 done
  std::function<bool(const std::string&)> acyclic = [&](const std::string& f) {
    if (state[f] == 1) return false;
    if (state[f] == 2) return true;
    state[f] = 1;
    for (const auto& d : allowed().at(f))
      if (!acyclic(d)) return false;
    state[f] = 2;
    return true;
  };
  for (const auto& [folder, deps] : allowed())
    EXPECT_TRUE(acyclic(folder)) << "cycle through " << folder;
}

}  // namespace
}  // namespace nnbench
