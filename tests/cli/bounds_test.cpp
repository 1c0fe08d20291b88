// Every count, size and thread number a user can pass has an upper bound,
// stated in --help and checked before anything is allocated or started
// (docs/limits.md); options a run would ignore and inputs it cannot read
// are usage errors before it starts (issue 29, items 2, 3, 7 and 13).
//
// A regression must fail these tests fast, not eat the machine: every
// command that could start work runs under a timeout and an address-space
// limit (kGuard).
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli_util.h"

namespace nnbench_cli_test {
namespace {

using nlohmann::json;

// 20 s and 4 GiB of address space: what a refused command never needs.
const std::string kGuard = "ulimit -v 4194304; timeout -s KILL 20 ";

Outcome guarded(const std::string& args) {
  return shell(kGuard + NNBENCH_EXE + " " + args);
}

// 2. --threads 65536 crashed libgomp (exit 139) and 20000 took 45 s to die:
// every command that takes a thread count refuses one above 1024 before
// it starts a thread, and says so in --help.
TEST_F(Cli, ThreadCountsAboveTheBoundAreRefusedEverywhere) {
  const std::string fast = kFast;
  for (const std::string args :
       {"run --model mnist-mlp --backend reference" + fast,
        std::string("infer --model mnist-mlp --backend reference "
                    "--min-duration-s 0 --min-queries 8"),
        std::string("train --task fashion-mnist-mlp --backend reference "
                    "--epochs 1"),
        std::string("verify --model mnist-mlp"),
        std::string("env --no-peak")}) {
    // The later --threads wins: the bound is checked on it.
    expect_usage_error(guarded(args + " --threads 65536"),
                       "--threads: must be at most 1024 (the bound), not "
                       "65536");
  }
  expect_usage_error(guarded("run --model mnist-mlp --backend reference" +
                             fast + " --threads 1025"),
                     "--threads: must be at most 1024 (the bound), not 1025");
  write("t.toml", "[grid]\nmodels = [\"mnist-mlp\"]\nthreads = [1025]\n");
  expect_usage_error(nnbench("suite " + path("t.toml") + " --check"),
                     "t.toml:3:12: threads must be between 0 (every CPU) "
                     "and 1024");
  write("c.toml",
        "scenario = \"training\"\n[grid]\ntasks = [\"fashion-mnist-mlp\"]\n"
        "[cost]\ninstance = \"gce-n1-highcpu-64-preemptible\"\n"
        "baseline_threads = 2048\n");
  expect_usage_error(nnbench("suite " + path("c.toml") + " --check"),
                     "baseline_threads must be at most 1024 (the bound), "
                     "not 2048");
}

// The class: every number option of every command shows its range in
// --help (CLI11 prints it after the type: INT:[0, 1024], FLOAT in [0 - 1]),
// or, for seeds, the 64-bit range in words.
TEST_F(Cli, EveryNumberOptionStatesItsBoundInHelp) {
  const std::vector<std::string> commands = {
      "run", "infer",   "train",  "suite",  "verify",
      "env", "compare", "models", "report", "results"};
  // Side by side: each start of nnbench takes most of a second.
  std::string all;
  for (const auto& cmd : commands)
    all += std::string(NNBENCH_EXE) + " " + cmd + " --help > " + path(cmd) +
           " 2>&1 & ";
  ASSERT_EQ(shell(all + "wait").code, 0);
  for (const auto& cmd : commands) {
    const Outcome help{0, slurp(path(cmd))};
    EXPECT_NE(help.output.find("Usage:"), std::string::npos) << cmd;
    if (cmd != "compare" && cmd != "models" && cmd != "report" &&
        cmd != "results")
      EXPECT_NE(help.output.find("--threads INT:[0, 1024]"), std::string::npos)
          << cmd << "\n"
          << help.output;
    std::istringstream lines(help.output);
    for (std::string line; std::getline(lines, line);) {
      const auto at = line.find_first_not_of(' ');
      if (at == std::string::npos || line.compare(at, 2, "--") != 0) continue;
      const bool number = line.find(" INT") != std::string::npos ||
                          line.find(" UINT") != std::string::npos ||
                          line.find(" FLOAT") != std::string::npos ||
                          line.find(" NUMBER") != std::string::npos;
      if (!number) continue;
      const bool bounded = line.find(":[") != std::string::npos ||
                           line.find(":(") != std::string::npos ||
                           line.find(" in [") != std::string::npos ||
                           line.find("2^64") != std::string::npos;
      // A seed's description may wrap: look at the option's whole entry.
      const auto entry = help.output.find(line);
      const std::string rest = help.output.substr(entry, 400);
      EXPECT_TRUE(bounded || rest.find("2^64-1") != std::string::npos)
          << cmd << ": " << line;
    }
  }
  // LoadGen's settings are options of infer, each naming its bound.
  const Outcome infer{0, slurp(path("infer"))};
  for (const char* opt :
       {"--target-qps", "--min-queries", "--max-queries",
        "--performance-samples", "--calibration-samples", "--min-duration-s",
        "--samples-per-query", "--instances"}) {
    const auto at = infer.output.find(opt);
    ASSERT_NE(at, std::string::npos) << opt;
    EXPECT_NE(infer.output.substr(at, 300).find("at most"), std::string::npos)
        << opt << ": " << infer.output.substr(at, 300);
  }
}

// 3 and 12: counts above their bound are refused before anything is
// allocated, saying so (10^18 queries was "not a whole number"); 10^308
// queries a second was accepted.
TEST_F(Cli, InferCountsAboveTheirBoundsAreUsageErrors) {
  const std::string base =
      "infer --model mnist-mlp --backend reference --threads 1 "
      "--min-duration-s 0 --min-queries 8 --max-queries 8";
  expect_usage_error(guarded(base + " --performance-samples 100000000"),
                     "--performance-samples: setting performance_samples = "
                     "'100000000': must be at most 1000000 (the bound)");
  expect_usage_error(guarded(base + " --precision int8 --calibration-samples "
                                    "100000000"),
                     "must be at most 1000000 (the bound)");
  expect_usage_error(
      guarded("infer --model mnist-mlp --backend reference --threads 1 "
              "--min-duration-s 0 --min-queries 1000000000000000000"),
      "--min-queries: setting min_queries = '1000000000000000000': must be "
      "at most 10000000 (the bound)");
  expect_usage_error(
      guarded("infer --model mnist-mlp --backend reference --threads 1 "
              "--scenario server --min-duration-s 0 --min-queries 1 "
              "--max-queries 1 --target-qps 1e308"),
      "--target-qps: setting target_qps = '1e308': must be at most 10000000");
  expect_usage_error(
      guarded("infer --model mnist-mlp --backend reference --threads 1 "
              "--min-queries 8 --min-duration-s 1e999"),
      "--min-duration-s: setting min_duration_s = '1e999': must be at most "
      "604800 (the bound)");
  expect_usage_error(guarded(base + " --batch 65537 --scenario offline"),
                     "--batch: must be at most 65536 (the bound), not 65537");
}

// 3: infer has run's memory estimate. 10^6 samples of ResNet-50's 3x224x224
// input are 602 GB: refused with state oom, "estimate", before one sample
// is made (a regression is stopped by kGuard's 4 GiB, failing the test).
TEST_F(Cli, InferRefusesARunEstimatedNotToFitInMemory) {
  const Outcome o = guarded(
      "infer --model resnet-50 --backend reference --threads 1 "
      "--min-duration-s 0 --min-queries 1 --performance-samples 1000000 "
      "--out " +
      path("r.json"));
  EXPECT_EQ(o.code, 1) << o.output;
  EXPECT_NE(o.output.find("oom: estimated"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("(disable with --no-memory-check)"),
            std::string::npos)
      << o.output;
  const json r = json::parse(slurp(path("r.json")))["results"][0];
  EXPECT_EQ(r["state"], "oom");
  EXPECT_EQ(r["oom_source"], "estimate");
  // --no-memory-check is infer's too (here it only has to be accepted).
  EXPECT_NE(nnbench("infer --help").output.find("--no-memory-check"),
            std::string::npos);
}

// 7: with too few queries LoadGen has no early-stopping estimate; the
// record stores null and the text shows "-" (was 0.0 and "0 ms").
TEST_F(Cli, AMissingEarlyStoppingEstimateIsAbsentNotZero) {
  for (const char* scenario : {"single-stream", "multi-stream"}) {
    const std::string out = path(std::string(scenario) + ".json");
    const Outcome o = guarded(
        std::string("infer --model mnist-mlp --backend reference --threads "
                    "1 --min-duration-s 0 --min-queries 8 --max-queries 8 "
                    "--on-contention warn --scenario ") +
        scenario + " --out " + out);
    // 8 queries are too few for LoadGen's early stopping: INVALID.
    EXPECT_EQ(o.code, 1) << o.output;
    EXPECT_NE(o.output.find("(early-stopping estimate -)"), std::string::npos)
        << o.output;
    const json r = json::parse(slurp(out))["results"][0];
    ASSERT_EQ(r["state"], "ok") << r.dump(2);
    EXPECT_TRUE(r["figures"]["early_stopping_latency_seconds"].is_null())
        << r["figures"].dump(2);
    EXPECT_FALSE(r["figures"]["percentile_latency_seconds"].is_null());
  }
}

// 13: inputs the run cannot read are usage errors before it starts, naming
// the option (were invalid_args, exit 1).
TEST_F(Cli, InferInputsItCannotReadAreUsageErrors) {
  const std::string acc =
      "infer --model mnist-mlp --backend reference --threads 1 --accuracy ";
  expect_usage_error(guarded(acc + "--data garbage"),
                     "--data garbage: unknown dataset 'garbage'");
  expect_usage_error(
      guarded(acc + "--data mnist --data-dir " + path("nowhere")),
      "--data-dir " + path("nowhere") + " does not exist");
  expect_usage_error(guarded(acc + "--data mnist"),
                     "--data mnist: dataset 'mnist' needs a path");
  write("w.bin", "not a tensor file at all");
  expect_usage_error(guarded("infer --model mnist-mlp --backend reference "
                             "--threads 1 --min-duration-s 0 --min-queries 8 "
                             "--weights " +
                             path("w.bin")),
                     "--weights " + path("w.bin") + ": ");
}

// 13: options the run would ignore are refused naming both.
TEST_F(Cli, OptionsARunWouldIgnoreAreRefusedNamingBoth) {
  const std::string base =
      "infer --model mnist-mlp --backend reference --threads 1 "
      "--min-duration-s 0 --min-queries 8 ";
  expect_usage_error(guarded(base + "--scenario offline --target-qps 50"),
                     "target_qps (--target-qps) is read by the server "
                     "scenario only, not by offline");
  expect_usage_error(
      guarded(base + "--samples-per-query 8 --scenario single-stream"),
      "samples_per_query (--samples-per-query) is read by the multi-stream "
      "scenario only, not by single-stream");
  expect_usage_error(guarded(base + "--batch 8"),
                     "--batch 8 is read by the offline scenario only, not by "
                     "single-stream");
  expect_usage_error(guarded(base + "--data-dir " + path("d")),
                     "data_dir (--data-dir) is read in accuracy mode only");
  expect_usage_error(guarded("models --export mnist-mlp --export-onnx "
                             "mnist-mlp --out " +
                             path("m")),
                     "--export excludes --export-onnx");
  EXPECT_FALSE(fs::exists(path("m")));
}

// Run, suite files and the other commands: iterations, seconds, batches,
// repetitions above their bounds.
TEST_F(Cli, RunAndSuiteBoundsAreCheckedBeforeAnythingRuns) {
  const std::string run = "run --model mnist-mlp --backend reference ";
  expect_usage_error(guarded(run + "--batch 65537"),
                     "--batch: must be at most 65536 (the bound)");
  expect_usage_error(guarded(run + "--min-time 1e9"),
                     "--min-time: must be at most 604800 (the bound)");
  expect_usage_error(guarded(run + "--max-iters 100000000"),
                     "--max-iters: must be at most 10000000 (the bound)");
  expect_usage_error(guarded(run + "--lr 1e300"), "--lr: must be at most");
  expect_usage_error(
      guarded("train --task fashion-mnist-mlp --seeds 100000 --epochs 1"),
      "--seeds: must be at most 1000 (the bound)");
  write("b.toml", "[grid]\nmodels = [\"mnist-mlp\"]\nbatches = [100000]\n");
  expect_usage_error(nnbench("suite " + path("b.toml") + " --check"),
                     "b.toml:3:12: batches must be at most 65536 (the bound), "
                     "not 100000");
  write("s.toml",
        "[grid]\nmodels = [\"mnist-mlp\"]\n[stop]\nmin_seconds = 1e12\n"
        "max_seconds = 1e13\n");
  expect_usage_error(nnbench("suite " + path("s.toml") + " --check"),
                     "[stop] min_seconds (--min-time) 1e+12 must be at most "
                     "604800 (the bound)");
  write("r.toml", "[grid]\nmodels = [\"mnist-mlp\"]\nrepetitions = 5000\n");
  expect_usage_error(nnbench("suite " + path("r.toml") + " --check"),
                     "repetitions must be at most 1000 (the bound), not 5000");
  write("q.toml",
        "scenario = \"server\"\n[grid]\nmodels = [\"mnist-mlp\"]\n"
        "[settings]\ntarget_qps = 1e308\n");
  expect_usage_error(nnbench("suite " + path("q.toml") + " --check"),
                     "target_qps = '");
  // --no-store: a regression that runs the suite writes no store.
  write("ok.toml", "[grid]\nmodels = [\"mnist-mlp\"]\n");
  expect_usage_error(guarded("suite " + path("ok.toml") +
                             " --no-store --check --repetitions 1000000"),
                     "--repetitions: must be at most 1000");
}

// Also seen: a suite whose data sets are missing said so 36 times, one
// failed case each; now once, before the first case (and with --check).
TEST_F(Cli, ASuitesMissingDataSetIsAUsageErrorBeforeTheFirstCase) {
  write("imdb.toml",
        "scenario = \"training\"\n[grid]\ntasks = [\"keras-imdb-fasttext\"]\n"
        "backends = [\"reference\"]\n");
  expect_usage_error(nnbench("suite " + path("imdb.toml") + " --check"),
                     "dataset 'imdb' needs a path");
  const Outcome o = guarded("suite " + path("imdb.toml") + " --no-store");
  expect_usage_error(o, "give it with [settings] data = PATH");
  EXPECT_EQ(o.output.find("invalid_args"), std::string::npos) << o.output;
  write("gone.toml",
        "scenario = \"training\"\n[grid]\ntasks = [\"keras-imdb-fasttext\"]\n"
        "backends = [\"reference\"]\n[settings]\ndata = \"" +
            path("nowhere") + "\"\n");
  expect_usage_error(nnbench("suite " + path("gone.toml") + " --check"),
                     path("nowhere") + " does not exist");
  // The shipped study that showed it.
  expect_usage_error(nnbench("suite cpu-vs-gpu --check"), "needs a path");
}

}  // namespace
}  // namespace nnbench_cli_test
