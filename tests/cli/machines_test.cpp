// Runs from two machines answer "which machine is fastest and cheapest for
// this job?" in `nnbench report` and `nnbench compare`; each run records
// the instance it was told (--instance) with its catalog price.
#include <nlohmann/json.hpp>

#include "cli_util.h"

namespace nnbench_cli_test {
namespace {

using nlohmann::json;

TEST_F(Cli, AnInstanceIsRecordedWithItsPriceAndAnUnknownOneRefused) {
  expect_usage_error(
      nnbench("run --model mnist-mlp --backend reference --instance aws-x9"
              " --out " +
              path("no.json") + kFast),
      "unknown instance 'aws-x9'; in the catalog:");
  EXPECT_FALSE(fs::exists(path("no.json")));
  const Outcome o =
      shell("NNBENCH_METADATA=none " + std::string(NNBENCH_EXE) +
            " run --model mnist-mlp --backend reference --batch 8 --instance "
            "aws-p3.2xlarge --out " +
            path("a.json") + kFast + kNoContention);
  ASSERT_EQ(o.code, 0) << o.output;
  const json e = json::parse(slurp(path("a.json")))["environment"];
  EXPECT_EQ(e["instance"]["name"], "aws-p3.2xlarge");
  EXPECT_EQ(e["instance"]["source"], "--instance");
  EXPECT_EQ(e["instance"]["usd_per_hour"], 3.06);  // data/prices.json
  EXPECT_TRUE(e["gpus"].is_array());
}

// B is A's file as if from another machine: another host, instance and
// price, every sample half A's.
TEST_F(Cli, ReportAndCompareAnswerWhichMachineIsFastestAndCheapest) {
  const Outcome o =
      shell("NNBENCH_METADATA=none " + std::string(NNBENCH_EXE) +
            " run --model mnist-mlp --backend reference --batch 8 --threads 2"
            " --warmup-iters 1 --warmup-time 0 --min-iters 12 --min-time 0"
            " --instance aws-p3.2xlarge --out " +
            path("a.json") + kNoContention);
  ASSERT_EQ(o.code, 0) << o.output;
  // Steps of a known spread, so that the verdict does not depend on how
  // busy the machine was: 12 samples from 1.000 to 1.011 ms.
  json a = json::parse(slurp(path("a.json")));
  a["results"][0]["samples_seconds"] = json::array();
  for (int i = 0; i < 12; ++i)
    a["results"][0]["samples_seconds"].push_back(1e-3 + i * 1e-6);
  write("a.json", a.dump());
  json b = a;
  b["environment"]["host"] = "sha256:0123456789abcdef";
  b["environment"]["instance"] = {{"name", "slice"},
                                  {"source", "--instance"},
                                  {"usd_per_hour", 0.64},
                                  {"vcpus", 64},
                                  {"pro_rata_vcpus", true}};
  for (auto& r : b["results"])
    for (auto& s : r["samples_seconds"]) s = s.get<double>() / 2;
  write("b.json", b.dump());
  const int threads = b["results"][0]["effective"]["threads"];

  const Outcome c = nnbench("compare " + path("a.json") + " " + path("b.json") +
                            " --format json");
  ASSERT_EQ(c.code, 0) << c.output;
  const json m = json::parse(c.output.substr(c.output.find('{')))["machines"];
  ASSERT_EQ(m["machines"].size(), 2u) << m.dump(1);
  EXPECT_EQ(m["machines"][0]["label"], "aws-p3.2xlarge");
  const json& job = m["jobs"][0];
  EXPECT_EQ(job["fastest"]["first"], "slice");
  EXPECT_NEAR(job["fastest"]["factor"].get<double>(), 2.0, 1e-9);
  // Cost ratio: half the time at 0.64 x threads/64 an hour, against $3.06.
  const double slice = 0.64 * threads / 64;
  EXPECT_EQ(job["cheapest"]["first"], "slice");
  EXPECT_NEAR(job["cheapest"]["factor"].get<double>(), 2 * 3.06 / slice, 1e-6);
  const double a_seconds = job["on"][0]["seconds"];
  EXPECT_NEAR(job["on"][0]["usd"].get<double>(),
              a_seconds * 1e4 / 8 * 3.06 / 3600, 1e-12);
  EXPECT_NEAR(job["on"][1]["time_vs_baseline"].get<double>(), 0.5, 1e-12);

  const Outcome md =
      nnbench("compare " + path("a.json") + " " + path("b.json"));
  EXPECT_NE(md.output.find("## Which machine is fastest and cheapest"),
            std::string::npos)
      << md.output;
  EXPECT_NE(md.output.find("slice is 2.00x faster than aws-p3.2xlarge"),
            std::string::npos)
      << md.output;

  ASSERT_EQ(nnbench("report " + path("a.json") + " " + path("b.json") + " -o " +
                    path("r.html"))
                .code,
            0);
  const std::string html = slurp(path("r.html"));
  const size_t at = html.find("Which machine is fastest and cheapest");
  ASSERT_NE(at, std::string::npos);
  // It opens the page: before the engines' question.
  EXPECT_LT(at, html.find("<h2>Environment"));
  // One machine: no such section.
  ASSERT_EQ(
      nnbench("report " + path("a.json") + " -o " + path("one.html")).code, 0);
  EXPECT_EQ(slurp(path("one.html")).find("Which machine is fastest"),
            std::string::npos);
}

}  // namespace
}  // namespace nnbench_cli_test
