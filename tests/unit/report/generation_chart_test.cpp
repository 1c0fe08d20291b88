#include <gtest/gtest.h>

#include <map>

#include "report/charts.h"
#include "report/source.h"

namespace nnbench::report {
namespace {

results::GenerationRun measured(const std::string& backend, double tpot) {
  results::GenerationRun r;
  r.model = "gpt2-tiny";
  r.backend = backend;
  r.state = results::State::kOk;
  r.asked = {.batch = 1, .prompt = 32, .new_tokens = 16};
  r.effective.threads = 2;
  r.ttft_seconds = {0.004};
  r.ttft.median = 0.004;
  r.tpot.median = tpot;
  r.tpot.median_ci = {tpot * 0.9, tpot * 1.1, 0.95};
  r.itl_p90.value = tpot * 1.2;
  r.prefill_tokens_per_second = 8000;
  r.generation_tokens_per_second = 1 / tpot;
  return r;
}

TEST(GenerationChart, OneBarPerMeasuredCaseAndAFailedOneLeftOut) {
  Source s;
  s.label = "run";
  s.generation.push_back(measured("torch", 0.002));
  auto slow = measured("reference", 0.010);
  slow.ceiling.emplace();
  slow.ceiling->bandwidth_gbs = 30;
  slow.ceiling->measured_gbs = {30};
  slow.ceiling->threads = 2;
  slow.ceiling->steps_per_second = 60;
  slow.ceiling->fraction = 0.25;
  s.generation.push_back(slow);
  results::GenerationRun failed;
  failed.model = "gpt2-tiny";
  failed.backend = "onednn";
  failed.state = results::State::kUnimplemented;
  s.generation.push_back(failed);
  std::map<std::string, Chart> by;
  for (auto& c : charts({s})) by[c.id] = c;
  ASSERT_TRUE(by.count("generation"));
  const Chart& c = by["generation"];
  ASSERT_EQ(c.rows.size(), 2u);
  EXPECT_EQ(c.rows[0][0], "gpt2-tiny torch b1 p32 n16 t2");
  EXPECT_EQ(c.rows[0][2], "2.000");  // TPOT, ms
  EXPECT_EQ(c.rows[0][7], "-");      // no ceiling measured: no share
  EXPECT_EQ(c.rows[1][7], "25 %");
  const auto& bars = c.config["data"]["datasets"][0]["data"];
  ASSERT_EQ(bars.size(), 2u);
  EXPECT_DOUBLE_EQ(bars[1].get<double>(), 10.0);
  const auto& band = c.config["data"]["datasets"][1]["data"][1];
  EXPECT_DOUBLE_EQ(band[0].get<double>(), 9.0);
  EXPECT_DOUBLE_EQ(band[1].get<double>(), 11.0);
}

}  // namespace
}  // namespace nnbench::report
