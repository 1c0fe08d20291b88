// Results files round-trip through JSON with every field intact.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <new>

#include "backend/backend.h"
#include "bench/statistics.h"
#include "results/result.h"
#include "results/training.h"
#include "util/error.h"

namespace nnbench::results {
namespace {

RunResult sample_result() {
  RunResult r;
  r.model = "mnist-mlp";
  r.model_hash = "sha256:abc";
  r.backend = "torch";
  r.backend_version = "LibTorch 1.13.0";
  r.cost = {669706, 1.3e6, 3.9e6, 1000};
  r.requested.batch = 128;
  r.requested.mode = backend::Mode::kInfer;
  r.requested.options.threads = 2;
  results::set_max_relative_ci(r.requested.stop, 0.01);
  r.effective.threads = 2;
  r.effective.device = "cpu";
  r.effective.extras["layout"] = "NCHW";
  r.compile_seconds = 0.5;
  r.warmup_iterations = 7;
  r.warmup_seconds = 1.01;
  r.samples = {0.003, 0.0031, 0.0029};
  r.stats = bench::summarize(r.samples);
  r.samples_per_second = 128 / r.stats.median;
  r.first_loss = r.last_loss = std::nan("");
  return r;
}

TEST(Results, RunResultRoundTrips) {
  const RunResult r = sample_result();
  const auto j = to_json(r);
  const RunResult back = run_result_from_json(j);
  EXPECT_EQ(to_json(back), j);
  EXPECT_EQ(back.samples, r.samples);
  EXPECT_EQ(back.requested.mode, backend::Mode::kInfer);
  EXPECT_TRUE(std::isnan(back.last_loss));
  EXPECT_TRUE(j["loss"]["last"].is_null());
}

TEST(Results, AFractionOfNoMeasuredPeakIsNullNotZero) {
  RunResult r = sample_result();  // no peak measured (a run on a GPU)
  auto j = to_json(r);
  EXPECT_TRUE(j["throughput"]["peak_gflops"].is_null());
  EXPECT_TRUE(j["throughput"]["peak_fraction"].is_null());
  EXPECT_TRUE(j["throughput"]["theoretical_fraction"].is_null());
  EXPECT_EQ(to_json(run_result_from_json(j)), j);
  r.gflops = 30;
  r.peak_gflops = 120;
  r.peak_fraction = 0.25;
  r.theoretical_fraction = 0.2;
  j = to_json(r);
  EXPECT_EQ(j["throughput"]["peak_gflops"], 120.0);
  EXPECT_EQ(j["throughput"]["peak_fraction"], 0.25);
  EXPECT_EQ(j["throughput"]["theoretical_fraction"], 0.2);
  EXPECT_EQ(run_result_from_json(j).peak_fraction, 0.25);
  // Files written before: 0 where nothing was measured, read as such.
  j["throughput"]["peak_fraction"] = 0.0;
  j["throughput"]["peak_gflops"] = 0.0;
  EXPECT_EQ(run_result_from_json(j).peak_gflops, 0.0);
}

TEST(Results, ReportRoundTripsThroughText) {
  Report rep;
  rep.environment = {{"cpu", {{"name", "x"}}}};
  rep.peak = {{"gflops", 300.0}};
  rep.results = {sample_result(), sample_result()};
  rep.results[1].state = State::kOom;
  rep.results[1].message = "estimated 40 GiB";
  rep.created_utc = utc_now_iso8601();
  const auto text = to_json(rep).dump();
  const Report back = report_from_json(nlohmann::json::parse(text));
  EXPECT_EQ(to_json(back), to_json(rep));
  EXPECT_EQ(back.results[1].state, State::kOom);
}

TEST(Results, StatesHaveStableNames) {
  EXPECT_EQ(state_name(State::kUnimplemented), "unimplemented");
  EXPECT_EQ(state_from_name("invalid_args"), State::kInvalidArgs);
  EXPECT_THROW(state_from_name("crashed?"), Error);
}

TEST(Results, NewerAndOlderSchemasAreRejectedNamingTheVersion) {
  Report rep;
  auto j = to_json(rep);
  for (int v : {kSchemaVersion + 1, 1}) {
    j["schema_version"] = v;
    try {
      report_from_json(j);
      ADD_FAILURE() << "version " << v << " was read";
    } catch (const Error& e) {
      EXPECT_NE(
          std::string(e.what()).find("schema_version " + std::to_string(v)),
          std::string::npos)
          << e.what();
    }
  }
}

// A file written by nnbench at schema 2 (commit 98e171b, `nnbench run
// --verify ... --out`), kept as it was written.
TEST(Results, SchemaTwoFileStillLoads) {
  std::ifstream in(std::string(NNBENCH_SOURCE_DIR) +
                   "/tests/data/results_schema2.json");
  ASSERT_TRUE(in) << "fixture missing";
  const nlohmann::json raw = nlohmann::json::parse(in);
  ASSERT_EQ(raw["schema_version"], 2);
  const Report r = report_from_json(raw);
  ASSERT_EQ(r.results.size(), 1u);
  const RunResult& x = r.results[0];
  EXPECT_EQ(x.state, State::kOk);
  EXPECT_EQ(x.backend, "reference");
  EXPECT_EQ(x.samples.size(), raw["results"][0]["samples_seconds"].size());
  EXPECT_EQ(x.stats.n, 3);
  // Schema 2 dropped the verification it was given: none to read back.
  EXPECT_FALSE(x.verification);
  // The environment's CPU fields moved into `cpu`, values unchanged.
  EXPECT_EQ(r.environment["cpu"]["name"], raw["environment"]["cpu_model"]);
  EXPECT_EQ(r.environment["cpu"]["isa"], raw["environment"]["isa"]);
  EXPECT_EQ(r.environment["cpu"]["microarchitecture_source"],
            "not recorded (schema 2)");
  EXPECT_FALSE(r.environment.contains("cpu_model"));
  // Written again, it is a file of this schema that reads back the same.
  const nlohmann::json again = to_json(r);
  EXPECT_EQ(again["schema_version"], 4);
  EXPECT_EQ(again["results"][0]["kind"], "throughput");
  EXPECT_EQ(to_json(report_from_json(again)), again);
}

TEST(Results, VerificationIsWrittenAndReadBack) {
  RunResult r = sample_result();
  Verification v;
  v.model = "mnist-mlp";
  v.oracle = "reference";
  v.candidate = "torch";
  v.precision = "fp32";
  v.batch = 4;
  v.verdict = Verdict::kFail;
  v.message = "loss 3e-3 > 1e-4";
  v.checks = {{"loss", 3e-3, 1e-4, false},
              {"output (infer)", std::nan(""), 1e-4, false}};
  r.verification = v;
  const auto j = to_json(r);
  EXPECT_EQ(j["verification"]["verdict"], "FAIL");
  EXPECT_TRUE(j["verification"]["checks"][1]["max_relative_error"].is_null());
  const RunResult back = run_result_from_json(j);
  ASSERT_TRUE(back.verification);
  EXPECT_EQ(back.verification->verdict, Verdict::kFail);
  EXPECT_EQ(back.verification->checks[0].error, 3e-3);
  EXPECT_EQ(to_json(back), j);
  EXPECT_TRUE(to_json(sample_result())["verification"].is_null());
  // Below fp32: the generation's agreement, its KL null without logits.
  EXPECT_TRUE(j["verification"]["generation_agreement"].is_null());
  v.generation_agreement = Agreement{16, 0.9375, std::nan("")};
  r.verification = v;
  const auto g = to_json(r)["verification"]["generation_agreement"];
  EXPECT_EQ(g["rows"], 16);
  EXPECT_EQ(g["top1"], 0.9375);
  EXPECT_TRUE(g["kl_nats"].is_null());
  const RunResult again = run_result_from_json(to_json(r));
  ASSERT_TRUE(again.verification->generation_agreement);
  EXPECT_EQ(again.verification->generation_agreement->rows, 16);
  EXPECT_TRUE(std::isnan(again.verification->generation_agreement->kl));
}

TEST(Results, TrainRunRoundTripsWithTheSharedFields) {
  TrainRun r;
  r.model = "fmnist-cnn";
  r.model_hash = "sha256:def";
  r.backend = "onednn";
  r.backend_version = "oneDNN 2.6.3";
  r.effective.threads = 2;
  r.state = State::kConverged;
  r.task = "fashion-mnist-92";
  r.seed = 3;
  r.target = 0.92;
  r.time_to_target = 20.5;
  r.epochs = {{1, 0.1, 10, 10, 1, 0, 0.4, 0.85, 0.38, 0.9, 11},
              {2, 0.05, 20.5, 10.5, 1, 0, 0.3, 0.9, 0.3, 0.921, 23}};
  Latency l;
  l.items = 100;
  l.mean = 0.001;
  r.latency = l;
  const auto j = to_json(r);
  EXPECT_EQ(j["kind"], "training");
  EXPECT_EQ(j["state"], "converged");
  EXPECT_EQ(j["time_to_target_seconds"], 20.5);
  // The same shape for the shared fields as a throughput record.
  const auto t = to_json(sample_result());
  for (const char* key : {"model", "backend", "effective", "state", "message",
                          "oom_source", "validity", "cpu_usage"}) {
    EXPECT_TRUE(j.contains(key)) << key;
    EXPECT_TRUE(t.contains(key)) << key;
  }
  EXPECT_EQ(to_json(train_run_from_json(j)), j);
}

// Typed settings beside the backend's extras, in one flat object; records
// written before the typed fields (every value a string) read the same.
TEST(Results, EffectiveIsTypedAndReadsTheOldStrings) {
  const auto j = to_json(sample_result())["effective"];
  EXPECT_EQ(j, (nlohmann::json{
                   {"threads", 2}, {"device", "cpu"}, {"layout", "NCHW"}}));
  const auto old = effective_from_json(
      {{"threads", "4"}, {"precision", "bf16"}, {"graph_builds", "2"}});
  EXPECT_EQ(old.threads, 4);
  EXPECT_EQ(old.precision, "bf16");
  EXPECT_EQ(old.extras,
            (std::map<std::string, std::string>{{"graph_builds", "2"}}));
  EXPECT_EQ(to_json(backend::Effective{}), nlohmann::json::object());
}

// One mapping from exceptions to states for every harness.
TEST(Results, ClassifyMapsEachExceptionToItsState) {
  const auto of = [](auto&& thrower) {
    try {
      thrower();
    } catch (...) {
      return classify(std::current_exception());
    }
    return Outcome{};
  };
  Outcome o = of([] { throw backend::Unimplemented("layer lstm"); });
  EXPECT_EQ(o.state, State::kUnimplemented);
  EXPECT_EQ(o.message, "layer lstm");
  o = of([] { throw backend::OutOfMemory("cuda"); });
  EXPECT_EQ(o.state, State::kOom);
  EXPECT_EQ(o.oom_source, "allocation");
  o = of([] { throw std::bad_alloc(); });
  EXPECT_EQ(o.state, State::kOom);
  EXPECT_EQ(o.oom_source, "allocation");
  o = of([] { throw Error("nesterov needs momentum"); });
  EXPECT_EQ(o.state, State::kInvalidArgs);
  o = of([] { throw std::runtime_error("primitive failed"); });
  EXPECT_EQ(o.state, State::kFailed);
  o = of([] { throw 42; });
  EXPECT_EQ(o.state, State::kFailed);
  o = of([] { throw RunError(State::kOom, "too big", "estimate"); });
  EXPECT_EQ(o.state, State::kOom);
  EXPECT_EQ(o.oom_source, "estimate");
  o = of([] { throw RunError(State::kFailed, "loss is nan", "estimate"); });
  EXPECT_EQ(o.oom_source, "");  // only oom carries a source
}

TEST(Results, FailureStatesAreTheSixFailures) {
  int failures = 0;
  for (const char* s :
       {"ok", "converged", "not_converged", "completed", "stopped", "oom",
        "unimplemented", "invalid_args", "failed", "crashed", "timeout"}) {
    const State st = state_from_name(s);
    EXPECT_EQ(state_name(st), s);
    failures += is_failure(st);
  }
  EXPECT_EQ(failures, 6);
}

// Rules that cannot be met, named as a suite file and the command line
// spell them; the defaults pass.
TEST(Results, RuleProblemsNameTheFieldsThatContradict) {
  const WarmupRule w;
  StopRule s;
  EXPECT_EQ(rule_problem(w, s), "");
  s.max_seconds = 0.001;
  EXPECT_EQ(rule_problem(w, s),
            "[stop] max_seconds (--max-time) 0.001 is below min_seconds "
            "(--min-time) 2");
  s = StopRule{};
  s.min_iterations = 20;
  s.max_iterations = 5;
  EXPECT_EQ(rule_problem(w, s),
            "[stop] max_iterations (--max-iters) 5 is below min_iterations "
            "(--min-iters) 20");
  s = StopRule{};
  s.min_seconds = -1;
  EXPECT_EQ(rule_problem(w, s),
            "[stop] min_seconds (--min-time) -1 must be >= 0");
  WarmupRule bad;
  bad.min_seconds = -0.5;
  EXPECT_EQ(rule_problem(bad, StopRule{}),
            "[warmup] min_seconds (--warmup-time) -0.5 must be >= 0");
}

// Contention under the warn policy is recorded and passes; every other
// reason fails the command.
TEST(Results, InvalidityFailsButWarnedContention) {
  Validity v;
  EXPECT_FALSE(v.fails(false));
  v.add("contended", "x");
  EXPECT_TRUE(v.fails(false));
  EXPECT_FALSE(v.fails(true));
  v.add("oversubscribed", "y");
  EXPECT_TRUE(v.fails(true));
}

}  // namespace
}  // namespace nnbench::results
