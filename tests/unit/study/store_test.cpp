// The results store: what goes in comes out, resumes see stored keys,
// concurrent writers lose nothing, a newer schema is refused.
#include "study/store.h"

#include <SQLiteCpp/Database.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "results/result.h"
#include "util/error.h"

namespace nnbench::study {
namespace {

namespace fs = std::filesystem;

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("nnbench-store-test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    db_ = (dir_ / "sub" / "r.db").string();  // the folder is created
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  std::string db_;
};

PlannedCase a_case(int i) {
  PlannedCase p;
  p.scenario = "throughput";
  p.c.model = "mnist-mlp";
  p.c.request.backend = "torch";
  p.c.request.batch = 8 + i;
  p.key = "key-" + std::to_string(i);
  return p;
}

results::RunResult a_record(double median) {
  results::RunResult r;
  r.model = "mnist-mlp";
  r.backend = "torch";
  r.samples = {median};
  r.stats.median = median;
  r.samples_per_second = 8 / median;
  return r;
}

TEST_F(StoreTest, RunsAndResultsComeBackAsStored) {
  Store s(db_);
  RunRow row;
  row.suite = "quick";
  row.suite_file = "suites/quick.toml";
  row.environment = {{"cpu", {{"name", "x"}}}};
  row.cases = 3;
  const std::string id = s.begin_run(row);
  s.add_result(id, 0, a_case(0), a_record(0.004));
  results::RunResult oom = a_record(0);
  oom.state = results::State::kOom;
  s.add_result(id, 2, a_case(2), oom);
  EXPECT_EQ(s.stored_keys(id), (std::set<std::string>{"key-0", "key-2"}));
  const auto runs = s.runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].stored, 2);
  EXPECT_TRUE(runs[0].finished_utc.empty());
  s.finish_run(id);
  EXPECT_FALSE(s.run(id)->finished_utc.empty());
  const auto rows = s.results(id);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].median_seconds, 0.004);
  EXPECT_EQ(rows[0].batch, 8);
  EXPECT_EQ(rows[1].state, "oom");
  EXPECT_EQ(rows[1].median_seconds, 0);  // NULL: not measured
  EXPECT_EQ(rows[1].record["state"], "oom");
  EXPECT_EQ(s.integrity_check(), "ok");
}

TEST_F(StoreTest, FourProcessesWritingAtOnceLoseNothing) {
  std::string id;
  {
    Store s(db_);
    id = s.begin_run(RunRow{});
  }
  std::vector<pid_t> kids;
  for (int w = 0; w < 4; ++w) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int code = 0;
      try {
        Store s(db_);
        for (int i = 0; i < 250; ++i)
          s.add_result(id, w * 250 + i, a_case(w * 250 + i), a_record(0.001));
      } catch (...) {
        code = 1;
      }
      _exit(code);
    }
    kids.push_back(pid);
  }
  for (pid_t k : kids) {
    int status = 0;
    waitpid(k, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  Store s(db_);
  EXPECT_EQ(s.results(id).size(), 1000u);
  EXPECT_EQ(s.integrity_check(), "ok");
}

// A version 1 store (before `derived`) is migrated when opened.
TEST_F(StoreTest, VersionOneStoreIsMigrated) {
  std::string id;
  {
    Store s(db_);
    id = s.begin_run(RunRow{});
    s.add_result(id, 0, a_case(0), a_record(0.002));
  }
  {
    SQLite::Database raw(db_, SQLite::OPEN_READWRITE);
    raw.exec("DROP TABLE derived");
    raw.exec("DROP TABLE run_digests");
    raw.exec("PRAGMA user_version = 1");
  }
  Store s(db_);
  EXPECT_EQ(s.results(id).size(), 1u);  // kept
  s.set_derived(id, {{"speedup", "g", 2, 1.8}});
  ASSERT_EQ(s.derived(id).size(), 1u);
  EXPECT_EQ(s.derived(id)[0].value, 1.8);
  EXPECT_EQ(s.run_digest(id), std::nullopt);  // version 3's table, empty
}

// Version 2 (no run digests) gains the table; its runs have none until an
// import compares them.
TEST_F(StoreTest, VersionTwoStoreGainsRunDigests) {
  std::string id;
  {
    Store s(db_);
    id = s.begin_run(RunRow{});
  }
  {
    SQLite::Database raw(db_, SQLite::OPEN_READWRITE);
    raw.exec("DROP TABLE run_digests");
    raw.exec("PRAGMA user_version = 2");
  }
  Store s(db_);
  EXPECT_EQ(s.run_digest(id), std::nullopt);
  s.set_run_digest(id, "abc");
  EXPECT_EQ(s.run_digest(id), "abc");
}

TEST_F(StoreTest, NewerSchemaIsRefusedNamingIt) {
  {
    Store s(db_);  // creates version 1
  }
  {
    SQLite::Database raw(db_, SQLite::OPEN_READWRITE);
    raw.exec("PRAGMA user_version = 99");
  }
  try {
    Store s(db_);
    ADD_FAILURE() << "opened";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("schema 99"), std::string::npos)
        << e.what();
  }
}

// Creating and migrating the schema is safe when several processes open
// the same new store at once (before: "table runs already exists" or
// "database is locked" in some of them). Eight processes released together
// by a pipe, on a fresh file each round.
TEST_F(StoreTest, ProcessesCreatingOneNewStoreAtOnceAllSucceed) {
  for (int round = 0; round < 5; ++round) {
    const std::string db = (dir_ / ("new" + std::to_string(round) + ".db"));
    int gate[2];
    ASSERT_EQ(pipe(gate), 0);
    std::vector<pid_t> kids;
    for (int w = 0; w < 8; ++w) {
      const pid_t pid = fork();
      ASSERT_GE(pid, 0);
      if (pid == 0) {
        close(gate[1]);
        char c;
        while (read(gate[0], &c, 1) > 0) {
        }  // released when the parent closes its end
        int code = 0;
        try {
          Store s(db);
          s.begin_run(RunRow{});
        } catch (const std::exception& e) {
          std::fprintf(stderr, "worker %d: %s\n", w, e.what());
          code = 1;
        }
        _exit(code);
      }
      kids.push_back(pid);
    }
    close(gate[0]);
    close(gate[1]);
    for (pid_t k : kids) {
      int status = 0;
      waitpid(k, &status, 0);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
          << "round " << round;
    }
    Store s(db);
    EXPECT_EQ(s.runs().size(), 8u);
    EXPECT_EQ(s.integrity_check(), "ok");
  }
}

// Commands that only read never create a store (or its folder).
TEST_F(StoreTest, ReadingAMissingStoreIsRefusedAndCreatesNothing) {
  try {
    Store s(db_, Store::Open::kExisting);
    ADD_FAILURE() << "opened";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(db_ + ": no results store here"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(dir_ / "sub"));
}

// A damaged page is a StoreError naming the store and what was being done,
// not SQLite's exception escaping to std::terminate.
TEST_F(StoreTest, DamagedPagesAreAStoreErrorNamingTheStore) {
  std::string id;
  {
    Store s(db_);
    id = s.begin_run(RunRow{});
    for (int i = 0; i < 200; ++i)
      s.add_result(id, i, a_case(i), a_record(0.001));
  }
  {
    std::fstream f(db_, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(0, std::ios::end);
    const std::streamoff size = f.tellg();
    ASSERT_GT(size, 8 * 4096);
    f.seekp(4096);
    f << std::string(static_cast<size_t>(size - 4096), '\x5a');
  }
  try {
    Store s(db_, Store::Open::kExisting);
    s.results(id);
    ADD_FAILURE() << "read a damaged store";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(db_ + ": ", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace nnbench::study
