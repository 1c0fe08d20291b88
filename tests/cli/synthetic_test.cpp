// `nnbench train --data synthetic`: a fixed-epoch task times as with real
// data, its record says the data were synthetic and holds no accuracy;
// a task with an accuracy target is refused before anything is loaded.
#include <nlohmann/json.hpp>

#include "cli_util.h"

namespace nnbench_cli_test {
namespace {

using nlohmann::json;

TEST_F(Cli, SyntheticDataTimeAFixedEpochTaskWithNoAccuracy) {
  const Outcome o = nnbench(
      "train --task keras-mnist-mlp --data synthetic --epochs 1 --backend "
      "reference --threads 2 --out " +
      path("t.json") + kNoContention);
  ASSERT_EQ(o.code, 0) << o.output;
  const json j = json::parse(slurp(path("t.json")));
  EXPECT_EQ(j["dataset"]["synthetic"], true);
  EXPECT_EQ(j["dataset"]["train_size"], 60000);
  const json& r = j["runs"][0];
  EXPECT_EQ(r["state"], "completed");
  EXPECT_EQ(r["data"], "synthetic");
  EXPECT_TRUE(r["final_val_accuracy"].is_null());
  EXPECT_TRUE(r["epochs"][0]["val_accuracy"].is_null());
  EXPECT_GT(r["total_train_seconds"].get<double>(), 0);
  // 60,000 samples at batch 128: 469 steps, as with the real set.
  EXPECT_NE(o.output.find("(60000 train, 10000 test)"), std::string::npos)
      << o.output;
}

TEST_F(Cli, SyntheticDataCannotTimeAnAccuracyTarget) {
  expect_usage_error(
      nnbench("train --task fashion-mnist-92 --data synthetic --backend "
              "reference"),
      "fashion-mnist-92 trains to an accuracy target");
  write("s.toml",
        "scenario = \"training\"\n[grid]\ntasks = [\"fashion-mnist-92\"]\n"
        "backends = [\"reference\"]\n[settings]\ndata = \"synthetic\"\n");
  expect_usage_error(nnbench("suite " + path("s.toml") + " --check"),
                     "trains to an accuracy target");
  write("k.toml",
        "scenario = \"training\"\n[grid]\ntasks = [\"keras-cifar10-cnn\", "
        "\"keras-imdb-bilstm\"]\nbackends = [\"reference\"]\n[settings]\n"
        "data = \"synthetic\"\n");
  const Outcome k = nnbench("suite " + path("k.toml") + " --check");
  EXPECT_EQ(k.code, 0) << k.output;
}

// The shipped CPU-vs-GPU suite runs without its data sets: --set over
// the suite's settings, each checked as the file's are.
TEST_F(Cli, SetReplacesASuitesSettingsAndNamesABadOne) {
  const Outcome none = nnbench("suite cpu-vs-gpu --check");
  expect_usage_error(none, "dataset 'mnist' needs a path");
  EXPECT_NE(none.output.find("--set data=PATH"), std::string::npos);
  const Outcome ok =
      nnbench("suite cpu-vs-gpu --check --set data=synthetic --set epochs=1");
  EXPECT_EQ(ok.code, 0) << ok.output;
  expect_usage_error(
      nnbench("suite cpu-vs-gpu --check --set data=synthetic --set epoch=1"),
      "--set epoch: setting 'epoch' is not one the training scenario takes");
  expect_usage_error(
      nnbench("suite cpu-vs-gpu --check --set data=synthetic --set epochs=0"),
      "--set epochs: setting 'epochs': 0 is not between 1 and 100000");
  expect_usage_error(nnbench("suite cpu-vs-gpu --check --set data"),
                     "--set data: not KEY=VALUE");
}

}  // namespace
}  // namespace nnbench_cli_test
