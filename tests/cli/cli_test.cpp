// The command line as a user meets it: exit codes, messages, files written.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_util.h"

namespace {

using namespace nnbench_cli_test;

namespace fs = std::filesystem;

TEST_F(Cli, HelpExitsZero) {
  for (const char* args : {"--help", "run --help", "models --help"})
    EXPECT_EQ(nnbench(args).code, 0) << args;
}

TEST_F(Cli, UnknownModelNamesIt) {
  expect_usage_error(nnbench("run --model resnet-9000"),
                     "unknown model 'resnet-9000'");
}

TEST_F(Cli, UnknownBackendNamesIt) {
  expect_usage_error(nnbench("run --model mnist-mlp --backend caffe2"),
                     "unknown backend 'caffe2'");
}

TEST_F(Cli, BatchMustBePositive) {
  expect_usage_error(nnbench("run --model mnist-mlp --batch 0"), "--batch");
  expect_usage_error(nnbench("run --model mnist-mlp --batch -4"), "--batch");
}

TEST_F(Cli, MalformedModelFileNamesTheFile) {
  write("broken.json", "{\"format_version\": 1, \"name\": ");
  expect_usage_error(nnbench("run --model-file " + path("broken.json")),
                     path("broken.json") + ": not valid JSON");
}

TEST_F(Cli, ModelFileWithABadFieldNamesLayerAndField) {
  ASSERT_EQ(nnbench("models --export mnist-mlp --out " + path("m.json")).code,
            0);
  auto j = nlohmann::json::parse(std::ifstream(path("m.json")));
  j["layers"][1]["kernel"] = {3, 3};  // not an attribute of dropout
  write("bad.json", j.dump());
  expect_usage_error(nnbench("run --model-file " + path("bad.json")),
                     "layers[1]: field 'kernel' is not an attribute");
}

TEST_F(Cli, ShapeMismatchInModelFileNamesTheLayer) {
  ASSERT_EQ(nnbench("models --export mnist-cnn --out " + path("m.json")).code,
            0);
  auto j = nlohmann::json::parse(std::ifstream(path("m.json")));
  j["layers"][2]["groups"] = 5;  // 32 channels are not divisible by 5
  write("bad.json", j.dump());
  expect_usage_error(nnbench("run --model-file " + path("bad.json")),
                     "groups 5 must divide");
}

TEST_F(Cli, UnwritableOutputFailsBeforeRunningAndWritesNothing) {
  const std::string out = path("missing-dir/out.json");
  expect_usage_error(nnbench("run --model mnist-mlp --out " + out),
                     "missing-dir/out.json: cannot write");
  EXPECT_FALSE(fs::exists(out));
}

// The shared options are declared once: every command that offers one shows
// the same line for it in its help.
TEST_F(Cli, SharedOptionsReadTheSameInEveryCommand) {
  const auto line_of = [&](const std::string& cmd, const std::string& opt) {
    const Outcome o = nnbench(cmd + " --help");
    EXPECT_EQ(o.code, 0) << o.output;
    const auto at = o.output.find("  " + opt + " ");
    if (at == std::string::npos) return std::string("missing");
    return o.output.substr(at, o.output.find('\n', at) - at);
  };
  for (const char* opt : {"--threads", "--seed", "--precision", "--device"}) {
    const std::string want = line_of("run", opt);
    EXPECT_NE(want, "missing") << opt;
    for (const char* cmd : {"suite", "train", "verify"})
      EXPECT_EQ(line_of(cmd, opt), want) << cmd << " " << opt;
  }
  EXPECT_EQ(line_of("train", "--backend"), line_of("run", "--backend"));
}

// The verification that gated the run is part of its record.
TEST_F(Cli, RunVerifyRecordsTheVerification) {
  const std::string out = path("v.json");
  const Outcome o = nnbench("run --model mnist-mlp --batch 8 --verify --out " +
                            out + kFast + kNoContention);
  ASSERT_EQ(o.code, 0) << o.output;
  const auto j = nlohmann::json::parse(std::ifstream(out));
  const auto& r = j["results"][0];
  ASSERT_TRUE(r["verification"].is_object()) << r.dump();
  EXPECT_EQ(r["verification"]["verdict"], "PASS");
  EXPECT_EQ(r["verification"]["backend"], r["backend"]["name"]);
  EXPECT_GE(r["verification"]["checks"].size(), 3u);
}

TEST_F(Cli, RunWritesAResultsFile) {
  const std::string out = path("r.json");
  const Outcome o = nnbench("run --model mnist-mlp --batch 8 --out " + out +
                            kFast + kNoContention);
  ASSERT_EQ(o.code, 0) << o.output;
  const auto j = nlohmann::json::parse(std::ifstream(out));
  EXPECT_EQ(j["schema_version"], 4);
  EXPECT_EQ(j["results"][0]["kind"], "throughput");
  const auto& r = j["results"][0];
  EXPECT_EQ(r["state"], "ok");
  EXPECT_EQ(r["samples_seconds"].size(), r["stats_seconds"]["n"]);
  // kFast stops at 3 samples: the CI of the median is [min, max], which
  // covers with 1 - 2 x 2^-3 = 0.75, and is shown so, never as 95 %.
  ASSERT_EQ(r["stats_seconds"]["n"], 3);
  EXPECT_EQ(r["stats_seconds"]["median_ci_coverage"], 0.75);
  EXPECT_EQ(r["stats_seconds"]["median_ci_lo"], r["stats_seconds"]["min"]);
  EXPECT_NE(o.output.find("(75.0%)"), std::string::npos) << o.output;
  EXPECT_GT(r["throughput"]["samples_per_second"].get<double>(), 0);
  EXPECT_EQ(r["requested"]["batch"], 8);
  EXPECT_EQ(r["effective"]["threads"], 2);
  EXPECT_FALSE(j["environment"]["cpu"]["name"].get<std::string>().empty());
  EXPECT_GT(j["peak"]["gflops"].get<double>(), 0);
  // No temporary files left beside the output.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), {}), 1);
}

// --threads 0 asks for every usable CPU: the request records 0, what the
// user asked, and the backend's effective count is the affinity mask's size
// (counted here with sched_getaffinity, not by nnbench), on every backend.
TEST_F(Cli, ThreadsZeroStaysZeroInTheRequestAndResolvesInEffective) {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  ASSERT_EQ(sched_getaffinity(0, sizeof(mask), &mask), 0);
  const int cpus = CPU_COUNT(&mask);
  for (const char* backend : {"reference", "torch", "onednn"}) {
    SCOPED_TRACE(backend);
    const std::string out = path(std::string(backend) + ".json");
    const Outcome o = nnbench(
        std::string("run --model mnist-mlp --batch 8 --threads 0 --backend ") +
        backend + " --warmup-iters 1 --warmup-time 0 --min-iters 3" +
        " --min-time 0 --on-contention warn --out " + out);
    if (o.output.find("unknown backend") != std::string::npos) continue;
    ASSERT_EQ(o.code, 0) << o.output;
    const auto r = nlohmann::json::parse(std::ifstream(out))["results"][0];
    EXPECT_EQ(r["requested"]["threads"], 0);
    EXPECT_EQ(r["effective"]["threads"], cpus);
  }
}

TEST_F(Cli, ExportedModelFileRunsAsTheSameModel) {
  ASSERT_EQ(nnbench("models --export mnist-mlp --out " + path("m.json")).code,
            0);
  const Outcome a = nnbench("run --model mnist-mlp --batch 4 --out " +
                            path("a.json") + kFast + kNoContention);
  const Outcome b =
      nnbench("run --model-file " + path("m.json") + " --batch 4 --out " +
              path("b.json") + kFast + kNoContention);
  ASSERT_EQ(a.code, 0) << a.output;
  ASSERT_EQ(b.code, 0) << b.output;
  auto hash = [&](const char* f) {
    return nlohmann::json::parse(
        std::ifstream(path(f)))["results"][0]["model"]["hash"];
  };
  EXPECT_EQ(hash("a.json"), hash("b.json"));
}

TEST_F(Cli, OomIsAResultNotACrash) {
  const std::string out = path("oom.json");
  const Outcome o =
      // Within the batch bound (65536), far beyond any machine's memory.
      nnbench("run --model resnet-50 --batch 65536 --out " + out + kFast);
  EXPECT_EQ(o.code, 1) << o.output;
  const auto j = nlohmann::json::parse(std::ifstream(out));
  EXPECT_EQ(j["results"][0]["state"], "oom");
  // Refused on its estimate, nothing allocated: said in the file and table.
  EXPECT_EQ(j["results"][0]["oom_source"], "estimate");
  EXPECT_NE(o.output.find("oom (estimate)"), std::string::npos) << o.output;
}

TEST_F(Cli, ModelsListsTheZoo) {
  const Outcome o = nnbench("models");
  EXPECT_EQ(o.code, 0);
  for (const char* name : {"resnet-50", "googlenet", "lstm-ptb", "fcn-s"})
    EXPECT_NE(o.output.find(name), std::string::npos) << name;
  EXPECT_NE(o.output.find("25557032"), std::string::npos);
}

TEST_F(Cli, EnvReportsTheBlasKernelAndThreads) {
  const Outcome o = nnbench("env --json --no-peak");
  ASSERT_EQ(o.code, 0) << o.output;
  const auto j = nlohmann::json::parse(o.output.substr(o.output.find('{')));
  EXPECT_FALSE(j["environment"]["openblas_core"].get<std::string>().empty());
  EXPECT_EQ(j["environment"]["openblas_threading"], "openmp");
  // LibTorch's libblas.so.3 too: no pthreads OpenBLAS may be loaded, or
  // its threads fight LibTorch's OpenMP pool.
  for (const auto& lib : j["environment"]["blas_libraries"])
    EXPECT_EQ(lib.get<std::string>().find("openblas-pthread"),
              std::string::npos)
        << lib;
}

TEST_F(Cli, EnvMeasuresTheMemoryBandwidthUnlessToldNot) {
  const auto parse = [](const Outcome& o) {
    return nlohmann::json::parse(o.output.substr(o.output.find('{')));
  };
  const Outcome o = nnbench("env --json --no-peak --threads 1");
  ASSERT_EQ(o.code, 0) << o.output;
  const auto b = parse(o)["memory_bandwidth"];
  ASSERT_TRUE(b.is_object()) << o.output;
  EXPECT_GT(b["triad_gbs"].get<double>(), 0);
  EXPECT_GT(b["read_gbs"].get<double>(), 0);
  EXPECT_GT(b["copy_gbs"].get<double>(), 0);
  EXPECT_EQ(b["threads"], 1);
  // At least STREAM's floor of 64 MiB per array, unless memory is short.
  EXPECT_GE(b["array_bytes"].get<int64_t>(), int64_t{8} << 20);
  EXPECT_NE(b["method"].get<std::string>().find("triad"), std::string::npos);
  const Outcome off = nnbench("env --json --no-peak --no-bandwidth");
  ASSERT_EQ(off.code, 0) << off.output;
  EXPECT_TRUE(parse(off)["memory_bandwidth"].is_null()) << off.output;
}

}  // namespace

namespace {

// These tests check files and cost arithmetic of whole training runs, which
TEST_F(Cli, TrainOneEpochOnFashionMnistWritesEverything) {
  const Outcome o = nnbench(
      "train --task fashion-mnist-mlp --epochs 1 --threads 2 --latency "
      "--latency-items 200 --price-per-hour 1.5 --out " +
      path("t.json") + " --dawnbench " + dir_.string() + " --mllog " +
      path("log.txt") +
      " --author Ada --author-email ada@example.org --org 'My Lab'" +
      kNoContention);
  ASSERT_EQ(o.code, 0) << o.output;
  const auto j = nlohmann::json::parse(std::ifstream(path("t.json")));
  // The contention rule as given, so a reader sees it was relaxed.
  EXPECT_EQ(j["timing"]["contention"]["action"], "warn");
  EXPECT_EQ(j["timing"]["contention"]["max_excess_load"], 4.0);
  EXPECT_EQ(j["timing"]["contention"]["max_steal_fraction"], 1.0);
  const auto& run = j["runs"][0];
  EXPECT_EQ(run["state"], "completed");
  ASSERT_EQ(run["epochs"].size(), 1u);
  // One epoch of the MLP on real data learns something: well above 10 %.
  EXPECT_GT(run["epochs"][0]["val_accuracy"].get<double>(), 0.7);
  EXPECT_EQ(run["latency"]["items"], 200);
  EXPECT_GT(j["costs"]["train_usd"].get<double>(), 0);
  EXPECT_EQ(j["dataset"]["train_size"], 60000);
  std::ifstream tsv(path("fashion-mnist-mlp.tsv"));
  std::string header;
  std::getline(tsv, header);
  EXPECT_EQ(header, "epoch\thours\ttop1Accuracy");
  EXPECT_TRUE(fs::exists(path("fashion-mnist-mlp.json")));
  std::ifstream log(path("log.txt"));
  std::string first;
  std::getline(log, first);
  EXPECT_EQ(first.rfind(":::MLLOG {", 0), 0u) << first;
  // The submitter's fields reach both exports (their rules: exports_test).
  const auto entry =
      nlohmann::json::parse(std::ifstream(path("fashion-mnist-mlp.json")));
  EXPECT_EQ(entry["authorEmail"], "ada@example.org");
  const auto infer = nlohmann::json::parse(
      std::ifstream(path("fashion-mnist-mlp-inference.json")));
  EXPECT_EQ(infer["misc"]["items"], 200);
  // DAWNBench's latency is the mean, in ms; the cost is per item.
  const double mean_s = run["latency"]["mean_seconds"].get<double>();
  EXPECT_DOUBLE_EQ(infer["latency"].get<double>(), mean_s * 1e3);
  EXPECT_DOUBLE_EQ(infer["cost"].get<double>(), 1.5 * mean_s / 3600);
  std::string org;
  for (std::string line; std::getline(log, line);) {
    const auto e = nlohmann::json::parse(line.substr(line.find('{')));
    if (e["key"] == "submission_org") org = e["value"];
  }
  EXPECT_EQ(org, "My Lab");
  // The file reads back in report and compare (before: "not a results
  // file: [json.exception.out_of_range.403] key 'peak' not found").
  const Outcome rep =
      nnbench("report " + path("t.json") + " -o " + path("t.html"));
  EXPECT_EQ(rep.code, 0) << rep.output;
  EXPECT_NE(slurp(path("t.html")).find("fashion-mnist-mlp"), std::string::npos);
  const Outcome cmp =
      nnbench("compare " + path("t.json") + " " + path("t.json") +
              " --min-repetitions 1 "
              "--format json --out " +
              path("c.json"));
  ASSERT_EQ(cmp.code, 0) << cmp.output;
  const auto c = nlohmann::json::parse(std::ifstream(path("c.json")));
  ASSERT_EQ(c["cases"].size(), 1u) << c;
  EXPECT_EQ(c["cases"][0]["case"], "fashion-mnist-mlp torch fp32 training t2");
  EXPECT_DOUBLE_EQ(c["cases"][0]["ratio"].get<double>(), 1.0);
}

// A training cost is the cost of reaching the target, with the time counted
// as the run counted it. Each run is one epoch of the MLP (seconds).
TEST_F(Cli, TrainCostOnlyForAReachedTargetAndCountedAsAsked) {
  const std::string base =
      "train --task fashion-mnist-mlp --epochs 1 --threads 2 "
      "--price-per-hour 3.6" +
      std::string(kNoContention) + " --out ";
  // 99 % after one epoch is out of reach: no training cost, and it says so.
  const Outcome missed = nnbench(base + path("missed.json") + " --target 0.99");
  ASSERT_EQ(missed.code, 0) << missed.output;
  const auto m = nlohmann::json::parse(std::ifstream(path("missed.json")));
  EXPECT_EQ(m["runs"][0]["state"], "not_converged");
  EXPECT_TRUE(m["costs"]["train_usd"].is_null());
  EXPECT_NE(missed.output.find("no training cost: the target was not reached"),
            std::string::npos)
      << missed.output;
  EXPECT_EQ(missed.output.find("training $"), std::string::npos);
  // 50 % is reached in epoch 1. With --include-eval-time its evaluation is
  // part of the time to target and of the cost: $3.60/h is $0.001 a second.
  const Outcome reached = nnbench(base + path("reached.json") +
                                  " --target 0.5 --include-eval-time");
  ASSERT_EQ(reached.code, 0) << reached.output;
  const auto r = nlohmann::json::parse(std::ifstream(path("reached.json")));
  const auto& run = r["runs"][0];
  ASSERT_EQ(run["state"], "converged");
  const double ttt = run["time_to_target_seconds"].get<double>();
  const double eval = run["epochs"][0]["eval_seconds"].get<double>();
  EXPECT_GT(eval, 0);
  EXPECT_DOUBLE_EQ(ttt, run["epochs"][0]["epoch_seconds"].get<double>() + eval);
  EXPECT_NEAR(r["costs"]["train_usd"].get<double>(), ttt * 0.001, 1e-12);
  EXPECT_EQ(r["timing"]["include_eval_time"], true);
  EXPECT_NE(reached.output.find("s of training and evaluation"),
            std::string::npos)
      << reached.output;
  EXPECT_EQ(reached.output.find("evaluation not counted"), std::string::npos)
      << reached.output;
}

TEST_F(Cli, TrainRejectsBadSubmitterFieldsBeforeRunning) {
  const std::string base =
      "train --task fashion-mnist-mlp --backend reference --mllog " +
      path("log.txt");
  expect_usage_error(nnbench(base + " --division closedd"), "--division");
  expect_usage_error(nnbench(base + " --status available"), "--status");
  expect_usage_error(nnbench(base + " --author-email nobody"),
                     "--author-email");
  EXPECT_FALSE(fs::exists(path("log.txt")));
}

TEST_F(Cli, TrainRejectsBadTargetsAndTasks) {
  expect_usage_error(nnbench("train --task fashion-mnist-92 --target 1.5"),
                     "--target");
  expect_usage_error(nnbench("train --task fashion-mnist-92 --target 0"),
                     "(0, 1]");
  expect_usage_error(nnbench("train --task imagenet"), "unknown task");
}

TEST_F(Cli, TrainWithMissingDataNamesThePath) {
  const Outcome o =
      nnbench("train --task keras-mnist-mlp --data " + path("no-such-dir"));
  EXPECT_EQ(o.code, 2) << o.output;
  EXPECT_NE(o.output.find("no-such-dir"), std::string::npos) << o.output;
}

// The report and compare commands on the checked-in results file
// (tests/data/report_fixture.json, real runs; see make_fixture.sh).
const std::string kFixture =
    std::string(NNBENCH_SOURCE_DIR) + "/tests/data/report_fixture.json";

TEST_F(Cli, ReportAndCompareNameWhatTheyCannotRead) {
  expect_usage_error(nnbench("report " + path("nope.json") + " --db " +
                             path("r.db") + " -o " + path("r.html")),
                     "nope.json");
  EXPECT_FALSE(fs::exists(path("r.html")));
  const std::string cmd = "NNBENCH_CHARTJS=" + path("no-chart.js") + " " +
                          std::string(NNBENCH_EXE) + " report " + kFixture +
                          " -o " + path("r.html") + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  EXPECT_EQ(WEXITSTATUS(pclose(p)), 2) << out;
  EXPECT_NE(out.find("libjs-chart.js"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(path("r.html")));
  expect_usage_error(nnbench("compare " + kFixture + " " + path("x.json") +
                             " --db " + path("r.db")),
                     "x.json");
}

TEST_F(Cli, CompareFindsAKnownSlowdownAndFailsOnIt) {
  // B: the fixture with every sample of one case made 20 % slower.
  auto j = nlohmann::json::parse(std::ifstream(kFixture));
  std::string slowed;
  for (auto& r : j["results"])
    if (r["kind"] == "throughput" && r["model"]["name"] == "mnist-mlp" &&
        r["backend"]["name"] == "onednn" && r["requested"]["batch"] == 32 &&
        (r["effective"]["threads"] == 1 || r["effective"]["threads"] == "1")) {
      for (auto& x : r["samples_seconds"]) x = x.get<double>() * 1.2;
      slowed = "mnist-mlp onednn fp32 train b32 t1";
    }
  ASSERT_FALSE(slowed.empty());
  std::ofstream(path("b.json")) << j.dump();
  // One process a side: inconclusive by default; accepted explicitly.
  Outcome o = nnbench("compare " + kFixture + " " + path("b.json") +
                      " --format json --out " + path("c.json"));
  ASSERT_EQ(o.code, 0) << o.output;
  for (const auto& x :
       nlohmann::json::parse(std::ifstream(path("c.json")))["cases"])
    EXPECT_EQ(x["verdict"], "inconclusive") << x["case"];
  o = nnbench("compare " + kFixture + " " + path("b.json") +
              " --min-repetitions 1 --format json --out " + path("c.json"));
  ASSERT_EQ(o.code, 0) << o.output;
  const auto c = nlohmann::json::parse(std::ifstream(path("c.json")));
  int checked = 0;
  for (const auto& x : c["cases"]) {
    if (x["case"] == slowed) {
      EXPECT_EQ(x["verdict"], "slower");
      EXPECT_NEAR(x["ratio"].get<double>(), 1.2, 1e-9);
      EXPECT_LE(x["ratio_ci95"]["lo"].get<double>(), 1.2);
      EXPECT_GE(x["ratio_ci95"]["hi"].get<double>(), 1.2);
    } else if (x["case"].get<std::string>().find(" training ") !=
               std::string::npos) {
      // A training run is one sample (its time) per run: too few to judge.
      EXPECT_EQ(x["verdict"], "inconclusive") << x["case"];
      EXPECT_DOUBLE_EQ(x["ratio"].get<double>(), 1.0);
    } else if (x["n_a"].get<int>() > 0) {
      EXPECT_EQ(x["verdict"], "no change") << x["case"];  // identical samples
      EXPECT_DOUBLE_EQ(x["ratio"].get<double>(), 1.0);
    }
    ++checked;
  }
  EXPECT_GE(checked, 13);
  EXPECT_TRUE(c["only_in_a"].empty());
  o = nnbench("compare " + kFixture + " " + path("b.json") +
              " --min-repetitions 1 --fail-on-regression 10");
  EXPECT_EQ(o.code, 1) << o.output;
  EXPECT_NE(o.output.find("regression: " + slowed), std::string::npos)
      << o.output;
  EXPECT_EQ(nnbench("compare " + kFixture + " " + path("b.json") +
                    " --min-repetitions 1 --fail-on-regression 25")
                .code,
            0);
}

}  // namespace
