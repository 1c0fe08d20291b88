// Trust at the edges (issue 18): every defect found by using nnbench as a
// new user and a fault hunter would, each with a check that failed before
// its fix. Suites here are small grids of the MNIST MLP with fast rules.
// Processes and interrupts (items 14 and 15) are in processes_test.cpp.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_util.h"

namespace {

using namespace nnbench_cli_test;
using json = nlohmann::json;

// The stored run ids of a store, oldest first.
std::vector<std::string> run_ids(const std::string& db) {
  const Outcome o = nnbench("results list --db " + db);
  std::vector<std::string> ids;
  std::istringstream in(o.output);
  std::string line;
  for (int i = 0; std::getline(in, line); ++i)
    if (i >= 2 && !line.empty()) ids.push_back(line.substr(0, line.find(' ')));
  return ids;
}

class Trust : public Cli {
 protected:
  std::string suite(const std::string& name, const std::string& grid) {
    write(name, "[grid]\n" + grid + "\n" + kFastRules);
    return path(name);
  }
  std::string db() const { return path("r.db"); }
  double checked_peak_fraction(const std::string& args, const std::string& out);
};

// 1. The md export of a batch x threads grid: one row per batch, one column
// per thread count, each cell the median of its own case, as the CSV
// export gives it per case.
TEST_F(Trust, MarkdownExportKeepsEveryVariedDimensionApart) {
  const std::string s = suite("grid.toml",
                              "models = [\"mnist-mlp\"]\nbatches = [8, 64]\n"
                              "threads = [1, 2]");
  ASSERT_EQ(nnbench("suite " + s + " --db " + db() + kNoContention).code, 0);
  const std::string id = run_ids(db()).at(0);
  // Expected cells from the CSV: median_seconds of each case, in ms.
  std::map<std::pair<std::string, std::string>, double> want;
  std::istringstream csv(
      nnbench("results export " + id + " --format csv --db " + db()).output);
  std::string line;
  std::getline(csv, line);  // header
  while (std::getline(csv, line)) {
    std::vector<std::string> f;
    std::stringstream ls(line);
    for (std::string x; std::getline(ls, x, ',');) f.push_back(x);
    ASSERT_GE(f.size(), 11u) << line;
    want[{f[5], f[6]}] = std::stod(f[10]) * 1e3;  // batch, threads
  }
  ASSERT_EQ(want.size(), 4u);
  const std::string md =
      nnbench("results export " + id + " --format md --db " + db()).output;
  EXPECT_NE(md.find("| model | backend | precision | mode | batch | 1 thread "
                    "| 2 threads |"),
            std::string::npos)
      << md;
  for (const char* batch : {"8", "64"}) {
    const std::string row =
        std::string("| mnist-mlp | torch | fp32 | train | ") + batch + " | ";
    const auto at = md.find(row);
    ASSERT_NE(at, std::string::npos) << md;
    std::istringstream cells(md.substr(at + row.size()));
    double t1 = 0, t2 = 0;
    std::string bar;
    cells >> t1 >> bar >> t2;
    const double w1 = want[{batch, "1"}], w2 = want[{batch, "2"}];
    EXPECT_NEAR(t1, w1, 0.0005) << md;
    EXPECT_NEAR(t2, w2, 0.0005) << md;
  }
}

// 2. Duplicates: an error naming the lines, not four cases stored as one.
TEST_F(Trust, DuplicateCasesAreErrorsNamingTheLines) {
  write("twice.toml", "[grid]\nmodels = [\"mnist-mlp\", \"mnist-mlp\"]\n");
  expect_usage_error(nnbench("suite " + path("twice.toml") + " --check"),
                     "twice.toml:2:24: 'models' lists 'mnist-mlp' twice "
                     "(also at line 2, column 11)");
  write("blocks.toml",
        "[grid]\nmodels = [\"mnist-mlp\"]\n[[model]]\nname = \"mnist-mlp\"\n"
        "batches = [8]\n[[model]]\nname = \"mnist-mlp\"\nbatches = [16]\n");
  expect_usage_error(nnbench("suite " + path("blocks.toml") + " --check"),
                     "blocks.toml:7:8: [[model]] 'mnist-mlp' is given twice "
                     "(first at line 4)");
  write("threads.toml", "[grid]\nmodels = [\"mnist-mlp\"]\nthreads = [1, 1]\n");
  expect_usage_error(nnbench("suite " + path("threads.toml") + " --check"),
                     "'threads' lists 1 twice");
}

// 11. A store that fails after a case has run (here by fault injection,
// as a read-only, full or damaged store would) never loses the case: the
// suite goes on, every record reaches --out, and it says so, exit 3.
// 3 and 4. A resume with another suite is refused and stores nothing; a
// resume of the same suite finishes the run, and --out and the table hold
// the whole run, not this invocation's cases.
TEST_F(Trust, ResumeChecksTheSuiteAndReportsTheWholeRun) {
  const std::string a =
      suite("a.toml", "models = [\"mnist-mlp\"]\nbatches = [8, 16]");
  const std::string b =
      suite("b.toml", "models = [\"mnist-mlp\"]\nbatches = [4, 32]");
  const Outcome half = shell(std::string("NNBENCH_FAULT_STORE=2 ") +
                             NNBENCH_EXE + " suite " + a + " --db " + db() +
                             kNoContention + " --out " + path("half.json"));
  EXPECT_EQ(half.code, 3) << half.output;
  EXPECT_NE(half.output.find("injected fault"), std::string::npos)
      << half.output;
  EXPECT_EQ(json::parse(slurp(path("half.json")))["results"].size(), 2u);
  const std::string id = run_ids(db()).at(0);
  const auto shown = [&] {
    return nnbench("results show " + id + " --db " + db()).output;
  };
  EXPECT_NE(shown().find("1 of 2 cases stored"), std::string::npos) << shown();
  expect_usage_error(
      nnbench("suite " + b + " --db " + db() + " --resume " + id),
      "--resume " + id + ": the run was started with suite a");
  EXPECT_NE(shown().find("1 of 2 cases stored"), std::string::npos) << shown();
  const Outcome same =
      nnbench("suite " + a + " --db " + db() + " --resume " + id +
              kNoContention + " --out " + path("all.json"));
  ASSERT_EQ(same.code, 0) << same.output;
  EXPECT_NE(same.output.find("1 already stored"), std::string::npos);
  EXPECT_NE(shown().find("2 of 2 cases stored"), std::string::npos) << shown();
  const auto all = json::parse(slurp(path("all.json")));
  ASSERT_EQ(all["results"].size(), 2u);
  std::set<int> batches;
  for (const auto& r : all["results"])
    batches.insert(r["requested"]["batch"].get<int>());
  EXPECT_EQ(batches, (std::set<int>{8, 16}));
  int rows = 0;  // the final table: both cases
  std::istringstream in(same.output);
  for (std::string l; std::getline(in, l);)
    if (l.rfind("mnist-mlp  torch", 0) == 0) ++rows;
  EXPECT_EQ(rows, 2) << same.output;
}

// 6. More threads than CPUs is recorded invalid; a maximum that ends the
// measurement before the minimums is a validity reason; rules that cannot
// be met are usage errors.
TEST_F(Trust, UnmetMinimumsAndOversubscriptionAreInvalid) {
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  Outcome o = nnbench(
      "run --model mnist-mlp --warmup-iters 1 --warmup-time 0 "
      "--min-iters 3 --min-time 0 --threads " +
      std::to_string(4 * cpus) + kNoContention + " --out " + path("over.json"));
  EXPECT_EQ(o.code, 1) << o.output;
  auto r = json::parse(slurp(path("over.json")))["results"][0];
  ASSERT_FALSE(r["validity"]["valid"].get<bool>()) << r["validity"];
  EXPECT_EQ(r["validity"]["reasons"][0]["reason"], "oversubscribed");
  o = nnbench(
      "run --model mnist-mlp --warmup-iters 1 --warmup-time 0 "
      "--min-iters 1000000 --max-iters 1000000 --min-time 0 "
      "--max-time 0.05 --threads 1" +
      std::string(kNoContention) + " --out " + path("short.json"));
  EXPECT_EQ(o.code, 1) << o.output;
  r = json::parse(slurp(path("short.json")))["results"][0];
  ASSERT_FALSE(r["validity"]["valid"].get<bool>());
  bool early = false;
  for (const auto& x : r["validity"]["reasons"])
    if (x["reason"] == "stopped_early") {
      early = true;
      EXPECT_NE(x["detail"].get<std::string>().find("before 1000000 "
                                                    "iterations"),
                std::string::npos)
          << x["detail"];
    }
  EXPECT_TRUE(early) << r["validity"];
  expect_usage_error(nnbench("run --model mnist-mlp --max-time 0.001"),
                     "[stop] max_seconds (--max-time) 0.001 is below "
                     "min_seconds (--min-time) 2");
  expect_usage_error(nnbench("run --model mnist-mlp --min-iters 20 "
                             "--max-iters 5"),
                     "max_iterations (--max-iters) 5 is below");
  write("neg.toml",
        "[grid]\nmodels = [\"mnist-mlp\"]\n[stop]\n"
        "min_seconds = -1\n");
  expect_usage_error(nnbench("suite " + path("neg.toml") + " --check"),
                     "neg.toml:3:1: [stop] min_seconds (--min-time) -1 must be "
                     ">= 0");
  write("max.toml",
        "[grid]\nmodels = [\"mnist-mlp\"]\n[stop]\n"
        "max_seconds = 0.5\n");
  expect_usage_error(nnbench("suite " + path("max.toml") + " --check"),
                     "max.toml:3:1: [stop] max_seconds (--max-time) 0.5 is "
                     "below min_seconds (--min-time) 2");
}

// 9. --check validates every name against the registries and every number
// against its range, naming the line of the value.
TEST_F(Trust, CheckNamesEveryUnknownNameAndBadNumberAtItsLine) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"models = [\"mnist-mlp\", \"resnet-9000\"]",
       "s.toml:2:24: unknown model 'resnet-9000'"},
      {"models = [\"mnist-mlp\"]\nbackends = [\"caffe2\"]",
       "s.toml:3:13: unknown backend 'caffe2'; known: reference"},
      {"models = [\"mnist-mlp\"]\nprecisions = [\"fp64\"]",
       "s.toml:3:15: unknown precision 'fp64'"},
      {"models = [\"mnist-mlp\"]\nthreads = [-1]",
       "s.toml:3:12: threads must be between 0 (every CPU) and 1024"},
      {"models = [\"mnist-mlp\"]\nthreads = [100000000000]",
       "s.toml:3:12: threads must be between 0"},
      {"models = [\"mnist-mlp\"]\nbatches = [8,\n  0]",
       "s.toml:4:3: batches must be > 0"},
  };
  for (const auto& [grid, want] : bad) {
    write("s.toml", "[grid]\n" + grid + "\n");
    expect_usage_error(nnbench("suite " + path("s.toml") + " --check"), want);
  }
  write("s.toml", "scenario = \"bogus\"\n[grid]\nmodels = [\"mnist-mlp\"]\n");
  expect_usage_error(nnbench("suite " + path("s.toml") + " --check"),
                     "s.toml:1:12: unknown scenario 'bogus'");
  write("s.toml", "scenario = \"training\"\n[grid]\ntasks = [\"nope\"]\n");
  expect_usage_error(nnbench("suite " + path("s.toml") + " --check"),
                     "s.toml:3:10: unknown task 'nope'");
  write("s.toml",
        "[grid]\nmodels = [\"mnist-mlp\"]\n[[exclude]]\n"
        "model = \"mnist-mpl\"\n");
  expect_usage_error(nnbench("suite " + path("s.toml") + " --check"),
                     "s.toml:4:9: unknown model 'mnist-mpl'");
  // And a suite that runs: an unknown backend fails before any case runs.
  write("s.toml", "[grid]\nmodels = [\"mnist-mlp\"]\nbackends = [\"x\"]\n");
  expect_usage_error(nnbench("suite " + path("s.toml") + " --db " + db()),
                     "s.toml:3:13: unknown backend 'x'");
  EXPECT_FALSE(fs::exists(db()));
}

// 10. A global batch that does not split over the ranks is a usage error
// before any rank starts, and nothing is written.
TEST_F(Trust, BatchThatDoesNotSplitOverTheRanksIsAUsageError) {
  for (const char* engine : {"gloo", "mpi"}) {
    const Outcome o = nnbench(
        std::string("run --model mnist-mlp --distributed ") + engine +
        " --processes 3 --batch 128 --threads 1 --out " + path("dp.json"));
    expect_usage_error(o, "--batch 128 does not split over 3 ranks");
    EXPECT_EQ(o.output.find("mpirun"), std::string::npos) << o.output;
    EXPECT_FALSE(fs::exists(path("dp.json")));
  }
  write("dp.toml",
        "[grid]\nmodels = [\"mnist-mlp\"]\nbatches = [64, 100]\n"
        "processes = [1, 3]\n[distributed]\nengine = \"gloo\"\n");
  expect_usage_error(nnbench("suite " + path("dp.toml") + " --check"),
                     "dp.toml:3:12: batch 64 does not split over 3 processes");
}

// 11 and 13. A damaged store is one clear message and exit 3 from every
// command that reads it, never std::terminate (exit 134); a store that is
// not there is not created by the commands that only read.
TEST_F(Trust, DamagedOrMissingStoreIsAMessageNotACrash) {
  const std::string s = suite("s.toml",
                              "models = [\"mnist-mlp\"]\n"
                              "batches = [2, 4, 8, 16]");
  ASSERT_EQ(nnbench("suite " + s + " --db " + db() + kNoContention).code, 0);
  const std::string id = run_ids(db()).at(0);
  {
    // Garbage over every page but the first (the schema): the records'
    // pages are damaged, the file still opens.
    std::fstream f(db(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(0, std::ios::end);
    const std::streamoff size = f.tellg();
    ASSERT_GT(size, 3 * 4096) << "the store is too small to damage a page";
    f.seekp(4096);
    f << std::string(static_cast<size_t>(size - 4096), '\x5a');
  }
  for (const std::string& cmd : std::vector<std::string>{
           "results list", "results show " + id, "results export " + id,
           "report " + id + " -o " + path("r.html"),
           "suite " + s + kNoContention}) {
    const Outcome o = nnbench(cmd + " --db " + db());
    EXPECT_EQ(o.code, 3) << cmd << "\n" << o.output;
    EXPECT_NE(o.output.find(db() + ": "), std::string::npos) << o.output;
    EXPECT_EQ(o.output.find("terminate called"), std::string::npos) << o.output;
  }
  EXPECT_FALSE(fs::exists(path("r.html")));
  const std::string none = path("no/such/new.db");
  expect_usage_error(nnbench("results --db " + none + " list"),
                     none + ": no results store here");
  EXPECT_FALSE(fs::exists(path("no")));
}

// 16. Two sides with no case in common compare nothing: a usage error, also
// under --fail-on-regression, unless asked for.
TEST_F(Trust, CompareWithNothingInCommonIsAnError) {
  const std::string fixture =
      std::string(NNBENCH_SOURCE_DIR) + "/tests/data/report_fixture.json";
  auto j = json::parse(slurp(fixture));
  for (auto& r : j["results"]) {
    r["model"]["name"] = "another-model";
    if (r["kind"] == "training") r["task"] = "another-task";
  }
  std::ofstream(path("other.json")) << j.dump();
  expect_usage_error(nnbench("compare " + fixture + " " + path("other.json") +
                             " --fail-on-regression 5"),
                     "have no case in common");
  EXPECT_EQ(nnbench("compare " + fixture + " " + path("other.json") +
                    " --allow-disjoint")
                .code,
            0);
}

// 18 and 19. A parent's options after the subcommand; unknown commands
// named; number errors as sentences; --out as a folder refused before the
// run; the latency scenario takes no batch or training mode.
TEST_F(Trust, CommandLineConventions) {
  const std::string s = suite("s.toml", "models = [\"mnist-mlp\"]");
  ASSERT_EQ(nnbench("suite " + s + " --db " + db() + kNoContention).code, 0);
  const Outcome after = nnbench("results list --db " + db());
  EXPECT_EQ(after.code, 0) << after.output;
  EXPECT_EQ(after.output, nnbench("results --db " + db() + " list").output);
  expect_usage_error(nnbench("frob"), "unknown command 'frob'");
  expect_usage_error(nnbench("results frob --db " + db()),
                     "unknown command 'frob' for nnbench results");
  expect_usage_error(nnbench("run --model mnist-mlp --batch 0"),
                     "--batch: must be > 0, not 0");
  expect_usage_error(nnbench("run --model mnist-mlp --out " + dir_.string()),
                     "it is a folder");
  expect_usage_error(
      nnbench("run --model mnist-mlp --scenario latency --batch 64 --mode "
              "train"),
      "--scenario latency measures batch-1 inference, not --batch 64 and "
      "--mode train");
  expect_usage_error(nnbench("train --task fashion-mnist-mlp --latency "
                             "--latency-items 0"),
                     "--latency-items: must be > 0");
  expect_usage_error(nnbench("train --task fashion-mnist-mlp --latency "
                             "--latency-items -5"),
                     "--latency-items");
}

// 19. An installed nnbench reads the suites and prices installed beside it,
// never the checkout it was built from.
TEST_F(Trust, InstalledBinaryReadsItsOwnShareFolder) {
  const fs::path root = dir_ / "prefix";
  fs::create_directories(root / "bin");
  fs::create_directories(root / "share" / "nnbench" / "suites");
  fs::copy_file(NNBENCH_EXE, root / "bin" / "nnbench");
  std::ofstream(root / "share" / "nnbench" / "suites" / "mine.toml")
      << "description = \"only here\"\n[grid]\nmodels = [\"mnist-mlp\"]\n";
  std::ofstream(root / "share" / "nnbench" / "prices.json") << "{}";
  const std::string exe = (root / "bin" / "nnbench").string();
  const Outcome list = shell(exe + " suite --list");
  ASSERT_EQ(list.code, 0) << list.output;
  EXPECT_NE(list.output.find("mine"), std::string::npos) << list.output;
  EXPECT_EQ(list.output.find("quick"), std::string::npos) << list.output;
  const Outcome help = shell(exe + " train --help");
  EXPECT_NE(
      help.output.find((root / "share" / "nnbench" / "prices.json").string()),
      std::string::npos)
      << help.output;
  EXPECT_EQ(help.output.find(NNBENCH_SOURCE_DIR), std::string::npos)
      << help.output;
}

// One `nnbench run` with `args`: its peak is the best GEMM of its precision,
// within the CPU's ceiling, and its fraction is of that peak. Returns the
// fraction (0 after a failure, recorded above).
double Trust::checked_peak_fraction(const std::string& args,
                                    const std::string& out) {
  const Outcome o = nnbench("run --model mnist-cnn --batch 32 " + args + kFast +
                            kNoContention + " --out " + out);
  EXPECT_EQ(o.code, 0) << args << "\n" << o.output;
  if (o.code != 0) return 0;  // failed above; no file of its own to read
  const auto f = json::parse(slurp(out));
  const auto& peak = f["peak"];
  const auto& r = f["results"][0];
  const std::string precision = r["requested"]["precision"];
  const double practical = peak[precision == "bf16" ? "bf16_gflops" : "gflops"];
  EXPECT_GT(practical, 0) << peak;
  if (practical <= 0) return 0;
  for (const auto& g : peak["gemms"]) {
    if (g["precision"] != precision) continue;
    EXPECT_GE(practical, g["gflops"].get<double>()) << g;
  }
  const double ceiling =
      peak["theoretical"][precision == "bf16" ? "bf16_gflops" : "fp32_gflops"];
  // The clock is itself measured: 10 % for a preempted measurement.
  EXPECT_LE(practical, 1.1 * ceiling) << peak;
  const auto& t = r["throughput"];
  EXPECT_DOUBLE_EQ(t["peak_gflops"].get<double>(), practical) << args;
  EXPECT_NEAR(t["peak_fraction"].get<double>(),
              t["gflops"].get<double>() / practical, 1e-12);
  return t["peak_fraction"].get<double>();
}

// 7. A run is a fraction of the practical peak of its own precision: the
// best GEMM measured for it over OpenBLAS and oneDNN's matmul, never above
// the CPU's theoretical ceiling, and no run above it (within the noise of
// two measurements).
TEST_F(Trust, PeakFractionIsOfTheBestGemmOfItsPrecision) {
  std::vector<std::string> runs = {"--backend torch", "--backend onednn"};
  ASSERT_EQ(shell(std::string("(") + NNBENCH_EXE +
                  " env --json --no-peak 2> /dev/null) > " + path("env.json"))
                .code,
            0);
  const auto env = json::parse(slurp(path("env.json")));
  // Backends by name (an object): reading "name" inside one read past the
  // end of a const object, which crashed this test.
  const auto& onednn = env.at("environment").at("backends").at("onednn");
  for (const auto& p : onednn.at("precisions"))
    if (p == "bf16") runs.push_back("--backend onednn --precision bf16");
  for (const auto& args : runs) {
    // The peak and the run are two measurements on a shared machine whose
    // speed moves by tens of percent for minutes at a time (a CI run on
    // 2026-11-26 had oneDNN's MNIST CNN at 1.036 of its own GEMM peak; a
    // ctest -j2 run on 2026-11-27, beside another test, 1.464): up to three
    // runs, each checked whole, the last one's fraction held to 10 %.
    double fraction = 0;
    for (int attempt = 1; attempt <= 3; ++attempt) {
      fraction = checked_peak_fraction(args, path("p.json"));
      if (fraction <= 1.1) break;
    }
    EXPECT_LE(fraction, 1.1) << args;
  }
}

}  // namespace
