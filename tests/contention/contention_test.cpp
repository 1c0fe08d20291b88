// Contention is caught while measuring: a run with busy processes pinned to
// its CPUs is marked invalid ("contended"); the same run on a quiet machine
// is valid. These tests run serially (tests/CMakeLists.txt): another test
// beside them would be a co-runner too.
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <vector>

#include "backend/registry.h"
#include "bench/step_loop.h"
#include "model/zoo/zoo.h"

namespace nnbench {
namespace {

std::vector<int> allowed_cpus() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  sched_getaffinity(0, sizeof(mask), &mask);
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &mask)) cpus.push_back(c);
  return cpus;
}

// One spinning child process pinned to each CPU this process may use.
class BusyProcesses {
 public:
  BusyProcesses() {
    for (int cpu : allowed_cpus()) {
      const pid_t pid = fork();
      if (pid == 0) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        sched_setaffinity(0, sizeof(one), &one);
        volatile unsigned long spins = 0;
        while (true) spins = spins + 1;
      }
      pids_.push_back(pid);
    }
  }
  ~BusyProcesses() {
    for (pid_t p : pids_) kill(p, SIGKILL);
    for (pid_t p : pids_) waitpid(p, nullptr, 0);
  }

 private:
  std::vector<pid_t> pids_;
};

results::RunRequest request(int threads) {
  results::RunRequest r;
  r.backend = "reference";
  r.mode = backend::Mode::kTrain;
  r.batch = 32;
  r.options.threads = threads;
  r.warmup = {2, 0.2, 5};
  r.stop.min_iterations = 5;
  r.stop.min_seconds = 1.5;
  r.contention.action = results::ContentionPolicy::Action::kWarn;
  return r;
}

results::RunResult measure(int threads) {
  auto b = backend::make_backend("reference");
  return bench::run(*b, model::zoo::get("mnist-mlp"), request(threads), {});
}

TEST(Contention, BusyProcessesOnTheRunsCpusMakeItInvalid) {
  const int cpus = static_cast<int>(allowed_cpus().size());
  results::RunResult r;
  {
    BusyProcesses busy;
    r = measure(cpus);
  }
  ASSERT_EQ(r.state, results::State::kOk) << r.message;
  ASSERT_FALSE(r.validity.valid());
  EXPECT_EQ(r.validity.reasons.at(0).reason, "contended");
  // One spinner per CPU beside one run thread per CPU: a fair scheduler
  // gives each about half, so others load about cpus / 2 CPUs (0.99 of 2
  // measured) and the run gets about half its CPU time. Both far beyond
  // the rule's 0.05 CPU.
  EXPECT_GT(r.cpu_usage.other_load(), 0.3 * cpus);
  EXPECT_LT(r.cpu_usage.cpu_share(), 0.75);
  EXPECT_EQ(r.attempts, 1);  // warn: no retry
}

TEST(Contention, TheSameRunOnAQuietMachineIsValid) {
  const int cpus = static_cast<int>(allowed_cpus().size());
  const auto r = measure(cpus);
  ASSERT_EQ(r.state, results::State::kOk) << r.message;
  EXPECT_TRUE(r.validity.valid()) << r.validity.reasons.at(0).detail;
  EXPECT_GT(r.cpu_usage.process_cpu_seconds, 0);
  EXPECT_GE(r.cpu_usage.wall_seconds, 1.5);
}

TEST(Contention, RetryRerunsAContendedRunThenRecordsItInvalid) {
  results::RunRequest req = request(static_cast<int>(allowed_cpus().size()));
  req.stop.min_seconds = 0.5;
  req.contention.action = results::ContentionPolicy::Action::kRetry;
  req.contention.retries = 1;
  req.contention.pause_seconds = 0;
  BusyProcesses busy;
  auto b = backend::make_backend("reference");
  const auto r = bench::run(*b, model::zoo::get("mnist-mlp"), req, {});
  EXPECT_EQ(r.attempts, 2);
  EXPECT_FALSE(r.validity.valid());
}

}  // namespace
}  // namespace nnbench
