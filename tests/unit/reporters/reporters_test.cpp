// The reporters: every implementation of results/reporter.h fed the same
// way, each checked against text or rows written out by hand.
#include <SQLiteCpp/Database.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "reporters/console.h"
#include "reporters/csv.h"
#include "reporters/html.h"
#include "reporters/json_file.h"
#include "reporters/markdown.h"
#include "reporters/sqlite.h"
#include "results/inference.h"
#include "results/result.h"
#include "results/training.h"

namespace nnbench::reporters {
namespace {

namespace fs = std::filesystem;

results::RunResult steps(const std::string& model, int threads, double median) {
  results::RunResult r;
  r.model = model;
  r.backend = "torch";
  r.requested.batch = 32;
  r.requested.options.threads = threads;
  r.effective.threads = threads;
  r.samples = {median};
  r.stats.median = median;
  r.stats.n = 1;
  r.samples_per_second = 32 / median;
  return r;
}

results::Entry entry(const results::Record& r, int index, int threads,
                     const std::string& model = "mnist-mlp") {
  results::Entry e;
  e.record = &r;
  e.index = index;
  e.key = "key-" + std::to_string(index);
  e.label = model + " t" + std::to_string(threads);
  e.scenario = r.kind;
  e.model = model;
  e.backend = "torch";
  e.precision = "fp32";
  e.mode = "train";
  e.batch = 32;
  e.threads = threads;
  return e;
}

// Records every call, to check the fan-out's order.
class Log : public results::Reporter {
 public:
  Log(std::string name, std::vector<std::string>& calls)
      : name_(std::move(name)), calls_(calls) {}
  void begin(const results::ReportContext& c) override {
    calls_.push_back(name_ + " begin " + c.run_id);
  }
  void record(const results::Entry& e) override {
    calls_.push_back(name_ + " record " + e.key);
  }
  void end(const results::Ending& e) override {
    calls_.push_back(name_ + " end " + std::to_string(e.interrupted));
  }

 private:
  std::string name_;
  std::vector<std::string>& calls_;
};

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("nnbench-reporters-test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST(Reporters, FanOutFeedsEachInTheOrderAdded) {
  std::vector<std::string> calls;
  Log a("a", calls), b("b", calls);
  results::Reporters all;
  all.add(&a);
  all.add(nullptr);  // an absent reporter (no --html) is skipped
  all.add(&b);
  const auto r = steps("mnist-mlp", 1, 0.01);
  results::ReportContext c;
  c.run_id = "R1";
  all.begin(c);
  all.record(entry(r, 0, 1));
  results::Ending e;
  e.interrupted = 2;
  all.end(e);
  EXPECT_EQ(calls, (std::vector<std::string>{"a begin R1", "b begin R1",
                                             "a record key-0", "b record key-0",
                                             "a end 2", "b end 2"}));
}

TEST(Reporters, CsvHasOneLinePerRecordAndNothingWhereNothingWasMeasured) {
  std::string text;
  Csv csv(text);
  auto ok = steps("mnist-mlp", 2, 0.004);
  auto oom = steps("big, wide", 1, 0);
  oom.state = results::State::kOom;
  oom.samples_per_second = 0;
  csv.begin({});
  csv.record(entry(ok, 0, 2));
  csv.record(entry(oom, 1, 1, "big, wide"));
  csv.end({});
  EXPECT_EQ(text,
            "index,model,backend,precision,mode,batch,threads,repetition,"
            "state,valid,median_seconds,samples_per_second,case_key\n"
            "0,mnist-mlp,torch,fp32,train,32,2,0,ok,1,0.004,8000,key-0\n"
            "1,\"big, wide\",torch,fp32,train,32,1,0,oom,1,,,key-1\n");
}

TEST(Reporters, MarkdownIsTheStudiesTableWithDerivedFiguresAndPrices) {
  std::string text;
  Markdown md(text);
  const auto one = steps("mnist-mlp", 1, 0.008);
  const auto two = steps("mnist-mlp", 2, 0.005);
  results::ReportContext c;
  c.suite = "sweep";
  c.run_id = "R7";
  md.begin(c);
  md.record(entry(one, 0, 1));
  md.record(entry(two, 1, 2));
  results::Ending e;
  e.derived = {{"speedup", "mnist-mlp torch fp32 train b32", 2, 1.6}};
  e.price_note = "list price; relative to 1 threads";
  md.end(e);
  EXPECT_EQ(text,
            "Suite sweep (run R7): median ms per mini-batch; OOM: out of "
            "memory; (invalid: reasons): contended or otherwise "
            "untrustworthy.\n\n"
            "| model | backend | precision | mode | 1 thread | 2 threads |\n"
            "|---|---|---|---|---:|---:|\n"
            "| mnist-mlp | torch | fp32 | train | 8.000 | 5.000 |\n"
            "\nspeedup against threads:\n\n"
            "| cases | 2 |\n"
            "|---|---:|\n"
            "| mnist-mlp torch fp32 train b32 | 1.6 |\n"
            "\nCosts priced as list price; relative to 1 threads.\n");
}

TEST_F(TempDir, JsonFileHoldsEveryKindAndIsWrittenAlsoWhenInterrupted) {
  const std::string path = (dir_ / "out.json").string();
  JsonFile file;  // collects until a path is named, as a failing store does
  const auto a = steps("mnist-mlp", 1, 0.01);
  results::TrainRun t;
  t.task = "mnist-97";
  t.model = "mnist-cnn";
  results::InferenceRun q;
  q.model = "resnet-50";
  results::ReportContext c;
  c.environment = {{"cpu", {{"name", "test cpu"}}}};
  file.begin(c);
  file.record(entry(a, 0, 1));
  file.record(entry(t, 1, 1));
  file.record(entry(q, 2, 1));
  file.set_path(path);
  results::Ending e;
  e.derived = {{"max_batch", "g", 1, 256}};
  e.price_note = "p";
  e.interrupted = 15;
  file.end(e);
  std::ifstream in(path);
  const auto j = nlohmann::json::parse(in);
  const auto back = results::report_from_json(j);
  ASSERT_EQ(back.results.size(), 1u);
  EXPECT_EQ(back.results[0].model, "mnist-mlp");
  ASSERT_EQ(back.training.size(), 1u);
  EXPECT_EQ(back.training[0].task, "mnist-97");
  ASSERT_EQ(results::inference_runs(back.other).size(), 1u);
  EXPECT_EQ(back.environment["cpu"]["name"], "test cpu");
  EXPECT_EQ(j["derived"][0]["value"], 256);
  EXPECT_EQ(back.price_note, "p");
}

TEST_F(TempDir, ConsolePrintsEachKindsTableAndNothingWhenInterrupted) {
  const auto a = steps("mnist-mlp", 1, 0.01);
  results::TrainRun t;
  t.task = "mnist-97";
  Console console;
  console.record(entry(a, 0, 1));
  console.record(entry(t, 1, 1));
  const std::string text = console.text();
  EXPECT_NE(text.find("median ms"), std::string::npos);
  EXPECT_NE(text.find("10.000"), std::string::npos);  // 0.01 s in ms
  EXPECT_NE(text.find("to target s"), std::string::npos);
  EXPECT_NE(text.find("mnist-97"), std::string::npos);

  const std::string path = (dir_ / "console.txt").string();
  std::FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  Console quiet(f);
  quiet.record(entry(a, 0, 1));
  results::Ending e;
  e.interrupted = 2;
  quiet.end(e);
  std::fclose(f);
  EXPECT_EQ(fs::file_size(path), 0u);
}

TEST_F(TempDir, SqliteStoresNewRecordsNotResumedOnesAndFinishesTheRun) {
  study::Store store((dir_ / "r.db").string());
  study::RunRow row;
  row.suite = "quick";
  row.cases = 2;
  const std::string id = store.begin_run(row);
  std::string error;
  Sqlite sqlite(store, [&](const std::string& why) { error = why; });
  results::ReportContext c;
  c.run_id = id;
  sqlite.begin(c);
  const auto a = steps("mnist-mlp", 1, 0.01);
  auto earlier = entry(a, 0, 1);
  earlier.resumed = true;
  sqlite.record(earlier);
  sqlite.record(entry(a, 1, 2));
  results::Ending e;
  e.derived = {{"speedup", "g", 2, 1.5}};
  sqlite.end(e);
  EXPECT_EQ(store.stored_keys(id), (std::set<std::string>{"key-1"}));
  const auto rows = store.results(id);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].threads, 2);
  EXPECT_EQ(rows[0].median_seconds, 0.01);
  ASSERT_EQ(store.derived(id).size(), 1u);
  EXPECT_EQ(store.derived(id)[0].value, 1.5);
  EXPECT_FALSE(store.run(id)->finished_utc.empty());
  EXPECT_EQ(error, "");
}

TEST_F(TempDir, SqliteLeavesAnInterruptedRunUnfinished) {
  study::Store store((dir_ / "r.db").string());
  const std::string id = store.begin_run(study::RunRow{});
  Sqlite sqlite(store, nullptr);
  results::ReportContext c;
  c.run_id = id;
  sqlite.begin(c);
  const auto a = steps("mnist-mlp", 1, 0.01);
  sqlite.record(entry(a, 0, 1));
  results::Ending e;
  e.interrupted = 2;
  sqlite.end(e);
  EXPECT_EQ(store.stored_keys(id).size(), 1u);
  EXPECT_TRUE(store.run(id)->finished_utc.empty());
}

TEST_F(TempDir, ASqliteFailureIsSaidOnceAndNothingMoreIsStored) {
  const std::string db = (dir_ / "r.db").string();
  study::Store store(db);
  const std::string id = store.begin_run(study::RunRow{});
  std::vector<std::string> errors;
  Sqlite sqlite(store, [&](const std::string& why) { errors.push_back(why); });
  results::ReportContext c;
  c.run_id = id;
  sqlite.begin(c);
  const auto a = steps("mnist-mlp", 1, 0.01);
  // Another connection takes the results table away: the next insert fails
  // as it would on a damaged store.
  SQLite::Database(db, SQLite::OPEN_READWRITE).exec("DROP TABLE results");
  sqlite.record(entry(a, 0, 1));
  sqlite.record(entry(a, 1, 1));
  sqlite.end({});
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].rfind("storing a result failed: ", 0), 0u);
  EXPECT_NE(sqlite.error().find("results"), std::string::npos);
  // Nothing after the failure: the run was never finished.
  SQLite::Database check(db, SQLite::OPEN_READONLY);
  EXPECT_TRUE(
      check.execAndGet("SELECT finished_utc FROM runs WHERE id = '" + id + "'")
          .isNull());
}

TEST_F(TempDir, HtmlWritesThePageOfTheRunUnlessInterrupted) {
  const std::string path = (dir_ / "run.html").string();
  const auto a = steps("mnist-<mlp>", 1, 0.01);
  results::ReportContext c;
  c.run_id = "R9";
  c.suite = "quick";
  {
    Html stopped(path);
    stopped.begin(c);
    stopped.record(entry(a, 0, 1));
    results::Ending e;
    e.interrupted = 2;
    stopped.end(e);
    EXPECT_FALSE(fs::exists(path));
  }
  Html html(path);
  html.begin(c);
  html.record(entry(a, 0, 1));
  html.end({});
  std::ifstream in(path);
  std::stringstream page;
  page << in.rdbuf();
  EXPECT_NE(page.str().find("run R9 (quick)"), std::string::npos);
  // The model's name as text, escaped.
  EXPECT_NE(page.str().find("mnist-&lt;mlp&gt;"), std::string::npos);
  EXPECT_EQ(page.str().find("mnist-<mlp>"), std::string::npos);
}

}  // namespace
}  // namespace nnbench::reporters
