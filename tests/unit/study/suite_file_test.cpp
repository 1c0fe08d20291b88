// Suite files: the grid they describe, and every malformed file refused
// with FILE:LINE:COLUMN.
#include "study/suite_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "study/plan.h"
#include "util/error.h"

namespace nnbench::study {
namespace {

namespace fs = std::filesystem;

class SuiteFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("nnbench-suite-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& text) {
    const std::string p = (dir_ / "s.toml").string();
    std::ofstream(p) << text;
    return p;
  }
  // The error's message, or "" when the file was accepted.
  std::string error_of(const std::string& text) {
    try {
      parse_suite_file(write(text));
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  fs::path dir_;
};

PlanOptions options() {
  PlanOptions o;
  o.default_backend = "torch";
  o.all_backends = {"onednn", "torch"};
  o.usable_cpus = 6;
  return o;
}

TEST_F(SuiteFile, GridIsTheProductWithOverridesAndExclusions) {
  const auto s = parse_suite_file(write(R"(
description = "t"
[grid]
models = ["mnist-mlp", "resnet-56"]
backends = ["all"]
modes = ["train", "infer"]
batches = [8, 16]
threads = [1, 2]
repetitions = 2
[[model]]
name = "resnet-56"
modes = ["train"]
batches = [4]
[[exclude]]
model = "mnist-mlp"
backend = "torch"
mode = "infer"
)"));
  const auto cases = plan(s, options());
  // mnist-mlp: 2 backends x 2 modes x 2 batches x 2 threads x 2 reps = 32,
  // minus torch infer (2 x 2 x 2 = 8) = 24; resnet-56: 2 x 1 x 1 x 2 x 2 = 8.
  EXPECT_EQ(cases.size(), 32u);
  EXPECT_EQ(cases.front().label(), "mnist-mlp onednn fp32 train b8 t1 r1");
  std::set<std::string> keys;
  for (const auto& c : cases) {
    keys.insert(c.key);
    EXPECT_FALSE(c.c.model == "mnist-mlp" && c.c.request.backend == "torch" &&
                 c.c.request.mode == backend::Mode::kInfer);
    if (c.c.model == "resnet-56") {
      EXPECT_EQ(c.c.request.batch, 4);
    }
  }
  EXPECT_EQ(keys.size(), cases.size());  // repetitions have their own keys
}

// "all" brings an inference-only engine into the cases that infer: not
// into a throughput suite's training cases (its default mode), but into
// every case of a scenario that only infers (LoadGen's), whose mode axis
// it never reads. Before, such a suite left ONNX Runtime and OpenVINO out.
TEST_F(SuiteFile, AnInferenceOnlyEngineSitsOutTrainingCasesOnly) {
  PlanOptions o = options();
  o.all_backends = {"onednn", "onnxruntime"};
  o.inference_only = {"onnxruntime"};
  const auto backends = [&](const std::string& scenario) {
    std::multiset<std::string> out;
    for (const auto& c :
         plan(parse_suite_file(write("description = \"t\"\n" + scenario +
                                     "[grid]\nmodels = [\"mnist-mlp\"]\n"
                                     "backends = [\"all\"]\n")),
              o))
      out.insert(c.c.request.backend);
    return out;
  };
  EXPECT_EQ(backends(""), (std::multiset<std::string>{"onednn"}));
  EXPECT_EQ(backends("scenario = \"single-stream\"\n"),
            (std::multiset<std::string>{"onednn", "onnxruntime"}));
  EXPECT_EQ(backends("scenario = \"generation\"\n"),
            (std::multiset<std::string>{"onednn", "onnxruntime"}));
}

TEST_F(SuiteFile, InterleavingIsASeededPermutation) {
  const auto s = parse_suite_file(write(R"([grid]
models = ["mnist-mlp", "mnist-cnn", "fcn-r"]
batches = [1, 2, 4, 8])"));
  auto o = options();
  const auto plain = plan(s, o);
  o.interleave_seed = 7;
  const auto a = plan(s, o), b = plan(s, o);
  ASSERT_EQ(a.size(), plain.size());
  std::multiset<std::string> ka, kp;
  bool moved = false;
  for (size_t i = 0; i < a.size(); ++i) {
    ka.insert(a[i].key);
    kp.insert(plain[i].key);
    EXPECT_EQ(a[i].key, b[i].key);  // same seed, same order
    moved = moved || a[i].key != plain[i].key;
  }
  EXPECT_EQ(ka, kp);
  EXPECT_TRUE(moved);
}

TEST_F(SuiteFile, ThreadSweepGoesUpToTheUsableCpus) {
  EXPECT_EQ(thread_sweep(6), (std::vector<int>{1, 2, 4, 6}));
  EXPECT_EQ(thread_sweep(8), (std::vector<int>{1, 2, 4, 8}));
  EXPECT_EQ(thread_sweep(1), (std::vector<int>{1}));
  const auto s =
      parse_suite_file(write("[grid]\nmodels = [\"mnist-mlp\"]\n"
                             "threads = \"sweep\"\n"));
  EXPECT_EQ(plan(s, options()).size(), 4u);
}

TEST_F(SuiteFile, CommandLineRulesReplaceTheFiles) {
  const auto s = parse_suite_file(write(R"([grid]
models = ["mnist-mlp"]
[stop]
min_seconds = 9.5)"));
  auto o = options();
  EXPECT_EQ(plan(s, o)[0].c.request.stop.min_seconds, 9.5);
  o.stop = results::StopRule{};
  o.stop->min_seconds = 0.3;
  EXPECT_EQ(plan(s, o)[0].c.request.stop.min_seconds, 0.3);
}

// `suite quick --threads 1` once ran every case at the grid's threads: the
// command line's threads, precision and repetitions replace the file's
// lists, the [[model]] ones included.
TEST_F(SuiteFile, CommandLineThreadsPrecisionAndRepetitionsReplaceTheLists) {
  const auto s = parse_suite_file(write(R"([grid]
models = ["mnist-mlp", "mnist-cnn"]
threads = [0]
precisions = ["fp32", "bf16"]
[[model]]
name = "mnist-cnn"
threads = [2, 4]
)"));
  auto o = options();
  EXPECT_EQ(plan(s, o).size(), 6u);  // mlp 1 x 2, cnn 2 x 2
  o.threads = 1;
  o.precision = "fp32";
  o.repetitions = 3;
  const auto cases = plan(s, o);
  ASSERT_EQ(cases.size(), 6u);  // 2 models x 1 x 1 x 3 repetitions
  for (const auto& c : cases) {
    EXPECT_EQ(c.c.request.options.threads, 1);
    EXPECT_EQ(c.c.request.options.precision, "fp32");
  }
  EXPECT_EQ(cases.back().repetition, 2);
}

// A suite for a GPU names its device; --device on the command line wins,
// and a device that is neither cpu nor cuda[:N] is refused at its place.
TEST_F(SuiteFile, DeviceIsTheSuitesUnlessTheCommandLineGivesOne) {
  const std::string grid = "[grid]\nmodels = [\"mnist-mlp\"]\n";
  auto o = options();
  for (const auto& c : plan(parse_suite_file(write(grid)), o))
    EXPECT_EQ(c.c.request.options.device, "cpu");
  const auto s = parse_suite_file(write("device = \"cuda:1\"\n" + grid));
  ASSERT_EQ(s.device, "cuda:1");
  for (const auto& c : plan(s, o))
    EXPECT_EQ(c.c.request.options.device, "cuda:1");
  o.device = o.base.options.device = "cpu";
  for (const auto& c : plan(s, o)) EXPECT_EQ(c.c.request.options.device, "cpu");
  const std::string e = error_of("device = \"gpu0\"\n" + grid);
  EXPECT_NE(e.find("s.toml:1:"), std::string::npos) << e;
  EXPECT_NE(e.find("device 'gpu0'"), std::string::npos) << e;
}

TEST_F(SuiteFile, MalformedFilesNameFileLineAndColumn) {
  const std::string file = (dir_ / "s.toml").string();
  // Syntax: the unterminated string starts on line 2, column 10.
  std::string e = error_of("[grid]\nmodels = [\"mnist-mlp]\n");
  EXPECT_EQ(e.rfind(file + ":2:", 0), 0u) << e;
  // Unknown key, on line 3 column 1.
  e = error_of("[grid]\nmodels = [\"mnist-mlp\"]\nbatchs = [8]\n");
  EXPECT_EQ(e.rfind(file + ":3:1: unknown key 'batchs' in [grid]", 0), 0u) << e;
  // Wrong type: line 2, column 11 (the value).
  e = error_of("[grid]\nbatches = [\"8\"]\nmodels = [\"mnist-mlp\"]\n");
  EXPECT_EQ(e.rfind(file + ":2:12: 'batches' must be an integer", 0), 0u) << e;
  e = error_of("[grid]\nmodels = [\"a\"]\n[[model]]\nname = \"b\"\n");
  EXPECT_NE(e.find("'b' is not in [grid] models"), std::string::npos) << e;
  e = error_of("[grid]\nmodels = []\n");
  EXPECT_NE(e.find("empty list"), std::string::npos) << e;
  e = error_of("description = \"no grid\"\n");
  EXPECT_NE(e.find("needs a [grid]"), std::string::npos) << e;
  e = error_of("[grid]\nmodels = [\"a\"]\nmodes = [\"fly\"]\n");
  EXPECT_NE(e.find("mode 'fly'"), std::string::npos) << e;
  // An instance the price catalog lacks: line 4, column 12 (the value).
  e = error_of("[grid]\nmodels = [\"a\"]\n[cost]\ninstance = \"nope\"\n");
  EXPECT_EQ(e.rfind(file + ":4:12: unknown instance 'nope'", 0), 0u) << e;
  e = error_of(
      "[grid]\nmodels = [\"a\"]\n[cost]\ninstance = "
      "\"aws-p3.2xlarge\"\nbaseline_threads = -1\n");
  EXPECT_NE(e.find(":5:20: baseline_threads must be >= 0"), std::string::npos)
      << e;
}

TEST_F(SuiteFile, CostNamesAnInstanceAndABaseline) {
  const auto s = parse_suite_file(write(R"([grid]
models = ["a"]
[cost]
instance = "aws-c5.18xlarge"
baseline_threads = 2
)"));
  ASSERT_TRUE(s.cost);
  EXPECT_EQ(s.cost->instance, "aws-c5.18xlarge");
  EXPECT_EQ(s.cost->baseline_threads, 2);
  EXPECT_FALSE(parse_suite_file(write("[grid]\nmodels = [\"a\"]\n")).cost);
}

TEST_F(SuiteFile, ProcessesAreAnAxisRunOverTheNamedEngine) {
  const SuiteSpec s = parse_suite_file(write(R"(
[grid]
models = ["mnist-mlp"]
threads = [1]
processes = [1, 2, 4]
[distributed]
engine = "gloo"
scaling = "weak"
)"));
  const auto cases = plan(s, options());
  ASSERT_EQ(cases.size(), 3u);
  std::set<int> seen;
  for (const auto& c : cases) {
    const auto& d = c.c.request.distributed;
    seen.insert(d.engine.empty() ? 1 : d.processes);
    if (d.engine.empty()) continue;  // one process: no engine at all
    EXPECT_EQ(d.engine, "gloo");
    EXPECT_EQ(d.scaling, "weak");
    EXPECT_NE(c.label().find(" p" + std::to_string(d.processes) + " gloo"),
              std::string::npos)
        << c.label();
  }
  EXPECT_EQ(seen, (std::set<int>{1, 2, 4}));
  // Cases differ by their processes, so their keys do too.
  EXPECT_NE(cases[0].key, cases[1].key);
}

TEST_F(SuiteFile, ProcessesNeedAnEngineAndValidValues) {
  EXPECT_NE(error_of("[grid]\nmodels = [\"mnist-mlp\"]\nprocesses = [2]\n")
                .find("need a [distributed] table"),
            std::string::npos);
  EXPECT_NE(error_of("[grid]\nmodels = [\"mnist-mlp\"]\nprocesses = [0]\n")
                .find("processes must be >= 1"),
            std::string::npos);
  const std::string e = error_of(
      "[grid]\nmodels = [\"mnist-mlp\"]\n[distributed]\nengine = \"nccl\"\n");
  EXPECT_NE(e.find("s.toml:4:10: engine 'nccl' is not mpi or gloo"),
            std::string::npos)
      << e;
}

TEST_F(SuiteFile, ShippedSuitesAllParse) {
  const auto names = shipped_suites();
  for (const char* want : {"quick", "dlbench-cpu", "dlbench-batch",
                           "throughput-grid", "cpu-vs-gpu"})
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  for (const auto& n : names) {
    const auto s = load_suite(n);
    EXPECT_FALSE(plan(s, options()).empty()) << n;
    EXPECT_FALSE(s.description.empty()) << n;
  }
  // quick and cpu-vs-gpu run every engine, as the README's main job does.
  const auto engines_of = [&](const std::string& suite) {
    std::set<std::string> out;
    for (const auto& c : plan(load_suite(suite), options()))
      out.insert(c.c.request.backend);
    return out;
  };
  const auto all = engines_of("engines");
  EXPECT_GE(all.size(), 2u);
  EXPECT_EQ(engines_of("quick"), all);
}

// Names are checked against the registries with the place they were given;
// "all" and "default" are always known.
TEST_F(SuiteFile, CheckNamesRefusesTheFirstUnknownNameAtItsPlace) {
  const auto error_of_names = [&](const std::string& text) -> std::string {
    try {
      check_names(parse_suite_file(write(text)), {"reference", "torch"});
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(error_of_names("[grid]\nmodels = [\"mnist-mlp\"]\n"
                           "backends = [\"all\", \"default\", \"torch\"]\n"),
            "");
  const std::string e = error_of_names(
      "[grid]\nmodels = [\"mnist-mlp\"]\nbackends = [\"torch\", \"mxnet\"]\n");
  EXPECT_EQ(e.rfind((dir_ / "s.toml").string() + ":3:22: unknown backend "
                                                 "'mxnet'; known: reference, "
                                                 "torch",
                    0),
            0u)
      << e;
  // A training suite's grid names tasks, whichever key it uses.
  EXPECT_NE(error_of_names("scenario = \"training\"\n[grid]\n"
                           "models = [\"mnist-mlp\"]\n")
                .find(":3:11: unknown task 'mnist-mlp'"),
            std::string::npos);
  EXPECT_EQ(error_of_names("scenario = \"training\"\n[grid]\n"
                           "tasks = [\"fashion-mnist-mlp\"]\n"),
            "");
}

// Each value of a list at most once; a [[model]] block per model.
TEST_F(SuiteFile, RepeatedValuesAndBlocksAreRefused) {
  EXPECT_NE(error_of("[grid]\nmodels = [\"mnist-mlp\"]\nbatches = [8, 16, 8]\n")
                .find(":3:19: 'batches' lists 8 twice (also at line 3, "
                      "column 12)"),
            std::string::npos);
  EXPECT_NE(error_of("[grid]\nmodels = [\"mnist-mlp\"]\n"
                     "[[model]]\nname = \"mnist-mlp\"\n"
                     "[[model]]\nname = \"mnist-mlp\"\n")
                .find(":6:8: [[model]] 'mnist-mlp' is given twice (first at "
                      "line 4)"),
            std::string::npos);
}

// Two planned cases with one key would run twice and be stored once.
TEST_F(SuiteFile, PlanRefusesTwoCasesWithOneKey) {
  auto s = parse_suite_file(write("[grid]\nmodels = [\"mnist-mlp\"]\n"));
  s.models.push_back("mnist-mlp");  // past the reader's check
  try {
    plan(s, options());
    ADD_FAILURE() << "planned";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is planned twice"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace nnbench::study

namespace nnbench::study {
namespace {

// [stop] names its criterion and gives its parameters as keys of their own;
// an unknown criterion or parameter is an error at its line.
TEST_F(SuiteFile, StopCriterionByNameWithItsParameters) {
  const std::string file = (dir_ / "s.toml").string();
  const auto s = parse_suite_file(
      write("[grid]\nmodels = [\"mnist-mlp\"]\n[stop]\nmin_iterations = 3\n"
            "criterion = \"median-ci\"\nmax_rel = 0.05\n"));
  EXPECT_EQ(s.stop.min_iterations, 3);
  EXPECT_EQ(s.stop.criterion, "median-ci");
  EXPECT_EQ(s.stop.parameters,
            (std::map<std::string, double>{{"max_rel", 0.05}}));
  const auto old = parse_suite_file(write(
      "[grid]\nmodels = [\"mnist-mlp\"]\n[stop]\nmax_relative_ci = 0.02\n"));
  EXPECT_EQ(old.stop.criterion, "median-ci");
  EXPECT_EQ(old.stop.parameters.at("max_rel"), 0.02);
  std::string e =
      error_of("[grid]\nmodels = [\"a\"]\n[stop]\ncriterion = \"ci\"\n");
  EXPECT_EQ(
      e.rfind(file + ":4:13: [stop] criterion (--criterion) 'ci' is unknown",
              0),
      0u)
      << e;
  e = error_of(
      "[grid]\nmodels = [\"a\"]\n[stop]\ncriterion = \"median-ci\"\nmax_noise "
      "= 1\n");
  EXPECT_EQ(e.rfind(file + ":5:1: unknown key 'max_noise' in [stop]", 0), 0u)
      << e;
  EXPECT_NE(e.find("parameter of criterion 'median-ci'"), std::string::npos);
  e = error_of(
      "[grid]\nmodels = [\"a\"]\n[stop]\ncriterion = \"median-ci\"\nmax_rel = "
      "2\n");
  EXPECT_EQ(e.rfind(file + ":5:1: [stop] max_rel (--criterion-param) 2 of "
                           "criterion 'median-ci' must be in [1e-06, 0.5]",
                    0),
            0u)
      << e;
}

}  // namespace
}  // namespace nnbench::study
