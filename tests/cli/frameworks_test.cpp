// The framework engines as a user meets them: run through their own front
// ends with short rules, listed by `nnbench env`, and a clear usage error
// where an environment is missing.
#include <cmath>
#include <nlohmann/json.hpp>

#include "cli_util.h"

namespace nnbench_cli_test {
namespace {

using nlohmann::json;

class Frameworks : public Cli,
                   public ::testing::WithParamInterface<const char*> {};

TEST_P(Frameworks, RunThroughTheirWorkerAndRecordWhatRan) {
  const std::string engine = GetParam();
  const auto o = nnbench("run --model mnist-cnn --batch 8 --backend " + engine +
                         kFast + kNoContention + " --out " + path("r.json"));
  ASSERT_EQ(o.code, 0) << o.output;
  const json r = json::parse(slurp(path("r.json")))["results"][0];
  EXPECT_EQ(r["state"], "ok");
  EXPECT_EQ(r["backend"]["name"], engine);
  EXPECT_EQ(r["effective"]["threads"], 2);  // as the framework reports it
  EXPECT_EQ(r["effective"]["worker"], engine + "/engine.py");
  EXPECT_GE(r["samples_seconds"].size(), 3u);
  // The worker's step times fit in the time nnbench measured around them.
  EXPECT_LE(r["worker_clock"]["step_seconds"].get<double>(),
            r["worker_clock"]["wall_seconds"].get<double>());
  // Its CPU time is the run's own: two busy threads, not "other load".
  EXPECT_GT(r["cpu_usage"]["process_cpu_seconds"].get<double>(), 0.0);
}

// --threads reaches each framework's own setting (intra-op pools, OpenMP,
// the CPUs XLA may use), and the record says what the framework reports.
TEST_P(Frameworks, OneThreadAskedIsOneThreadReported) {
  const std::string engine = GetParam();
  const auto o = nnbench(
      "run --model mnist-mlp --batch 8 --mode infer --backend " + engine +
      " --threads 1 --warmup-iters 1 --warmup-time 0 --min-iters 3"
      " --min-time 0" +
      kNoContention + " --out " + path("r.json"));
  ASSERT_EQ(o.code, 0) << o.output;
  const json r = json::parse(slurp(path("r.json")))["results"][0];
  EXPECT_EQ(r["state"], "ok");
  EXPECT_EQ(r["effective"]["threads"], 1);
}

// Training through a worker (nnbench train: a rate schedule, batches
// handed over step by step): the worker's CPU is the run's own in the
// contention judgement, as in timed runs. Before, the trainer counted only
// nnbench's process, and a framework's 2-thread run read as "other
// processes kept 1.96 CPUs busy": invalid.
TEST_F(Cli, TrainingThroughAWorkerCountsItsCpuAsTheRuns) {
  const auto o = nnbench(
      "train --task fashion-mnist-mlp --backend pytorch --epochs 1"
      " --threads 2" +
      std::string(kNoContention) + " --out " + path("t.json"));
  ASSERT_EQ(o.code, 0) << o.output;
  const json r = json::parse(slurp(path("t.json")))["runs"][0];
  EXPECT_EQ(r["state"], "completed");
  const json& u = r["cpu_usage"];
  // nnbench itself mostly waits for the worker: without the worker's
  // time this would be a small fraction of the wall time.
  EXPECT_GT(u["process_cpu_seconds"].get<double>(),
            0.7 * u["wall_seconds"].get<double>());
}

// --loop framework: one epoch of Fashion-MNIST through the framework's own
// idiom. The model learns (the harness scores validation itself, as for
// every run), the framework's own training accuracy is recorded, and the
// record names the idiom.
TEST_P(Frameworks, TrainThroughTheFrameworksOwnLoop) {
  const std::string engine = GetParam();
  const auto o = nnbench(
      "train --task fashion-mnist-mlp --epochs 1"
      " --threads 2 --loop framework --backend " +
      engine + kNoContention + " --out " + path("t.json"));
  ASSERT_EQ(o.code, 0) << o.output;
  const json r = json::parse(slurp(path("t.json")))["runs"][0];
  EXPECT_EQ(r["state"], "completed");
  EXPECT_EQ(r["loop"], "framework");
  const std::string idiom = engine == "pytorch" ? "plain PyTorch loop"
                            : engine == "mxnet" ? "Gluon loop"
                                                : "Keras Model.fit";
  EXPECT_NE(r["effective"]["training_loop"].get<std::string>().find(idiom),
            std::string::npos)
      << r["effective"];
  const json& e = r["epochs"][0];
  // Ten classes: chance is 0.1; one epoch of SGD reaches about 0.8.
  EXPECT_GT(e["accuracy"].get<double>(), 0.5) << e;
  EXPECT_LE(e["accuracy"].get<double>(), 1.0) << e;
  EXPECT_GT(e["val_accuracy"].get<double>(), 0.7) << e;
  EXPECT_GT(e["epoch_seconds"].get<double>(), 0.0);
  if (engine != "pytorch") return;
  // The same task through the harness's steps is another case: compare
  // pairs the two ways only when asked.
  ASSERT_EQ(nnbench("train --task fashion-mnist-mlp --epochs 1 --threads 2"
                    " --backend pytorch" +
                    std::string(kNoContention) + " --out " + path("s.json"))
                .code,
            0);
  const std::string both = path("s.json") + " " + path("t.json");
  expect_usage_error(nnbench("compare " + both), "--ignore-loop matches");
  const auto c = nnbench("compare " + both + " --ignore-loop");
  EXPECT_EQ(c.code, 0) << c.output;
  EXPECT_NE(c.output.find("| fashion-mnist-mlp pytorch fp32 training t2 |"),
            std::string::npos)
      << c.output;
}

INSTANTIATE_TEST_SUITE_P(Engines, Frameworks,
                         ::testing::Values("pytorch", "tensorflow", "jax",
                                           "mxnet"));

TEST_F(Cli, AMissingFrameworkEnvironmentIsAUsageErrorSayingHowToSetItUp) {
  const std::string env = "NNBENCH_VENVS=" + path("none") +
                          " XDG_CACHE_HOME=" + path("cache") + " ";
  const auto o = shell(env + NNBENCH_EXE +
                       " run --model mnist-mlp --batch 8"
                       " --backend tensorflow" +
                       kFast);
  EXPECT_EQ(o.code, 2) << o.output;
  EXPECT_NE(o.output.find("no Python environment for tensorflow: run "
                          "scripts/setup tensorflow"),
            std::string::npos)
      << o.output;
  const auto e = shell(env + NNBENCH_EXE + " env --json --no-peak");
  ASSERT_EQ(e.code, 0) << e.output;
  const auto j = json::parse(e.output.substr(e.output.find('{')));
  EXPECT_NE(j["environment"]["backends"]["tensorflow"]["unavailable"]
                .get<std::string>()
                .find("scripts/setup tensorflow"),
            std::string::npos);
}

// The studies' frameworks that cannot be installed here are listed with
// the reason, left out of "all", and a usage error when named.
TEST_F(Cli, CaffeAndCntkAreListedAsUnavailableWithTheReason) {
  const auto e = nnbench("env --json --no-peak");
  ASSERT_EQ(e.code, 0) << e.output;
  const auto j = json::parse(e.output.substr(e.output.find('{')));
  for (const char* name : {"caffe", "cntk"})
    EXPECT_EQ(j["environment"]["backends"][name]["unavailable"]
                  .get<std::string>()
                  .rfind("cannot be installed here: ", 0),
              0u)
        << name;
  expect_usage_error(nnbench("run --model mnist-mlp --backend cntk"),
                     "Python 3.6 and older");
  write("all.toml", "[grid]\nmodels = [\"mnist-mlp\"]\nbackends = [\"all\"]\n");
  const auto list = nnbench("suite " + path("all.toml") + " --check");
  ASSERT_EQ(list.code, 0) << list.output;
  EXPECT_EQ(list.output.find("caffe"), std::string::npos) << list.output;
}

// A framework is its folder: the toy engine (tests/worker/toy: a manifest
// and a numpy engine.py) copied beside frameworks/common is listed by
// `nnbench env`, runs and verifies against the oracle, with no C++ built
// for it; a broken manifest leaves it listed as unavailable, naming the
// file, the line and the field.
class ToyFramework : public Cli {
 protected:
  void SetUp() override {
    Cli::SetUp();
    fs::create_directories(path("frameworks/toy"));
    fs::create_symlink(NNBENCH_SOURCE_DIR "/frameworks/common",
                       path("frameworks/common"));
    for (const char* f : {"engine.py", "framework.toml"})
      fs::copy_file(NNBENCH_SOURCE_DIR "/tests/worker/toy/" + std::string(f),
                    path("frameworks/toy/") + f);
  }
  Outcome toy(const std::string& args) {
    return nnbench_env("NNBENCH_FRAMEWORKS=" + path("frameworks") +
                           " XDG_CACHE_HOME=" + path("cache"),
                       args);
  }
  Outcome nnbench_env(const std::string& env, const std::string& args) {
    return shell("env " + env + " " + NNBENCH_EXE + " " + args);
  }
};

TEST_F(ToyFramework, AFolderWithAManifestIsAnEngineThatRunsAndVerifies) {
  const auto e = toy("env --json --no-peak");
  ASSERT_EQ(e.code, 0) << e.output;
  const auto j = json::parse(e.output.substr(e.output.find('{')));
  const auto& b = j["environment"]["backends"]["toy"];
  EXPECT_FALSE(b.contains("unavailable")) << b.dump();
  EXPECT_EQ(b["libraries"]["Toy"].get<std::string>().rfind("numpy ", 0), 0u)
      << b.dump();
  EXPECT_EQ(b["can"]["lr_schedules"], true) << b.dump();  // from the manifest

  const auto run =
      toy("run --model mnist-mlp --backend toy --mode train "
          "--batch 8 --out " +
          path("run.json") + kFast + kNoContention);
  ASSERT_EQ(run.code, 0) << run.output;
  const auto r = json::parse(slurp(path("run.json")));
  const auto& rec = r["results"][0];
  EXPECT_EQ(rec["state"], "ok") << rec.dump();
  EXPECT_EQ(rec["effective"]["worker"], "toy/engine.py") << rec.dump();
  // Ten classes from seeded weights: about ln 10 at first.
  EXPECT_NEAR(rec["loss"]["first"].get<double>(), std::log(10.0), 0.5)
      << rec.dump();

  const auto v = toy("verify --model mnist-mlp --backends toy --out " +
                     path("verify.json"));
  ASSERT_EQ(v.code, 0) << v.output;
  const auto checks = json::parse(slurp(path("verify.json")))[0];
  EXPECT_EQ(checks["verdict"], "PASS") << checks.dump();
  // Outputs both ways, the loss, and every weight's gradient and update.
  EXPECT_EQ(checks["checks"].size(), 15u) << checks.dump();

  // A layer it does not have is refused by name, before any worker runs.
  const auto cnn = toy("run --model mnist-cnn --backend toy" +
                       std::string(kFast) + kNoContention);
  EXPECT_NE(cnn.output.find("the toy has MLP layers only"), std::string::npos)
      << cnn.output;
}

TEST_F(ToyFramework, ABrokenManifestIsListedUnavailableNamingTheLine) {
  write("frameworks/toy/framework.toml",
        "summary = \"toy\"\norder = \"first\"\npython = [\"venv\"]\n");
  const auto e = toy("env --json --no-peak");
  ASSERT_EQ(e.code, 0) << e.output;
  const auto j = json::parse(e.output.substr(e.output.find('{')));
  const std::string why = j["environment"]["backends"]["toy"]["unavailable"];
  EXPECT_NE(why.find("frameworks/toy/framework.toml:2:"), std::string::npos)
      << why;
  EXPECT_NE(why.find("'order' must be an integer from 1 to 1000"),
            std::string::npos)
      << why;
  expect_usage_error(toy("run --model mnist-mlp --backend toy"),
                     "'order' must be an integer");
}

// The inference engines (ONNX Runtime, OpenVINO) run nnbench's models as
// ONNX graphs: inference through their worker, the threads asked, and
// training refused by name (unimplemented), not attempted.
class InferenceEngines : public Cli,
                         public ::testing::WithParamInterface<const char*> {};

TEST_P(InferenceEngines, InferWithTheThreadsAskedAndRefuseTraining) {
  const std::string engine = GetParam();
  const auto o = nnbench(
      "run --model mnist-cnn --batch 8 --mode infer --backend " + engine +
      " --threads 1 --warmup-iters 1 --warmup-time 0 --min-iters 3"
      " --min-time 0" +
      kNoContention + " --out " + path("r.json"));
  ASSERT_EQ(o.code, 0) << o.output;
  const json r = json::parse(slurp(path("r.json")))["results"][0];
  EXPECT_EQ(r["state"], "ok");
  EXPECT_EQ(r["effective"]["threads"], 1);
  EXPECT_GE(r["samples_seconds"].size(), 3u);
  const auto t = nnbench("run --model mnist-cnn --batch 8 --backend " + engine +
                         kFast + kNoContention + " --out " + path("t.json"));
  const json tr = json::parse(slurp(path("t.json")))["results"][0];
  EXPECT_EQ(tr["state"], "unimplemented") << t.output;
  EXPECT_NE(tr["message"].get<std::string>().find("training"),
            std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Engines, InferenceEngines,
                         ::testing::Values("onnxruntime", "openvino"));

// The ONNX file holds the model as described: one Conv node per conv2d
// layer of the zoo's description, checked by the onnx package itself.
TEST_F(Cli, ExportOnnxWritesAGraphTheOnnxCheckerAccepts) {
  const auto o =
      nnbench("models --export-onnx mnist-cnn --out " + path("m.onnx"));
  ASSERT_EQ(o.code, 0) << o.output;
  ASSERT_EQ(nnbench("models --export mnist-cnn --out " + path("m.json")).code,
            0);
  const json m = json::parse(slurp(path("m.json")));
  int convs = 0;
  for (const auto& l : m["layers"]) convs += l["op"] == "conv2d";
  ASSERT_GT(convs, 0);
  const std::string py =
      "import onnx, sys; m = onnx.load(sys.argv[1]); "
      "onnx.checker.check_model(m); "
      "print('convs', sum(n.op_type == 'Conv' for n in m.graph.node))";
  // Where scripts/setup made the environment (worker_backend.h).
  const char* venvs = std::getenv("NNBENCH_VENVS");
  const char* data = std::getenv("XDG_DATA_HOME");
  const std::string python =
      (venvs && *venvs ? std::string(venvs)
       : data && *data
           ? std::string(data) + "/nnbench/venvs"
           : std::string(std::getenv("HOME")) + "/.local/share/nnbench/venvs") +
      "/onnxruntime/bin/python";
  const auto c = shell(python + " -c \"" + py + "\" " + path("m.onnx"));
  ASSERT_EQ(c.code, 0) << c.output;
  EXPECT_NE(c.output.find("convs " + std::to_string(convs)), std::string::npos)
      << c.output;
  expect_usage_error(nnbench("models --export-onnx mnist-cnn"),
                     "--export-onnx needs --out");
}

// A suite that names them (DLBench's Caffe and CNTK) keeps their rows:
// state not_run, the reason under the table, in the results file and on
// the report; the suite still succeeds. A framework whose
// environment is missing is the same when a suite names it.
TEST_F(Cli, ASuiteNamingAnEngineThatCannotRunHereShowsItsRowsAsNotRun) {
  write("s.toml", std::string("[grid]\nmodels = [\"mnist-mlp\"]\n"
                              "backends = [\"onednn\", \"cntk\", "
                              "\"tensorflow\"]\n"
                              "modes = [\"train\"]\nthreads = [1]\n"
                              "batches = [8]\n") +
                      kFastRules);
  const std::string env = "NNBENCH_VENVS=" + path("none") +
                          " XDG_CACHE_HOME=" + path("cache") + " ";
  const auto o = shell(env + NNBENCH_EXE + " suite " + path("s.toml") +
                       kNoContention + " --no-store --out " + path("r.json"));
  ASSERT_EQ(o.code, 0) << o.output;
  EXPECT_NE(o.output.find("Not run on this machine:\n  cntk: "),
            std::string::npos)
      << o.output;
  EXPECT_NE(o.output.find("  tensorflow: "), std::string::npos) << o.output;
  const json runs = json::parse(slurp(path("r.json")))["results"];
  ASSERT_EQ(runs.size(), 3u);
  std::map<std::string, json> by;
  for (const auto& r : runs) by[r["backend"]["name"]] = r;
  EXPECT_EQ(by["onednn"]["state"], "ok");
  EXPECT_EQ(by["cntk"]["state"], "not_run");
  EXPECT_NE(
      by["cntk"]["message"].get<std::string>().find("Python 3.6 and older"),
      std::string::npos);
  EXPECT_EQ(by["tensorflow"]["state"], "not_run");
  EXPECT_NE(by["tensorflow"]["message"].get<std::string>().find(
                "scripts/setup tensorflow"),
            std::string::npos);
  const auto rep =
      nnbench("report " + path("r.json") + " -o " + path("r.html"));
  ASSERT_EQ(rep.code, 0) << rep.output;
  EXPECT_NE(slurp(path("r.html")).find("Not run on this machine: cntk: "),
            std::string::npos);
}

}  // namespace
}  // namespace nnbench_cli_test
