// Results files round-trip through JSON with every field intact.
#include <gtest/gtest.h>

#include <cmath>

#include "bench/statistics.h"
#include "results/result.h"
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
  r.requested.stop.max_relative_ci = 0.01;
  r.effective = {{"threads", "2"}, {"device", "cpu"}};
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

TEST(Results, ReportRoundTripsThroughText) {
  Report rep;
  rep.environment = {{"cpu_model", "x"}};
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

TEST(Results, NewerSchemaIsRejected) {
  Report rep;
  auto j = to_json(rep);
  j["schema_version"] = kSchemaVersion + 1;
  EXPECT_THROW(report_from_json(j), Error);
}

}  // namespace
}  // namespace nnbench::results
