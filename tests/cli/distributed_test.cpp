// Data-parallel runs from the command line (docs/distributed.md): ranks
// started by `nnbench run --processes 2` over each engine, a rank killed
// mid-run, ranks started with different settings.
#include <chrono>
#include <nlohmann/json.hpp>

#include "cli_util.h"

namespace {

using namespace nnbench_cli_test;
using nlohmann::json;

std::string fmt_fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// One thread per rank: two ranks fill this 2-CPU machine.
const std::string kBase =
    "run --model mnist-mlp --backend reference --threads 1 --warmup-iters 1 "
    "--warmup-time 0 --min-time 0 --on-contention warn ";
const std::string kRun = kBase + "--min-iters 3 ";

bool engine_built(const std::string& engine) {
  const Outcome o = nnbench(kRun + "--distributed " + engine +
                            " --batch 8 --processes 1 --max-iters 1");
  return o.output.find("is not built") == std::string::npos;
}

json first_result(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in).at("results").at(0);
}

class Distributed : public Cli,
                    public ::testing::WithParamInterface<std::string> {};

TEST_P(Distributed, TwoRanksRecordTheGlobalBatchAndEachRank) {
  const std::string engine = GetParam();
  if (!engine_built(engine)) GTEST_SKIP() << engine << " not built";
  const Outcome o = nnbench(kRun + "--batch 16 --distributed " + engine +
                            " --processes 2 --out " + path("r.json"));
  ASSERT_EQ(o.code, 0) << o.output;
  const json r = first_result(path("r.json"));
  EXPECT_EQ(r.at("state"), "ok");
  const json& d = r.at("distributed");
  EXPECT_EQ(d.at("engine"), engine);
  EXPECT_EQ(d.at("ranks"), 2);
  EXPECT_EQ(d.at("scaling"), "strong");
  EXPECT_EQ(d.at("global_batch"), 16);
  EXPECT_EQ(d.at("batch_per_rank"), 8);
  ASSERT_EQ(d.at("per_rank").size(), 2u);
  for (const auto& k : d.at("per_rank")) {
    EXPECT_GT(k.at("allreduce_seconds").get<double>(), 0);
    EXPECT_LE(k.at("allreduce_seconds").get<double>(),
              k.at("step_seconds").get<double>());
  }
  // mnist-mlp's 669,706 fp32 parameters, all-reduced every step.
  EXPECT_EQ(d.at("gradient_bytes"), 4 * 669706);
  const double median = r.at("stats_seconds").at("median");
  EXPECT_NEAR(r.at("throughput").at("samples_per_second").get<double>(),
              16 / median, 1e-6 * 16 / median);
}

TEST_P(Distributed, KilledRankEndsTheRunAsFailedNamingIt) {
  const std::string engine = GetParam();
  if (!engine_built(engine)) GTEST_SKIP() << engine << " not built";
  const auto t0 = std::chrono::steady_clock::now();
  const Outcome o =
      shell("NNBENCH_FAULT_KILL=1:2 " + std::string(NNBENCH_EXE) + " " + kBase +
            "--batch 16 --min-iters 50 --distributed " + engine +
            " --processes 2 --dist-timeout 20 --out " + path("k.json"));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  EXPECT_EQ(o.code, 1) << o.output;
  EXPECT_LT(seconds, 60) << "the other rank did not end within the timeout";
  const json r = first_result(path("k.json"));
  EXPECT_EQ(r.at("state"), "failed");
  EXPECT_EQ(r.at("distributed").at("failed_rank"), 1);
  EXPECT_NE(r.at("message").get<std::string>().find("rank 1"),
            std::string::npos)
      << r.at("message");
}

INSTANTIATE_TEST_SUITE_P(Engines, Distributed,
                         ::testing::Values("mpi", "gloo"));

TEST_F(Cli, RanksWithDifferentSeedsRefuseToStartNamingTheField) {
  if (!engine_built("mpi")) GTEST_SKIP() << "mpi not built";
  const std::string rank =
      std::string(NNBENCH_EXE) + " " + kRun + "--batch 8 --distributed mpi ";
  const std::string root = ::geteuid() == 0 ? "--allow-run-as-root " : "";
  const Outcome o = shell("mpirun " + root + "--oversubscribe -np 1 " + rank +
                          "--seed 1 --out " + path("m.json") + " : -np 1 " +
                          rank + "--seed 2");
  EXPECT_NE(o.code, 0) << o.output;
  const json r = first_result(path("m.json"));
  EXPECT_EQ(r.at("state"), "invalid_args");
  EXPECT_NE(r.at("message").get<std::string>().find(
                "different configurations: seed (rank 0 has '1'"),
            std::string::npos)
      << r.at("message");
}

TEST_F(Cli, StrongScalingNeedsABatchTheRanksSplitEvenly) {
  if (!engine_built("gloo")) GTEST_SKIP() << "gloo not built";
  // A usage error before any rank starts, nothing written (it used to
  // start the ranks, record invalid_args and exit 1).
  const Outcome o = nnbench(kRun +
                            "--batch 7 --distributed gloo "
                            "--processes 2 --out " +
                            path("s.json"));
  expect_usage_error(o, "--batch 7 does not split over 2 ranks");
  EXPECT_FALSE(fs::exists(path("s.json")));
}

TEST_F(Cli, ProcessesNeedAnEngine) {
  expect_usage_error(nnbench(kRun + "--processes 2"),
                     "--processes needs --distributed");
}

}  // namespace

namespace {

TEST_F(Cli, SuiteWithAProcessesAxisRunsEachCaseOverItsRanks) {
  if (!engine_built("gloo")) GTEST_SKIP() << "gloo not built";
  write("dp.toml", R"(
[grid]
models = ["mnist-mlp"]
backends = ["reference"]
batches = [16]
threads = [1]
processes = [1, 2]
[distributed]
engine = "gloo"
)" + std::string(kFastRules));
  const Outcome o = nnbench("suite " + path("dp.toml") + " --no-store --out " +
                            path("dp.json") + kNoContention);
  ASSERT_EQ(o.code, 0) << o.output;
  std::ifstream in(path("dp.json"));
  const json results = json::parse(in).at("results");
  ASSERT_EQ(results.size(), 2u);
  int distributed = 0;
  for (const auto& r : results) {
    EXPECT_EQ(r.at("state"), "ok") << r.dump();
    if (!r.contains("distributed")) continue;
    ++distributed;
    EXPECT_EQ(r.at("distributed").at("ranks"), 2);
    EXPECT_EQ(r.at("distributed").at("batch_per_rank"), 8);
  }
  EXPECT_EQ(distributed, 1);

  // The report draws speed-up against processes: 2 ranks' samples/s over
  // the one process's, each read back from the results file.
  double one = 0, two = 0;
  for (const auto& r : results)
    (r.contains("distributed") ? two : one) =
        r.at("throughput").at("samples_per_second").get<double>();
  const Outcome rep =
      nnbench("report " + path("dp.json") + " -o " + path("dp.html"));
  ASSERT_EQ(rep.code, 0) << rep.output;
  std::ifstream html_in(path("dp.html"));
  const std::string html((std::istreambuf_iterator<char>(html_in)),
                         std::istreambuf_iterator<char>());
  EXPECT_NE(html.find("Speed-up against processes"), std::string::npos);
  const std::string row =
      "<tr><td>mnist-mlp reference fp32 train b16 t1 gloo</td><td "
      "class=\"n\">2</td><td class=\"n\">" +
      fmt_fixed(two, 1) + "</td><td class=\"n\">" + fmt_fixed(two / one, 2) +
      "</td>";
  EXPECT_NE(html.find(row), std::string::npos) << row;
}

}  // namespace
