// DAWNBench entries and MLPerf logs against the rules their projects publish.
// DAWNBench: stanford-futuredata/dawn-bench-entries, tests/test_submissions.py
// (required fields, timestamp parsed with '%Y-%m-%d', TSV columns) and
// README.md (inference: `latency` in ms = total time over the test set one
// item at a time / items; `cost` in USD per item = costPerHour x latency).
// MLPerf: mlcommons/logging, see mllog_rules.h.
#include "train/exports.h"

#include <gtest/gtest.h>

#include <regex>

#include "mllog_rules.h"
#include "util/error.h"

namespace nnbench::train {
namespace {

using nlohmann::json;

// 2023-11-14T22:13:20Z.
constexpr int64_t kStart = 1700000000000;

ExportInfo info(bool priced) {
  ExportInfo i;
  i.who.author = "Ada";
  i.who.email = "ada@example.org";
  i.who.org = "Lab";
  i.who.platform = "Test CPU (2 threads)";
  if (priced) i.price = cost::Price{1.5, "--price-per-hour"};
  i.train_samples = 60000;
  i.eval_samples = 10000;
  return i;
}

TrainRun run(const std::string& state = "converged") {
  TrainRun r;
  r.task = "fashion-mnist-92";
  r.backend = "reference";
  r.backend_version = "nnbench reference 1";
  r.model = "fmnist-cnn";
  r.seed = 5;
  r.state = results::state_from_name(state);
  r.target = 0.92;
  r.start_unix_ms = kStart;
  r.init_seconds = 2.5;
  EpochRow e;
  e.epoch = 1;
  e.train_seconds = 36;
  e.epoch_seconds = 30;
  e.eval_seconds = 4;
  e.val_accuracy = 0.9213;
  e.wall_seconds = 40;
  r.epochs = {e};
  r.time_to_target = 36;
  return r;
}

void expect_required_fields(const json& j,
                            const std::vector<std::string>& required) {
  for (const auto& f : required) EXPECT_TRUE(j.contains(f)) << f;
  ASSERT_TRUE(j["timestamp"].is_string());
  EXPECT_TRUE(std::regex_match(j["timestamp"].get<std::string>(),
                               std::regex(R"(\d{4}-\d{2}-\d{2})")))
      << j["timestamp"];
}

// test_train_file_has_required_fields.
const std::vector<std::string> kTrainFields = {
    "version", "author",   "authorEmail", "framework",
    "model",   "hardware", "timestamp"};

TEST(Exports, DawnbenchTrainingEntryHasTheRequiredFields) {
  const json j = dawnbench_entry(run(), info(true));
  expect_required_fields(j, kTrainFields);
  EXPECT_EQ(j["timestamp"], "2023-11-14");
  EXPECT_EQ(j["author"], "Ada");
  EXPECT_EQ(j["authorEmail"], "ada@example.org");
  EXPECT_EQ(j["hardware"], "Test CPU (2 threads)");
  EXPECT_EQ(j["version"], "v1.0");
  EXPECT_EQ(j["costPerHour"], 1.5);
  EXPECT_DOUBLE_EQ(j["timeToAccuracyHours"].get<double>(), 0.01);  // 36 s
  EXPECT_FALSE(dawnbench_entry(run(), info(false)).contains("costPerHour"));
}

TEST(Exports, DawnbenchTimestampIsTheRunsUtcDate) {
  EXPECT_EQ(utc_date(kStart), "2023-11-14");
  EXPECT_EQ(utc_date(0), "1970-01-01");
  EXPECT_EQ(utc_date(951782400000), "2000-02-29");  // leap day, 00:00 UTC
  // A run that failed before its clock started still gets a date.
  TrainRun r = run("unimplemented");
  r.start_unix_ms = 0;
  r.epochs.clear();
  const json j = dawnbench_entry(r, info(false));
  expect_required_fields(j, kTrainFields);
  EXPECT_NE(j["timestamp"], "1970-01-01");
}

TEST(Exports, DawnbenchTsvHasTheRequiredColumns) {
  // test_cifar10_train_file_has_valid_tsv: columns epoch, hours,
  // top1Accuracy; at least one row.
  EXPECT_EQ(dawnbench_tsv(run()),
            "epoch\thours\ttop1Accuracy\n1\t0.01000000\t92.13\n");
}

TEST(Exports, DawnbenchInferenceEntryIsTheMeanLatencyAndItsCost) {
  TrainRun r = run();
  EXPECT_FALSE(dawnbench_inference_entry(r, info(true)));  // not measured
  // Mean and median differ so that the wrong statistic fails.
  results::Latency l;
  l.items = 10000;
  l.mean = 0.0025;
  l.p50 = 0.002;
  l.p90 = 0.003;
  l.p99 = 0.004;
  l.max = 0.01;
  l.accuracy = 0.931;
  r.latency = l;
  const auto j = dawnbench_inference_entry(r, info(true));
  ASSERT_TRUE(j);
  // test_infer_file_has_required_fields.
  auto fields = kTrainFields;
  fields.push_back("latency");
  expect_required_fields(*j, fields);
  EXPECT_DOUBLE_EQ((*j)["latency"].get<double>(), 2.5);  // ms per item
  // $1.5 per hour for 0.0025 s per item: 1.5 * 0.0025 / 3600 dollars.
  EXPECT_NEAR((*j)["cost"].get<double>(), 1.0416666666666667e-6, 1e-15);
  EXPECT_NEAR((*j)["top1Accuracy"].get<double>(), 93.1, 1e-9);
  EXPECT_EQ((*j)["authorEmail"], "ada@example.org");
  EXPECT_FALSE(dawnbench_inference_entry(r, info(false))->contains("cost"));
}

Task recipe() {
  Task t;
  t.name = "fashion-mnist-92";
  t.batch = 128;
  t.epochs = 6;
  t.optimizer.optimizer = "sgd";
  t.optimizer.momentum = 0.9;
  t.optimizer.nesterov = true;
  t.optimizer.weight_decay = 5e-4;
  t.schedule.kind = "one-cycle";
  t.schedule.lr = 0.05;
  t.schedule.warmup_fraction = 0.25;
  t.schedule.final_fraction = 0.02;
  return t;
}

std::vector<test::MllogLine> parse(const std::string& text) {
  std::vector<std::string> errors;
  auto lines = test::parse_mllog(text, errors);
  EXPECT_TRUE(errors.empty()) << errors.front();
  return lines;
}

const test::MllogLine& find(const std::vector<test::MllogLine>& lines,
                            const std::string& key) {
  for (const auto& l : lines)
    if (l.key == key) return l;
  static const test::MllogLine none{-1, "(missing)", nullptr, nullptr};
  ADD_FAILURE() << key << " missing";
  return none;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}

TEST(Exports, MllogPassesTheCommonRules) {
  const auto lines = parse(mllog(run(), recipe(), info(false)));
  const auto bad = test::check_common_rules(lines);
  EXPECT_TRUE(bad.empty()) << joined(bad);
  EXPECT_EQ(find(lines, "submission_org").value, "Lab");
  EXPECT_EQ(find(lines, "submission_platform").value, "Test CPU (2 threads)");
  EXPECT_EQ(find(lines, "submission_division").value, "open");
  EXPECT_EQ(find(lines, "submission_status").value, "onprem");
  EXPECT_EQ(find(lines, "train_samples").value, 60000);
  EXPECT_EQ(find(lines, "eval_samples").value, 10000);
  EXPECT_EQ(find(lines, "global_batch_size").value, 128);
  EXPECT_EQ(find(lines, "seed").value, 5);
  EXPECT_EQ(find(lines, "run_stop").metadata["status"], "success");
}

TEST(Exports, MllogTimesFollowTheRun) {
  // Init 2.5 s before the run's clock; the epoch's training loop (30 s)
  // then its evaluation (4 s) end 40 s after it.
  const auto lines = parse(mllog(run(), recipe(), info(false)));
  const double t0 = kStart;
  EXPECT_EQ(find(lines, "init_start").time_ms, t0 - 2500);
  EXPECT_EQ(find(lines, "init_stop").time_ms, t0);
  EXPECT_EQ(find(lines, "run_start").time_ms, t0);
  EXPECT_EQ(find(lines, "epoch_start").time_ms, t0 + 6000);
  EXPECT_EQ(find(lines, "epoch_stop").time_ms, t0 + 36000);
  EXPECT_EQ(find(lines, "eval_start").time_ms, t0 + 36000);
  EXPECT_EQ(find(lines, "eval_stop").time_ms, t0 + 40000);
  EXPECT_EQ(find(lines, "eval_accuracy").value, 0.9213);
  EXPECT_EQ(find(lines, "eval_accuracy").metadata["epoch_num"], 1);
  EXPECT_EQ(find(lines, "run_stop").time_ms, t0 + 40000);
}

TEST(Exports, MllogRuleCheckCatchesBrokenLogs) {
  const std::string good = mllog(run(), recipe(), info(false));
  // Two runs in one file: run_start, init_stop ... twice.
  EXPECT_FALSE(test::check_common_rules(parse(good + good)).empty());
  // No division: missing, and init_stop has no time allowance.
  std::string text;
  std::istringstream in(good);
  for (std::string l; std::getline(in, l);)
    if (l.find("\"submission_division\"") == std::string::npos)
      text += l + "\n";
  EXPECT_GE(test::check_common_rules(parse(text)).size(), 2u);
  // A run that did not reach its target is aborted.
  const auto aborted =
      parse(mllog(run("not_converged"), recipe(), info(false)));
  EXPECT_EQ(find(aborted, "run_stop").metadata["status"], "aborted");
}

TEST(Exports, MllogStatesTheOptimizerAndSchedule) {
  auto lines = parse(mllog(run(), recipe(), info(false)));
  EXPECT_EQ(find(lines, "opt_name").value, "sgd");
  EXPECT_EQ(find(lines, "opt_base_learning_rate").value, 0.05);
  EXPECT_EQ(find(lines, "opt_weight_decay").value, 5e-4);
  EXPECT_EQ(find(lines, "opt_sgd_momentum").value, 0.9);
  EXPECT_EQ(find(lines, "opt_sgd_nesterov").value, true);
  EXPECT_EQ(find(lines, "opt_learning_rate_warmup_epochs").value, 1.5);
  EXPECT_EQ(find(lines, "opt_learning_rate_warmup_factor").value, 0.02);
  EXPECT_EQ(find(lines, "opt_end_learning_rate").value, 0.001);

  Task adam = recipe();
  adam.optimizer.optimizer = "adam";
  adam.optimizer.beta1 = 0.8;
  adam.optimizer.beta2 = 0.99;
  adam.optimizer.eps = 1e-7;
  adam.schedule.kind = "step";
  adam.schedule.step_epochs = 30;
  adam.schedule.gamma = 0.1;
  adam.epochs = 90;
  lines = parse(mllog(run(), adam, info(false)));
  EXPECT_TRUE(test::check_common_rules(lines).empty());
  EXPECT_EQ(find(lines, "opt_name").value, "adam");
  EXPECT_EQ(find(lines, "opt_adam_beta_1").value, 0.8);
  EXPECT_EQ(find(lines, "opt_adam_beta_2").value, 0.99);
  EXPECT_EQ(find(lines, "opt_adam_epsilon").value, 1e-7);
  EXPECT_EQ(find(lines, "opt_learning_rate_decay_factor").value, 0.1);
  EXPECT_EQ(find(lines, "opt_learning_rate_decay_boundary_epochs").value,
            json::array({30, 60}));
}

TEST(Exports, SubmitterIsCheckedAndDefaulted) {
  Submitter s = info(false).who;
  EXPECT_NO_THROW(check_submitter(s));
  auto rejects = [](Submitter s, const std::string& needle) {
    try {
      check_submitter(s);
      ADD_FAILURE() << "accepted " << needle;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
          << e.what();
    }
  };
  Submitter bad = s;
  bad.division = "closedd";
  rejects(bad, "--division");
  bad = s;
  bad.status = "available";
  rejects(bad, "--status");
  bad = s;
  bad.email = "ada at example.org";
  rejects(bad, "--author-email");
  bad = s;
  bad.org = "";
  rejects(bad, "--org");
  const Submitter d = with_defaults({});
  EXPECT_FALSE(d.author.empty());
  EXPECT_EQ(d.org, d.author);
  EXPECT_NE(d.email.find(d.author + "@"), std::string::npos) << d.email;
  EXPECT_EQ(with_defaults(s).email, "ada@example.org");  // given: kept
}

}  // namespace
}  // namespace nnbench::train
