// Scenarios found by name, each turning a case into a record and every
// failure into the record's state.
#include "scenarios/scenario.h"

#include <gtest/gtest.h>

#include "results/case_key.h"
#include "results/kinds.h"
#include "results/result.h"
#include "results/training.h"
#include "scripted_backend.h"
#include "util/error.h"

namespace nnbench::scenarios {
namespace {

using test::Script;
using test::ScriptedBackend;

Case tiny_case(const std::string& model) {
  Case c;
  c.model = model;
  c.request.backend = "scripted";
  c.request.batch = 4;
  c.request.distinct_batches = 1;
  c.request.warmup = {1, 0, 1};
  c.request.stop.min_iterations = 20;
  c.request.stop.min_seconds = 0;
  c.request.stop.max_iterations = 20;
  c.request.stop.max_seconds = 10;
  c.request.contention.action = results::ContentionPolicy::Action::kWarn;
  return c;
}

TEST(Scenarios, BuiltInsComeFirstAndUnknownNamesAreErrors) {
  const auto names = scenario_names();
  ASSERT_GE(names.size(), 3u);
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.begin() + 3),
            (std::vector<std::string>{"throughput", "latency", "training"}));
  for (const auto& n : names) EXPECT_EQ(make_scenario(n)->name(), n);
  try {
    make_scenario("warp-speed");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("known: throughput"),
              std::string::npos);
  }
}

TEST(Scenarios, ThroughputRecordsWhatTheRunnerMeasured) {
  ScriptedBackend b(Script{});
  auto rec = make_scenario("throughput")->run(b, tiny_case("mnist-mlp"), {});
  auto& r = dynamic_cast<results::RunResult&>(*rec);
  EXPECT_EQ(r.kind, "throughput");
  EXPECT_EQ(r.state, results::State::kOk) << r.message;
  EXPECT_EQ(r.requested.batch, 4);
  EXPECT_EQ(r.samples.size(), 20u);
  EXPECT_EQ(b.record.train_steps, 1 + 20);  // warm-up, then measured
}

TEST(Scenarios, LatencyRunsBatchOneInferenceWithItsTail) {
  Script s;
  s.infer_seconds = 0.001;
  ScriptedBackend b(s);
  auto rec = make_scenario("latency")->run(b, tiny_case("mnist-mlp"), {});
  auto& r = dynamic_cast<results::RunResult&>(*rec);
  EXPECT_EQ(r.kind, "latency");
  ASSERT_EQ(r.state, results::State::kOk) << r.message;
  EXPECT_EQ(r.requested.batch, 1);
  EXPECT_EQ(r.requested.mode, backend::Mode::kInfer);
  EXPECT_EQ(b.record.train_steps, 0);
  EXPECT_EQ(b.record.infers, 1 + 20);
  EXPECT_GE(r.stats.p90, r.stats.median);
  EXPECT_GE(r.stats.p99, r.stats.p90);
  EXPECT_LE(r.stats.p99, r.stats.max);
  EXPECT_GE(r.stats.median, 0.001);  // the scripted sleep
  EXPECT_EQ(r.serialize()["kind"], "latency");
}

// What callers ask a scenario instead of comparing its name.
TEST(Scenarios, EachAnswersForItsOwnCases) {
  EXPECT_TRUE(make_scenario("training")->runs_tasks());
  for (const char* n : {"throughput", "latency", "server"})
    EXPECT_FALSE(make_scenario(n)->runs_tasks()) << n;

  // Training's time is unknown; LoadGen's is its minimum duration and 3 s;
  // a step loop's is bounded by its rules: 20 steps of mnist-mlp at batch
  // 4 are far below the 10 s stop, so warm-up 1 step, stop 20 steps.
  Case c = tiny_case("mnist-mlp");
  EXPECT_EQ(make_scenario("training")->estimate_seconds(c), -1);
  c.settings = {{"min_duration_s", "4"}};
  EXPECT_DOUBLE_EQ(make_scenario("offline")->estimate_seconds(c), 7.0);
  c.settings = {{"min_duration_s", "4"}, {"mode", "accuracy"}};
  EXPECT_EQ(make_scenario("offline")->estimate_seconds(c), -1);
  c.settings.clear();
  const double e = make_scenario("throughput")->estimate_seconds(c);
  EXPECT_GT(e, 1.5);
  EXPECT_LT(e, 2.0);

  // LoadGen's accuracy mode reads a data set; performance mode none.
  c.settings = {{"mode", "accuracy"}, {"data", "mnist"}, {"data_dir", "/d"}};
  const auto need = make_scenario("single-stream")->data_need(c);
  EXPECT_EQ(need.name, "mnist");
  EXPECT_EQ(need.path, "/d");
  c.settings.clear();
  EXPECT_EQ(make_scenario("single-stream")->data_need(c).name, "");
  // Training on synthetic data cannot time a target.
  Case t;
  t.task = "fashion-mnist-92";
  t.settings = {{"data", "synthetic"}};
  EXPECT_THROW(make_scenario("training")->data_need(t), Error);
  t.settings["target"] = "0";
  EXPECT_EQ(make_scenario("training")->data_need(t).path, "synthetic");

  // A command line's options each scenario would not read.
  results::RunRequest r;
  r.batch = 8;
  r.mode = backend::Mode::kTrain;
  EXPECT_EQ(make_scenario("latency")->request_problem(r, {"batch", "mode"}),
            "--scenario latency measures batch-1 inference, not --batch 8 "
            "and --mode train (the throughput scenario takes those)");
  EXPECT_EQ(make_scenario("latency")->request_problem(r, {}), "");
  EXPECT_EQ(make_scenario("throughput")->request_problem(r, {"batch"}), "");
  EXPECT_EQ(make_scenario("offline")->request_problem(r, {"batch"}), "");
  EXPECT_NE(make_scenario("server")->request_problem(r, {"batch"}), "");

  // Latency's percentiles printed after the table, only for a measurement.
  results::RunResult lat;
  lat.kind = "latency";
  lat.stats.median = 0.001;
  lat.stats.p90 = 0.002;
  lat.stats.p99 = 0.0035;
  lat.stats.n = 40;
  EXPECT_EQ(make_scenario("latency")->notes(lat),
            "latency, batch 1: p50 1.000 ms, p90 2.000 ms, p99 3.500 ms (40 "
            "samples; percentiles interpolated linearly, type 7)\n");
  lat.state = results::State::kOom;
  EXPECT_EQ(make_scenario("latency")->notes(lat), "");
  EXPECT_EQ(make_scenario("throughput")->notes(lat), "");
}

// A record's kind says how it is keyed and charted (results/kinds.h).
TEST(Scenarios, KindTraitsKeyAndShowTheirRecords) {
  EXPECT_EQ(results::traits_of("throughput").measure, results::Measure::kSteps);
  EXPECT_EQ(results::traits_of("training").measure,
            results::Measure::kTraining);
  EXPECT_EQ(results::traits_of("no-such-kind").measure,
            results::Measure::kOther);
  EXPECT_TRUE(results::traits_of("server").paced);
  EXPECT_FALSE(results::traits_of("single-stream").paced);
  EXPECT_FALSE(results::traits_of("offline").query_latencies);
  EXPECT_TRUE(results::traits_of("multi-stream").rate_from_mean_latency);
  results::RunRequest r;
  r.backend = "onednn";
  r.batch = 16;
  r.mode = backend::Mode::kTrain;
  r.options.threads = 2;
  r.options.precision = "fp32";
  EXPECT_EQ(results::key_of("m", "throughput", r).name(),
            "m onednn fp32 train b16 t2");
  EXPECT_EQ(results::key_of("m", "offline", r).name(),
            "m onednn fp32 offline b16 t2");
  EXPECT_EQ(results::key_of("t", "training", r).name(),
            "t onednn fp32 training t2");
}

TEST(Scenarios, FailuresBeforeTheRunAreRecordsNotExceptions) {
  ScriptedBackend b(Script{});
  auto rec = make_scenario("throughput")->run(b, tiny_case("no-such-net"), {});
  EXPECT_EQ(rec->state, results::State::kInvalidArgs);
  EXPECT_NE(rec->message.find("no-such-net"), std::string::npos)
      << rec->message;
  Case c = tiny_case("mnist-mlp");
  c.settings["epochs"] = "3";
  rec = make_scenario("latency")->run(b, c, {});
  EXPECT_EQ(rec->state, results::State::kInvalidArgs);
  EXPECT_NE(rec->message.find("'epochs'"), std::string::npos) << rec->message;
  EXPECT_EQ(b.record.compiles, 0);
}

TEST(Scenarios, TrainingRefusesUnknownTasksAndSettings) {
  ScriptedBackend b(Script{});
  Case c;
  c.task = "no-such-task";
  auto rec = make_scenario("training")->run(b, c, {});
  EXPECT_EQ(rec->kind, "training");
  EXPECT_EQ(rec->state, results::State::kInvalidArgs);
  c.task = "fashion-mnist-92";
  c.settings["epoch"] = "1";  // a typo of epochs
  rec = make_scenario("training")->run(b, c, {});
  EXPECT_EQ(rec->state, results::State::kInvalidArgs);
  EXPECT_NE(rec->message.find("'epoch'"), std::string::npos) << rec->message;
  c.settings = {{"epochs", "two"}};
  rec = make_scenario("training")->run(b, c, {});
  EXPECT_NE(rec->message.find("not a number"), std::string::npos)
      << rec->message;
  EXPECT_EQ(b.record.compiles, 0);
}

// A scenario added from outside the folder: listed after the built-ins.
class Constant : public Scenario {
 public:
  std::string name() const override { return "constant"; }
  std::string summary() const override { return "a test scenario"; }
  std::unique_ptr<results::Record> run(backend::Backend& b, const Case& c,
                                       const Context&) override {
    auto r = std::make_unique<results::RunResult>();
    r->kind = name();
    r->backend = b.name();
    r->model = c.model;
    return r;
  }
};

TEST(Scenarios, RegisteredScenariosAreFoundByName) {
  register_scenario("constant", [] { return std::make_unique<Constant>(); });
  EXPECT_EQ(scenario_names().back(), "constant");
  ScriptedBackend b(Script{});
  EXPECT_EQ(make_scenario("constant")->run(b, tiny_case("x"), {})->model, "x");
  EXPECT_THROW(register_scenario("latency", nullptr), Error);
}

// A scenario with a record kind of its own, both added from outside their
// folders with one registration each: its records are made, read back and
// filed into a report by the same calls as the built-ins'.
struct ToyRecord : results::Record {
  ToyRecord() { kind = "toy"; }
  int answer = 0;
  nlohmann::json serialize() const override {
    nlohmann::json j;
    results::write_record(*this, j);
    j["answer"] = answer;
    return j;
  }
  static ToyRecord read(const nlohmann::json& j) {
    ToyRecord r;
    results::read_record(j, r);
    r.answer = j.at("answer");
    return r;
  }
};

class Toy : public Scenario {
 public:
  std::string name() const override { return "toy"; }
  std::string summary() const override { return "answers 42"; }
  std::unique_ptr<results::Record> run(backend::Backend& b, const Case& c,
                                       const Context&) override {
    auto r = std::make_unique<ToyRecord>();
    r->backend = b.name();
    r->model = c.model;
    r->answer = 42;
    return r;
  }
};

TEST(Scenarios, AToyScenarioWithItsOwnRecordKindPlugsIn) {
  results::Kind toy;
  toy.name = "toy";
  toy.make = [] { return std::make_unique<ToyRecord>(); };
  toy.read = [](const nlohmann::json& j) {
    return std::make_unique<ToyRecord>(ToyRecord::read(j));
  };
  results::register_kind(toy);
  register_scenario("toy", [] { return std::make_unique<Toy>(); });
  results::Kind same_name;
  same_name.name = "toy";
  EXPECT_THROW(results::register_kind(same_name), Error);

  ScriptedBackend b(Script{});
  const auto rec = make_scenario("toy")->run(b, tiny_case("m"), {});
  const auto back = results::record_from_json(rec->serialize());
  ASSERT_EQ(back->kind, "toy");
  EXPECT_EQ(back->serialize()["answer"], 42);
  EXPECT_EQ(back->serialize(), rec->serialize());

  // A report has no list of its own for it: it keeps the JSON, and a
  // results file written and read again still holds it.
  results::Report rep;
  rep.add(*back);
  ASSERT_EQ(rep.other.size(), 1u);
  const auto again = results::report_from_json(results::to_json(rep));
  ASSERT_EQ(again.other.size(), 1u);
  EXPECT_EQ(again.other[0]["answer"], 42);
  EXPECT_TRUE(again.results.empty());

  // A case that never ran gets a failed record of the scenario's kind.
  const auto empty = make_scenario("toy")->empty_record(tiny_case("m"));
  EXPECT_EQ(empty->kind, "toy");
  EXPECT_EQ(empty->model, "m");
  EXPECT_EQ(empty->state, results::State::kFailed);
  EXPECT_EQ(make_scenario("training")->empty_record(tiny_case("m"))->kind,
            "training");
  EXPECT_THROW(results::record_from_json({{"kind", "nope"}}), Error);
}

}  // namespace
}  // namespace nnbench::scenarios
