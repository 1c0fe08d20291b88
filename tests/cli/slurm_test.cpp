// `nnbench slurm submit/collect` against a real Slurm: tests/slurm/
// cluster.sh starts munged, slurmctld and slurmd (one node, this machine's
// CPUs) in a temporary folder; a 3-case suite runs as a 3-task job array
// and is gathered back as one complete study. Without root or the Slurm
// packages (scripts/setup test installs them) the test is skipped, saying
// why.
#include <stdlib.h>

#include <nlohmann/json.hpp>

#include "cli_util.h"

namespace nnbench_cli_test {
namespace {

using nlohmann::json;

class Slurm : public Cli {
 protected:
  void SetUp() override {
    Cli::SetUp();
    // slurm.conf paths must stay short (the script refuses over 60
    // characters): a folder of its own under /tmp.
    char tmpl[] = "/tmp/nnbench-slurm-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    cluster_ = tmpl;
    const Outcome o = shell(script() + " start " + cluster_);
    if (o.code == 77) {
      skip_ = o.output;
      return;
    }
    ASSERT_EQ(o.code, 0) << o.output;
    const std::string key = "export SLURM_CONF=";
    const size_t at = o.output.find(key);
    ASSERT_NE(at, std::string::npos) << o.output;
    const size_t end = o.output.find('\n', at);
    const std::string conf = o.output.substr(
        at + key.size(),
        end == std::string::npos ? std::string::npos : end - at - key.size());
    setenv("SLURM_CONF", conf.c_str(), 1);
    started_ = true;
  }
  void TearDown() override {
    if (started_) {
      const Outcome o = shell(script() + " stop " + cluster_);
      EXPECT_EQ(o.code, 0) << o.output;
      unsetenv("SLURM_CONF");
    }
    std::error_code ec;
    fs::remove_all(cluster_, ec);
    Cli::TearDown();
  }
  static std::string script() {
    return std::string(NNBENCH_SOURCE_DIR) + "/tests/slurm/cluster.sh";
  }
  std::string cluster_, skip_;
  bool started_ = false;
};

TEST_F(Slurm, AStudyRunsAsAJobArrayAndIsGatheredWhole) {
  if (!skip_.empty()) GTEST_SKIP() << skip_;
  write("s.toml", std::string(R"([grid]
models = ["mnist-mlp"]
backends = ["reference"]
batches = [8, 16, 32]
threads = [1]
)") + kFastRules);
  const std::string job = path("job");
  const Outcome o =
      nnbench("slurm submit " + path("s.toml") + " --tasks 3 --dir " + job +
              " --db " + path("all.db") +
              " --wait --timeout 300 --poll 1 -- --on-contention warn");
  ASSERT_EQ(o.code, 0) << o.output;
  const json j = json::parse(slurp(job + "/job.json"));
  const std::string study = j["study"];
  EXPECT_EQ(study, "slurm-" + j["job_id"].get<std::string>());
  EXPECT_NE(o.output.find("study " + study +
                          ": complete, 3 shards, 3 of 3 "
                          "cases stored"),
            std::string::npos)
      << o.output;
  // Each task ran with the whole node (--exclusive) and its own share.
  const std::string script = slurp(job + "/job.sh");
  EXPECT_NE(script.find("#SBATCH --exclusive"), std::string::npos);
  EXPECT_NE(script.find("#SBATCH --array=0-2"), std::string::npos);
  const Outcome listed =
      nnbench("results study " + study + " --db " + path("all.db"));
  EXPECT_EQ(listed.code, 0) << listed.output;

  // A shard whose store is gone: named, with its log, and the study is
  // incomplete (exit 1).
  fs::remove(job + "/shard-1.db");
  const Outcome c =
      nnbench("slurm collect " + job + " --db " + path("part.db"));
  EXPECT_EQ(c.code, 1) << c.output;
  EXPECT_NE(c.output.find("shard 1 left no store"), std::string::npos)
      << c.output;
  EXPECT_NE(c.output.find("shard 1 of 3 is missing"), std::string::npos)
      << c.output;
}

TEST_F(Slurm, ABadSuiteIsRefusedBeforeAnythingIsSubmitted) {
  if (!skip_.empty()) GTEST_SKIP() << skip_;
  const Outcome o =
      nnbench("slurm submit no-such-suite --tasks 2 --dir " + path("job"));
  EXPECT_EQ(o.code, 2) << o.output;
  EXPECT_NE(o.output.find("no-such-suite"), std::string::npos) << o.output;
  EXPECT_FALSE(fs::exists(path("job")));
  const Outcome q = shell("squeue --noheader --states all");
  EXPECT_EQ(q.code, 0) << q.output;
  EXPECT_EQ(q.output.find_first_not_of(" \n"), std::string::npos)
      << "a job was submitted: " << q.output;
}

}  // namespace
}  // namespace nnbench_cli_test
