// The report across many machines (report/machines.h): past kGridMachines
// the grid gives way to a ranking that shows the leading machines and
// summarises the rest, and the page details only the leading machines'
// runs. Machine i's step takes (i + 1) ms, so the order and the factors
// over the fastest are known here.
#include <gtest/gtest.h>

#include "report/machines.h"

namespace nnbench::report {
namespace {

Source machine(int i) {
  Source s;
  s.label = "run " + std::to_string(i);
  s.environment = {
      {"host", "sha256:" + std::string(12, 'a') + std::to_string(1000 + i)},
      {"cpu", {{"name", "CPU"}}},
      {"logical_cpus", 2},
      {"instance", {{"name", "m" + std::to_string(i)}, {"usd_per_hour", 1.0}}}};
  results::RunResult r;
  r.model = "m";
  r.backend = "x";
  r.requested.backend = "x";
  r.requested.batch = 10;
  r.effective.threads = 2;
  for (int k = 0; k < 9; ++k) r.samples.push_back((i + 1) * 1e-3);
  s.runs = {r};
  return s;
}

TEST(ReportMachines, ManyMachinesAreRankedWithTheRestSummarised) {
  std::vector<Source> sources;
  // Given slowest first, so the ranking has to reorder them.
  for (int i = 11; i >= 0; --i) sources.push_back(machine(i));
  const compare::MachineAnswer a = machine_answer(sources);
  ASSERT_EQ(a.machines.size(), 12u);
  ASSERT_EQ(a.ranked.size(), 12u);
  EXPECT_EQ(a.machines[a.ranked[0]].label, "m0");
  EXPECT_EQ(a.machines[a.ranked[11]].label, "m11");
  EXPECT_DOUBLE_EQ(*a.behind_fastest[3], 4.0);  // m3: 4 ms over 1 ms
  const std::string html = machines_section(a);
  EXPECT_NE(html.find("Leading machines of 12"), std::string::npos);
  // The headline job's ranking: m9 (10 ms) is the last row shown, at 10x.
  EXPECT_NE(html.find("<td>10</td><td>m9</td><td>10.000 ms</td>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<td>10.00</td>"), std::string::npos);
  // The two others in a line: median of 11 and 12 ms.
  EXPECT_NE(html.find("2 more machines: median 11.500 ms, from 11.000 ms to "
                      "12.000 ms."),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("All 12 machines"), std::string::npos);
  EXPECT_EQ(html.find("Every job on every machine"), std::string::npos);
  const auto shown = shown_sources(sources, a);
  ASSERT_EQ(shown.size(), kGridMachines);
  for (const auto& s : shown)  // runs 0..7, the leading eight
    EXPECT_LT(std::stoi(s.label.substr(4)), 8) << s.label;
}

TEST(ReportMachines, AFewMachinesGetEveryJobSideBySide) {
  const std::vector<Source> sources = {machine(0), machine(1)};
  const compare::MachineAnswer a = machine_answer(sources);
  const std::string html = machines_section(a);
  EXPECT_NE(html.find("Every job on every machine"), std::string::npos);
  EXPECT_EQ(shown_sources(sources, a).size(), 2u);
  EXPECT_EQ(machines_section(machine_answer({machine(0)})), "");
}

}  // namespace
}  // namespace nnbench::report
