// LoadGen's rules as nnbench runs them: the early-stopping bound against a
// binomial computed here, the settings' errors, LoadGen's logs read back,
// and whole runs on a scripted engine of known service time.
#include "results/inference.h"

#include <early_stopping.h>
#include <gtest/gtest.h>

#include <cmath>

#include "inference/loadgen_run.h"
#include "inference/settings.h"
#include "model/zoo/zoo.h"
#include "report/charts.h"
#include "reporters/tables.h"
#include "scenarios/scenario.h"
#include "scripted_backend.h"
#include "util/error.h"

namespace nnbench::inference {
namespace {

// P(Binomial(n, q) >= k), summed term by term in long double.
long double upper_tail(int64_t n, double q, int64_t k) {
  long double sum = 0;
  for (int64_t i = k; i <= n; ++i)
    sum += std::exp(std::lgamma(n + 1.0L) - std::lgamma(i + 1.0L) -
                    std::lgamma(n - i + 1.0L) + i * std::log((long double)q) +
                    (n - i) * std::log1p(-(long double)q));
  return sum;
}

// The fewest queries under the bound (h) that, beside t over it, show the
// percentile p is met with confidence c: if the true rate under the bound
// were only p, seeing h or more of h + t would have probability <= 1 - c.
int64_t min_passing(int64_t t, double p, double c) {
  for (int64_t h = 1;; ++h)
    if (upper_tail(h + t, p, h) <= 1 - c) return h;
}

TEST(EarlyStopping, NoQueryOverTheBoundNeedsLogOfOneMinusCOverLogP) {
  // t = 0: P = p^h <= 1 - c, so h = ceil(ln(0.01) / ln(p)).
  EXPECT_EQ(min_passing(0, 0.90, 0.99), 44);   // 43.71 -> 44
  EXPECT_EQ(min_passing(0, 0.99, 0.99), 459);  // 458.21 -> 459
  mlperf::loadgen::MinPassingQueriesFinder loadgen;
  EXPECT_EQ(loadgen(0, 0.90, 0, 0.99), 44);
  EXPECT_EQ(loadgen(0, 0.99, 0, 0.99), 459);
  // t = 1 at p90, by hand: 0.9^64 + 64 * 0.1 * 0.9^63 = 0.00959 <= 0.01,
  // while h = 62 gives 0.0105: 63 (LoadGen's "at least 64 queries").
  EXPECT_EQ(min_passing(1, 0.90, 0.99), 63);
  EXPECT_EQ(loadgen(1, 0.90, 0, 0.99), 63);
}

TEST(EarlyStopping, LoadGensBoundMatchesTheBinomialTail) {
  mlperf::loadgen::MinPassingQueriesFinder loadgen;
  for (double p : {0.90, 0.99})
    for (int64_t t : {2, 5, 20, 60})
      EXPECT_EQ(loadgen(t, p, 0, 0.99), min_passing(t, p, 0.99))
          << "t " << t << " p " << p;
}

TEST(InferenceSettings, BadValuesAndUnknownNamesAreErrorsNamingThem) {
  Settings s;
  auto message = [&](const std::string& k, const std::string& v) {
    try {
      apply_setting(s, k, v);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("target_qps", "fast").find("target_qps = 'fast'"),
            std::string::npos);
  EXPECT_NE(message("target_qps", "0").find("above"), std::string::npos);
  EXPECT_NE(message("min_queries", "2.5").find("whole"), std::string::npos);
  EXPECT_NE(message("mode", "speed").find("performance or accuracy"),
            std::string::npos);
  EXPECT_NE(message("warp", "9").find("unknown inference setting 'warp'"),
            std::string::npos);
  EXPECT_NE(message("find_peak", "maybe").find("true or false"),
            std::string::npos);
  apply_setting(s, "latency_bound_ms", "15");
  EXPECT_DOUBLE_EQ(s.latency_bound_seconds, 0.015);
  EXPECT_THROW(scenario_from_name("streaming"), Error);
  Settings server;
  server.scenario = Scenario::kServer;
  EXPECT_THROW(check(server), Error);  // no target_qps
  Settings peak;
  peak.find_peak = true;  // single-stream has no QPS to search
  EXPECT_THROW(check(peak), Error);
  Settings acc;
  acc.mode = "accuracy";
  EXPECT_THROW(check(acc), Error);  // no data set
}

TEST(LoadgenLogs, DetailEntriesAndTraceLatenciesAreReadBack) {
  const nlohmann::json log = read_detail_log(
      "noise\n"
      ":::MLLOG {\"key\": \"result_validity\", \"value\": \"VALID\"}\n"
      ":::MLLOG {\"key\": \"result_99.00_percentile_latency_ns\", "
      "\"value\": 1500}\n"
      ":::MLLOG not json\n");
  EXPECT_EQ(log.at("result_validity"), "VALID");
  EXPECT_EQ(log.at("result_99.00_percentile_latency_ns"), 1500);
  EXPECT_EQ(log.size(), 2u);
  const std::string trace =
      "{\"traceEvents\":[\n"
      "{\"name\":\"IssueQuery\",\"ph\":\"X\",\"args\":{}},\n"
      "{\"name\":\"Sample\",\"ph\":\"b\",\"args\":{\"query_seq\":0,"
      "\"complete_ns\":2000}},\n"
      "{\"name\":\"Sample\",\"ph\":\"b\",\"args\":{\"query_seq\":0,"
      "\"complete_ns\":5000}},\n"
      "{\"name\":\"Sample\",\"ph\":\"e\",\"args\":{}},\n"
      "{\"name\":\"Sample\",\"ph\":\"b\",\"args\":{\"query_seq\":1,"
      "\"complete_ns\":3000}},\n";
  EXPECT_EQ(read_trace_latencies(trace, false),
            (std::vector<double>{2e-6, 5e-6, 3e-6}));
  // Per query: the slowest of its samples.
  EXPECT_EQ(read_trace_latencies(trace, true),
            (std::vector<double>{5e-6, 3e-6}));
}

// LoadGen logs an early-stopping estimate of 0 when it has none (too few
// queries): absent (NaN, null in JSON), never 0 s; a real one is kept.
TEST(LoadgenLogs, AnEarlyStoppingEstimateLoadGenDidNotGiveIsAbsent) {
  const auto log_with = [](const std::string& key, int64_t ns) {
    return read_detail_log(
        ":::MLLOG {\"key\": \"result_validity\", \"value\": \"INVALID\"}\n"
        ":::MLLOG {\"key\": \"result_90.00_percentile_latency_ns\", "
        "\"value\": 2000000}\n"
        ":::MLLOG {\"key\": \"result_99.00_percentile_per_query_latency_ns\", "
        "\"value\": 3000000}\n"
        ":::MLLOG {\"key\": \"" +
        key + "\", \"value\": " + std::to_string(ns) + "}\n");
  };
  for (const auto& [scenario, key] :
       {std::pair{Scenario::kSingleStream, "early_stopping_latency_ss"},
        std::pair{Scenario::kMultiStream, "early_stopping_latency_ms"}}) {
    Settings s;
    s.scenario = scenario;
    results::InferenceRun none;
    read_figures(log_with(key, 0), s, none);
    EXPECT_TRUE(std::isnan(none.early_stopping_latency)) << key;
    EXPECT_TRUE(
        results::to_json(none)["figures"]["early_stopping_latency_seconds"]
            .is_null())
        << key;
    // Its percentile was measured: only the estimate is absent.
    EXPECT_FALSE(std::isnan(none.percentile_latency)) << key;
    results::InferenceRun some;
    read_figures(log_with(key, 2500000), s, some);
    EXPECT_DOUBLE_EQ(some.early_stopping_latency, 0.0025) << key;
  }
}

TEST(LoadgenRuns, MoreThanOnePointBelowFp32IsInvalid) {
  results::InferenceRun r;
  r.requested.options.precision = "int8";
  r.fp32_accuracy = 0.9000;
  r.accuracy = 0.8905;  // 0.95 points down: within MLPerf's 1 %
  judge_accuracy(r);
  EXPECT_TRUE(r.validity.valid());
  r.accuracy = 0.8895;  // 1.05 points down
  judge_accuracy(r);
  ASSERT_FALSE(r.validity.valid());
  EXPECT_EQ(r.validity.reasons[0].reason, "accuracy_drop");
  EXPECT_NE(r.validity.reasons[0].detail.find("int8 loses 1.05 points"),
            std::string::npos)
      << r.validity.reasons[0].detail;
}

results::InferenceRun run_scripted(double service_seconds, Settings s,
                                   int64_t batch = 1) {
  test::Script script;
  script.infer_seconds = service_seconds;
  test::ScriptedBackend b(script);
  results::RunRequest r;
  r.backend = "scripted";
  r.batch = batch;
  r.options.threads = 1;
  r.contention.rule.max_excess_load = 4;  // ctest runs beside other tests
  r.contention.rule.max_steal_fraction = 1;
  return run(b, model::zoo::get("mnist-mlp"), "mnist-mlp", r, s, {});
}

TEST(LoadgenRuns, SingleStreamP90IsTheServiceTime) {
  Settings s;
  s.min_duration_seconds = 0.3;
  s.min_queries = 100;
  const double service = 0.004;
  const auto r = run_scripted(service, s);
  ASSERT_EQ(r.state, results::State::kOk) << r.message;
  EXPECT_TRUE(r.loadgen_valid);
  EXPECT_GE(r.query_count, 100);
  // One query at a time: every latency is one sleep plus overheads.
  EXPECT_GE(r.percentile_latency, service);
  EXPECT_LT(r.percentile_latency, service + 0.004);
  // LoadGen's early-stopping estimate is a higher order statistic.
  EXPECT_GE(r.early_stopping_latency, r.percentile_latency);
  EXPECT_LE(r.early_stopping_latency, r.max_latency);
  // The interval is of LoadGen's own latencies and holds its p90.
  EXPECT_EQ(r.latency_samples, r.query_count);
  EXPECT_LE(r.percentile_ci.lo, r.percentile_latency);
  EXPECT_GE(r.percentile_ci.hi, r.percentile_latency);
}

TEST(LoadgenRuns, ServerIsValidBelowCapacityAndInvalidAboveIt) {
  const double service = 0.002;  // one copy: 500 queries/s at most
  Settings s;
  s.scenario = Scenario::kServer;
  s.latency_bound_seconds = 0.05;
  s.min_queries = 100;
  s.target_qps = 250;  // half the capacity, 2 s: past the 459 queries
  s.min_duration_seconds = 2;
  const auto ok = run_scripted(service, s);
  ASSERT_EQ(ok.state, results::State::kOk) << ok.message;
  EXPECT_TRUE(ok.loadgen_valid) << ok.loadgen_summary;
  EXPECT_GE(ok.percentile_latency, service);  // never under one service
  EXPECT_LT(ok.percentile_latency, s.latency_bound_seconds);
  EXPECT_LE(ok.percentile_ci.lo, ok.percentile_latency);
  EXPECT_GE(ok.percentile_ci.hi, ok.percentile_latency);
  EXPECT_TRUE(ok.validity.valid()) << ok.validity.summary();

  s.target_qps = 1000;  // twice the capacity: the queue only grows
  s.min_duration_seconds = 1;
  const auto over = run_scripted(service, s);
  ASSERT_EQ(over.state, results::State::kOk) << over.message;
  EXPECT_FALSE(over.loadgen_valid);
  // Half the arrivals wait behind the backlog: the p99 passes the bound.
  EXPECT_GT(over.percentile_latency, s.latency_bound_seconds);
  ASSERT_FALSE(over.loadgen_reasons.empty());
  EXPECT_EQ(over.loadgen_reasons[0], "Reduce target QPS to improve latency.");
  EXPECT_FALSE(over.validity.valid());
}

TEST(LoadgenRuns, OfflinePadsOnlyTheLastBatch) {
  Settings s;
  s.scenario = Scenario::kOffline;
  s.min_duration_seconds = 0.2;
  s.min_queries = 1;
  const auto r = run_scripted(0.001, s, 16);
  ASSERT_EQ(r.state, results::State::kOk) << r.message;
  EXPECT_EQ(r.query_count, 1);
  ASSERT_GT(r.sample_count, 0);
  EXPECT_EQ(r.padded_samples, (16 - r.sample_count % 16) % 16);
  // 16 samples a step of about 1 ms: never faster than 16,000 a second.
  EXPECT_LT(r.samples_per_second, 16000);
  EXPECT_GT(r.samples_per_second, 0);
}

TEST(LoadgenRuns, AFailingEngineIsARecordNotAHang) {
  Settings s;
  s.min_duration_seconds = 0.1;
  s.min_queries = 10;
  test::Script script;
  script.oom_in_compile = true;
  test::ScriptedBackend b(script);
  results::RunRequest r;
  r.backend = "scripted";
  const auto rec = run(b, model::zoo::get("mnist-mlp"), "m", r, s, {});
  EXPECT_EQ(rec.state, results::State::kOom);
}

TEST(LoadgenRuns, TheScenariosAreRegisteredAndRefuseBadSettings) {
  scenarios::Case c;
  c.model = "mnist-mlp";
  c.request.backend = "scripted";
  c.settings = {{"target_qps", "lots"}};
  test::ScriptedBackend b(test::Script{});
  const auto rec = scenarios::make_scenario("server")->run(b, c, {});
  EXPECT_EQ(rec->kind, "server");
  EXPECT_EQ(rec->state, results::State::kInvalidArgs);
  EXPECT_NE(rec->message.find("target_qps"), std::string::npos);
  std::string which;
  EXPECT_NE(
      scenarios::make_scenario("server")->settings_problem(c.settings, &which),
      "");
  EXPECT_EQ(which, "target_qps");
}

}  // namespace
}  // namespace nnbench::inference

namespace nnbench::report {
namespace {

results::InferenceRun server_run(double qps, double p99, bool valid) {
  results::InferenceRun r;
  r.kind = "server";
  r.model = "m";
  r.backend = "b";
  r.requested.options.precision = "fp32";
  r.effective.threads = 2;
  r.target_qps = qps;
  r.percentile = 0.99;
  r.percentile_latency = p99;
  r.latency_percentiles = {
      {"50.00", p99 / 2}, {"90.00", p99 * 0.8}, {"99.00", p99}};
  r.latency_samples = 1000;
  r.percentile_ci = {p99 * 0.9, p99 * 1.1, 0.95};
  r.samples_per_second = qps;
  r.loadgen_valid = valid;
  return r;
}

// The server's curve: one point per target QPS in rising order, p99 in ms,
// an INVALID run drawn open; every run a row of the latency table.
TEST(InferenceReport, ServerCurveAndPercentileTable) {
  Source s;
  s.label = "f.json";
  s.inference = {server_run(400, 0.004, false), server_run(100, 0.001, true),
                 server_run(200, 0.002, true)};
  results::InferenceRun offline;
  offline.kind = "offline";
  offline.model = "m";
  offline.backend = "b";
  offline.samples_per_second = 1234.5;
  offline.percentile_latency = NAN;
  offline.early_stopping_latency = NAN;
  offline.usd_per_10k = NAN;
  s.inference.push_back(offline);
  std::map<std::string, Chart> by;
  for (auto& c : charts({s})) by[c.id] = c;
  ASSERT_TRUE(by.count("loadgen-latency"));
  ASSERT_TRUE(by.count("loadgen-server"));
  EXPECT_EQ(by["loadgen-latency"].rows.size(), 4u);  // offline: a row only
  EXPECT_EQ(by["loadgen-latency"].config["data"]["labels"].size(), 3u);
  const auto& points = by["loadgen-server"].config["data"]["datasets"][0];
  ASSERT_EQ(points["data"].size(), 3u);
  EXPECT_EQ(points["data"][0]["x"], 100);
  EXPECT_DOUBLE_EQ(points["data"][0]["y"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(points["data"][2]["y"].get<double>(), 4.0);
  EXPECT_EQ(points["pointBackgroundColor"][2], "#ffffff");  // INVALID
  EXPECT_NE(points["pointBackgroundColor"][0], "#ffffff");
}

// A run nobody priced (a suite without an instance) has no cost: null in
// its record and "-" in the table, never $0; the table names the
// precision that ran (the engine's word) beside the one asked.
TEST(InferenceReport, AnUnpricedRunHasNoCostAndTheTableNamesThePrecision) {
  results::InferenceRun r = server_run(100, 0.001, true);
  r.requested.options.precision = "int8";
  const nlohmann::json j = results::to_json(r);
  EXPECT_TRUE(j["cost"]["usd_per_hour"].is_null());
  EXPECT_TRUE(j["cost"]["usd_per_10k_inferences"].is_null());
  EXPECT_TRUE(std::isnan(results::inference_run_from_json(j).usd_per_10k));
  results::InferenceRun ran = r;
  ran.effective.precision = "fp32";  // say the engine ran another
  const std::string t = reporters::inference_table({r, ran});
  const auto row = [&](int i) {
    size_t at = 0;
    for (int k = 0; k < i + 2; ++k) at = t.find('\n', at) + 1;
    return t.substr(at, t.find('\n', at) - at);
  };
  EXPECT_NE(row(0).find(" int8 "), std::string::npos) << t;
  EXPECT_NE(row(1).find(" fp32 "), std::string::npos) << t;
  EXPECT_EQ(t.find("0.0000"), std::string::npos) << t;
  // The cost column itself: "-" where its header starts.
  const size_t cost = t.find("$ per 10k");
  ASSERT_NE(cost, std::string::npos);
  EXPECT_EQ(row(0).substr(cost, 2), "- ") << t;
}

TEST(InferenceReport, CostOfTenThousandAtTheScenariosThroughput) {
  results::InferenceRun r = server_run(100, 0.001, true);
  results::price(r, 3.6, "test");  // $0.001 a second, 100 samples a second
  EXPECT_DOUBLE_EQ(r.usd_per_10k, 0.1);  // 100 s of machine for 10,000
  results::InferenceRun ms;
  ms.kind = "multi-stream";
  ms.samples_per_second = NAN;
  ms.query_count = 10;
  ms.sample_count = 80;
  ms.mean_latency = 0.008;  // 8 samples each 8 ms: 1000 samples a second
  results::price(ms, 3.6, "test");
  EXPECT_DOUBLE_EQ(ms.usd_per_10k, 0.01);
}

}  // namespace
}  // namespace nnbench::report
