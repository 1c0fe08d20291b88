// A scenario owns its kind: no code outside src/scenarios/ compares a
// scenario or record-kind name; it asks the kind's traits
// (results/kinds.h) or the scenario (scenarios/scenario.h) instead. Read
// from the sources, with the names from the registries themselves, so a
// new scenario is covered the day it is registered.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "results/kinds.h"
#include "scenarios/scenario.h"

namespace nnbench {
namespace {

namespace fs = std::filesystem;

std::set<std::string> kind_names() {
  std::set<std::string> out;
  for (const auto& n : scenarios::scenario_names()) out.insert(n);
  return out;
}

// "line: text" of each comparison (== or !=) with a string literal that
// is one of `names`, in either order.
std::vector<std::string> comparisons(const std::string& text,
                                     const std::set<std::string>& names) {
  static const std::regex after(R"re((==|!=)\s*"([^"\\]*)")re");
  static const std::regex before(R"re("([^"\\]*)"\s*(==|!=))re");
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    bool hit = false;
    for (auto it = std::sregex_iterator(line.begin(), line.end(), after);
         it != std::sregex_iterator(); ++it)
      hit = hit || names.count((*it)[2]);
    for (auto it = std::sregex_iterator(line.begin(), line.end(), before);
         it != std::sregex_iterator(); ++it)
      hit = hit || names.count((*it)[1]);
    if (hit) out.push_back(std::to_string(n) + ": " + line);
  }
  return out;
}

TEST(KindNames, TheRegistriesNameEveryBuiltInKind) {
  const auto names = kind_names();
  // The seven built-ins, each with a record kind of its own.
  for (const char* n : {"throughput", "latency", "training", "single-stream",
                        "multi-stream", "server", "offline"}) {
    EXPECT_TRUE(names.count(n)) << n;
    EXPECT_TRUE(results::known_kind(n)) << n;
  }
}

TEST(KindNames, TheScanFindsAComparisonEitherWayRound) {
  const std::set<std::string> names = {"server", "training"};
  const auto found = comparisons(
      "int a;\n"
      "if (r.kind == \"server\") x();\n"
      "if (\"training\" != s.scenario) y();\n"
      "if (mode == \"train\") z();\n"
      "k = \"server\";\n",
      names);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].substr(0, 2), "2:");
  EXPECT_EQ(found[1].substr(0, 2), "3:");
}

TEST(KindNames, NoKindNameIsComparedOutsideSrcScenarios) {
  const fs::path src = fs::path(NNBENCH_SOURCE_DIR) / "src";
  const auto names = kind_names();
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(src)) {
    if (!e.is_regular_file()) continue;
    const auto ext = e.path().extension();
    if (ext != ".cpp" && ext != ".h") continue;
    const auto rel = fs::relative(e.path(), src);
    if (rel.begin()->string() == "scenarios") continue;
    ++files;
    std::ifstream in(e.path());
    std::stringstream text;
    text << in.rdbuf();
    for (const auto& hit : comparisons(text.str(), names))
      ADD_FAILURE() << "src/" << rel.string() << ":" << hit
                    << "\n  ask the kind's traits (results::traits_of) or "
                       "the scenario instead of comparing its name";
  }
  EXPECT_GT(files, 100);  // the walk found the sources
}

}  // namespace
}  // namespace nnbench
