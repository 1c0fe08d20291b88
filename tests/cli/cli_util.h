#pragma once
// Running nnbench as a user does, for the CLI tests.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace nnbench_cli_test {

namespace fs = std::filesystem;

struct Outcome {
  int code;
  std::string output;  // stdout and stderr together
};

// Fast measurement settings so each run takes a second or so.
inline const char* kFast =
    " --threads 2 --warmup-iters 1 --warmup-time 0 --min-iters 3"
    " --min-time 0";

// The same, in a suite file's words.
inline const char* kFastRules = R"(
[warmup]
min_iterations = 1
min_seconds = 0
[stop]
min_iterations = 3
min_seconds = 0
)";

// ctest runs beside other tests on 2 cores: a contended run (invalid, never
// priced) is right there but is not what they test. Contention's own tests
// run alone (tests/contention).
inline const char* kNoContention =
    " --on-contention warn --contention-max-load 4 --contention-max-steal 1";

inline std::string slurp(const std::string& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A shell command line, its output and exit code.
inline Outcome shell(const std::string& command) {
  const std::string cmd = command + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

inline Outcome nnbench(const std::string& args) {
  return shell(std::string(NNBENCH_EXE) + " " + args);
}

class Cli : public ::testing::Test {
 protected:
  // One folder per test: a parameterized test's name ("Run/pytorch")
  // would otherwise make two, and only the inner one was removed.
  void SetUp() override {
    std::string name =
        ::testing::UnitTest::GetInstance()->current_test_info()->name();
    for (char& c : name)
      if (c == '/') c = '_';
    dir_ = fs::temp_directory_path() /
           ("nnbench_cli_" + std::to_string(::getpid()) + "_" + name);
    fs::create_directories(dir_);
  }
  // A process the test started may still be writing there (a killed
  // suite's child winding down): removal is retried, never thrown.
  void TearDown() override {
    for (int i = 0; i < 50; ++i) {
      std::error_code ec;
      fs::remove_all(dir_, ec);
      if (!fs::exists(dir_, ec)) return;
      ::usleep(100000);
    }
    ADD_FAILURE() << dir_ << " could not be removed";
  }
  std::string path(const std::string& name) const { return dir_ / name; }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(path(name)) << text;
  }
  fs::path dir_;
};

inline void expect_usage_error(const Outcome& o, const std::string& needle) {
  EXPECT_EQ(o.code, 2) << o.output;
  EXPECT_NE(o.output.find(needle), std::string::npos) << o.output;
}

}  // namespace nnbench_cli_test
