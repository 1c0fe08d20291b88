// A suite whose cases crash, hang and run out of memory still stores every
// case; a runner killed mid-suite resumes to exactly the planned rows.
// Runs nnbench_faulty (faulty_main.cpp): nnbench plus a misbehaving backend.
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

namespace {

namespace fs = std::filesystem;

// Case order: ok, abort, ok, hang, oom, ok.
const char* kSuite = R"(
description = "isolation test"
[grid]
models = ["mnist-mlp", "mnist-cnn", "resnet-56", "fcn-r", "alexnet-r",
          "imdb-fasttext"]
backends = ["faulty"]
batches = [2]
threads = [1]
[warmup]
min_iterations = 1
min_seconds = 0.0
[stop]
min_iterations = 2
min_seconds = 0.0
[isolation]
timeout_seconds = 4
memory_limit_gib = 6
)";

class Isolation : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("nnbench-isolation-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    suite_ = (dir_ / "faults.toml").string();
    std::ofstream(suite_) << kSuite;
    db_ = (dir_ / "r.db").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string command(const std::string& extra) const {
    return std::string(NNBENCH_FAULTY_EXE) + " suite " + suite_ + " --db " +
           db_ + " --on-contention warn " + extra;
  }
  // state of each stored case, by model.
  std::map<std::string, std::string> states() const {
    SQLite::Database db(db_);
    SQLite::Statement q(db, "SELECT model, state FROM results");
    std::map<std::string, std::string> out;
    while (q.executeStep())
      out[q.getColumn(0).getString()] = q.getColumn(1).getString();
    return out;
  }
  int rows() const {
    SQLite::Database db(db_);
    return db.execAndGet("SELECT COUNT(*) FROM results").getInt();
  }
  fs::path dir_;
  std::string suite_, db_;
};

TEST_F(Isolation, EveryCaseIsStoredWithItsState) {
  const int status = std::system(
      (command("") + " > " + (dir_ / "out").string() + " 2>&1").c_str());
  std::ifstream in(dir_ / "out");
  std::stringstream log;
  log << in.rdbuf();
  // Completed, with failures: exit 1 (2 would mean it could not start).
  EXPECT_EQ(WEXITSTATUS(status), 1) << log.str();
  const auto s = states();
  EXPECT_EQ(s.size(), 6u) << log.str();
  EXPECT_EQ(s.at("mnist-mlp"), "ok");
  EXPECT_EQ(s.at("mnist-cnn"), "crashed");
  EXPECT_EQ(s.at("resnet-56"), "ok");
  EXPECT_EQ(s.at("fcn-r"), "timeout");
  EXPECT_EQ(s.at("alexnet-r"), "oom");
  EXPECT_EQ(s.at("imdb-fasttext"), "ok");
  SQLite::Database db(db_);
  const std::string crash =
      db.execAndGet("SELECT record FROM results WHERE model = 'mnist-cnn'")
          .getString();
  EXPECT_NE(crash.find("signal 6"), std::string::npos) << crash;
  const std::string oom =
      db.execAndGet("SELECT record FROM results WHERE model = 'alexnet-r'")
          .getString();
  EXPECT_NE(oom.find("\"oom_source\":\"allocation\""), std::string::npos)
      << oom;
  EXPECT_EQ(db.execAndGet("PRAGMA integrity_check").getString(), "ok");
  // The study's table marks the OOM cell and names the other failures.
  const std::string id = db.execAndGet("SELECT id FROM runs").getString();
  const std::string md = (dir_ / "t.md").string();
  ASSERT_EQ(std::system((std::string(NNBENCH_FAULTY_EXE) + " results --db " +
                         db_ + " export " + id + " --format md --out " + md)
                            .c_str()),
            0);
  std::ifstream t(md);
  std::stringstream table;
  table << t.rdbuf();
  EXPECT_NE(table.str().find("| alexnet-r | faulty | fp32 | train | OOM |"),
            std::string::npos)
      << table.str();
  EXPECT_NE(table.str().find("| mnist-cnn | faulty | fp32 | train | crashed |"),
            std::string::npos)
      << table.str();
}

// The largest batch that fits, each probe isolated and stored.
TEST_F(Isolation, FindMaxBatchBisectsToTheLargestThatFits) {
  std::ofstream(suite_) << R"([grid]
models = ["lstm-ptb"]
backends = ["faulty"]
threads = [1]
)";
  const std::string out = (dir_ / "out").string();
  const int status = std::system(
      (command("--find-max-batch --max-batch-cap 64") + " > " + out + " 2>&1")
          .c_str());
  std::ifstream in(out);
  std::stringstream log;
  log << in.rdbuf();
  EXPECT_EQ(WEXITSTATUS(status), 0) << log.str();
  EXPECT_NE(log.str().find("max batch lstm-ptb faulty fp32 train t1: 12\n"),
            std::string::npos)
      << log.str();
  // Probes 1 2 4 8 16 12 14 13: five fit, three ran out of memory.
  SQLite::Database db(db_);
  EXPECT_EQ(
      db.execAndGet("SELECT COUNT(*) FROM results WHERE state = 'ok'").getInt(),
      5);
  EXPECT_EQ(db.execAndGet("SELECT COUNT(*) FROM results WHERE state = 'oom'")
                .getInt(),
            3);
  EXPECT_EQ(db.execAndGet("SELECT value FROM derived WHERE name = 'max_batch'")
                .getDouble(),
            12);
}

// A malformed suite file: exit 2 naming file:line:column, nothing stored.
TEST_F(Isolation, MalformedSuiteWritesNothing) {
  for (const char* bad : {"[grid]\nmodels = [\"a\"\n",                // syntax
                          "[grid]\nmodels = [\"a\"]\nbatch = [1]\n",  // key
                          "[grid]\nmodels = \"a\"\n"}) {              // type
    std::ofstream(suite_) << bad;
    const std::string out = (dir_ / "out").string();
    const int status =
        std::system((command("") + " > " + out + " 2>&1").c_str());
    std::ifstream in(out);
    std::stringstream log;
    log << in.rdbuf();
    EXPECT_EQ(WEXITSTATUS(status), 2) << log.str();
    EXPECT_NE(log.str().find(suite_ + ":"), std::string::npos) << log.str();
    EXPECT_FALSE(fs::exists(db_)) << bad;
  }
}

TEST_F(Isolation, KilledRunnerResumesToExactlyThePlannedRows) {
  const std::string err = (dir_ / "err").string();
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", ("exec " + command("") + " 2> " + err).c_str(),
          nullptr);
    _exit(127);
  }
  // Kill it (SIGKILL) while case 3 is in flight.
  std::string text;
  for (int i = 0; i < 600 && text.find("[3/6]") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::ifstream in(err);
    std::stringstream s;
    s << in.rdbuf();
    text = s.str();
  }
  ASSERT_NE(text.find("[3/6]"), std::string::npos) << text;
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  const int stored = rows();
  EXPECT_GE(stored, 2);
  // Case 3 may have ended between the progress line and the kill.
  EXPECT_LE(stored, 3);
  const std::string mark = "GFLOP/s, run ";
  const auto at = text.find(mark);
  ASSERT_NE(at, std::string::npos) << text;
  const auto from = at + mark.size();
  const std::string id = text.substr(from, text.find('\n', from) - from);
  const int status =
      std::system((command("--resume " + id) + " > /dev/null 2>&1").c_str());
  EXPECT_EQ(WEXITSTATUS(status), 1);
  EXPECT_EQ(rows(), 6);
  EXPECT_EQ(states().size(), 6u);
}

}  // namespace
