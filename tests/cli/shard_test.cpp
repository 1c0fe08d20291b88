// A study split over machines, as its users run it: each shard in its own
// store (a machine of its own), gathered with `results import`, checked
// with `results study`; the shard read from a Slurm job array's variables.
#include "cli_util.h"

namespace nnbench_cli_test {
namespace {

class Shards : public Cli {
 protected:
  void SetUp() override {
    Cli::SetUp();
    write("s.toml",
          std::string("[grid]\nmodels = [\"mnist-mlp\"]\nbackends = "
                      "[\"reference\"]\nbatches = [2, 4, 8]\nthreads = [1]\n"
                      "modes = [\"train\", \"infer\"]\n") +
              kFastRules);
  }
  Outcome shard(const std::string& db, const std::string& how) {
    return nnbench("suite " + path("s.toml") + " --db " + path(db) + " " + how +
                   kNoContention);
  }
};

TEST_F(Shards, ThreeMachinesGatheredGiveThePlanExactlyOnce) {
  for (int i = 0; i < 3; ++i) {
    const auto o = shard("m" + std::to_string(i) + ".db",
                         "--shard " + std::to_string(i) + "/3 --study demo");
    ASSERT_EQ(o.code, 0) << o.output;
    EXPECT_NE(o.output.find("2 of 6 cases"), std::string::npos) << o.output;
  }
  // Two machines gathered: the third shard is named as missing.
  ASSERT_EQ(nnbench("results --db " + path("all.db") + " import " +
                    path("m0.db") + " " + path("m1.db"))
                .code,
            0);
  const auto part = nnbench("results --db " + path("all.db") + " study demo");
  EXPECT_EQ(part.code, 1) << part.output;
  EXPECT_NE(part.output.find("shard 2 of 3 is missing"), std::string::npos)
      << part.output;
  ASSERT_EQ(
      nnbench("results --db " + path("all.db") + " import " + path("m2.db"))
          .code,
      0);
  const auto whole = nnbench("results --db " + path("all.db") + " study demo");
  EXPECT_EQ(whole.code, 0) << whole.output;
  EXPECT_NE(whole.output.find("complete, 3 shards, 6 of 6 cases stored"),
            std::string::npos)
      << whole.output;
}

TEST_F(Shards, ASlurmArrayTaskRunsItsShareAndNamesTheStudy) {
  const auto o = shell(
      "env SLURM_ARRAY_JOB_ID=4242 SLURM_ARRAY_TASK_ID=1 "
      "SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_COUNT=2 " +
      std::string(NNBENCH_EXE) + " suite " + path("s.toml") + " --db " +
      path("s.db") + " --shard auto" + kNoContention);
  ASSERT_EQ(o.code, 0) << o.output;
  EXPECT_NE(o.output.find("study slurm-4242, shard 1 of 2"), std::string::npos)
      << o.output;
  EXPECT_NE(o.output.find("3 of 6 cases"), std::string::npos) << o.output;
  const auto st = nnbench("results --db " + path("s.db") + " study slurm-4242");
  EXPECT_EQ(st.code, 1) << st.output;
  EXPECT_NE(st.output.find("shard 0 of 2 is missing"), std::string::npos)
      << st.output;
  expect_usage_error(shard("x.db", "--shard 2/2 --study demo"),
                     "the index must be from 0 to 1");
}

}  // namespace
}  // namespace nnbench_cli_test
