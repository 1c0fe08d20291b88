// The framework worker protocol with fake workers (fake_engine.py): steps
// timed by the worker arrive in chunks and are checked against nnbench's
// clock; a worker that crashes, hangs, writes garbage, lies about its times
// or refuses a layer ends in the state a native backend's failure would;
// one that prints to stdout does not disturb the protocol.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <optional>

#include "../unit/tiny_data.h"
#include "bench/step_loop.h"
#include "engines/worker/hello.h"
#include "engines/worker/worker_backend.h"
#include "engines/worker/zygote.h"
#include "machine/env_fixes.h"
#include "model/zoo/zoo.h"
#include "results/case_key.h"
#include "train/trainer.h"
#include "util/error.h"

namespace nnbench::engines::worker {
namespace {

std::unique_ptr<backend::Backend> fake() {
  // The fake engine lives in tests/worker, not in frameworks/.
  return make_worker_backend({"fake",
                              "../tests/worker/fake",
                              {"/usr/bin/python3"},
                              "nothing (a test engine)",
                              {}});
}

results::RunResult run(const char* mode, int iterations = 20) {
  setenv("FAKE_MODE", mode, 1);
  results::RunRequest r;
  r.backend = "fake";
  r.batch = 2;
  r.distinct_batches = 2;
  r.options.threads = 1;
  r.warmup = {1, 0, 30};
  r.stop.min_iterations = iterations;
  r.stop.min_seconds = 0;
  r.contention.action = results::ContentionPolicy::Action::kWarn;
  auto b = fake();
  return bench::run(*b, model::zoo::get("mnist-mlp"), r, machine::Peak{});
}

// test::tiny_dataset(): 12 training samples of mnist-mlp's input (3
// batches of 4), 8 to validate on.
train::Task tiny_task(const train::Schedule& schedule) {
  train::Task t;
  t.name = "fake-task";
  t.dataset = "tiny";
  t.model = "mnist-mlp";
  t.batch = 4;
  t.eval_batch = 8;
  t.schedule = schedule;
  t.target = 0;  // fixed epochs
  t.epochs = 2;
  return t;
}

class Worker : public ::testing::Test {
 protected:
  void SetUp() override {
    // tests/worker/fake/engine.py is found as frameworks/<folder>/engine.py.
    setenv("NNBENCH_FRAMEWORKS", NNBENCH_SOURCE_DIR "/frameworks", 1);
    unsetenv("NNBENCH_WORKER_TIMEOUT");
    setenv("FAKE_STEP", "0.01", 1);
  }
};

TEST_F(Worker, StepsComeInChunksTimedByTheWorkerAndCheckedByTheHarness) {
  const auto r = run("sleep");
  ASSERT_EQ(r.state, results::State::kOk) << r.message;
  ASSERT_EQ(r.samples.size(), 20u);
  for (double s : r.samples) {
    EXPECT_GE(s, 0.01);  // the fake sleeps 10 ms a step
    EXPECT_LT(s, 0.5);
  }
  ASSERT_TRUE(r.worker_clock);
  // 1 + 2 + 4 + 8 + 5: five chunks for 20 steps, not 20 round trips.
  EXPECT_EQ(r.worker_clock->chunks, 5);
  EXPECT_NEAR(r.worker_clock->step_seconds,
              std::accumulate(r.samples.begin(), r.samples.end(), 0.0), 1e-9);
  EXPECT_LE(r.worker_clock->step_seconds, r.worker_clock->wall_seconds);
  EXPECT_EQ(r.stopped_by, "minimums");
  EXPECT_EQ(r.effective.optimizer, "none (fake)");
  EXPECT_EQ(r.effective.extras.at("worker"), "../tests/worker/fake/engine.py");
  EXPECT_DOUBLE_EQ(r.first_loss, 0.5);
}

// nnbench's own process keeps freed memory (machine/env_fixes.h); its
// workers get the same malloc setting through GLIBC_TUNABLES, which the
// fake reports back from its environment, and the record names it.
TEST_F(Worker, TheWorkerKeepsFreedMemoryAsTheHarnessDoes) {
  unsetenv("NNBENCH_SYSTEM_MALLOC");
  unsetenv("NNBENCH_NO_ENV_FIXES");
  machine::apply_environment_fixes(nullptr);  // no re-exec without argv
  const auto r = run("sleep", 2);
  ASSERT_EQ(r.state, results::State::kOk) << r.message;
  const std::string seen = r.effective.extras.at("glibc_tunables");
  EXPECT_NE(seen.find("glibc.malloc.mmap_max=0"), std::string::npos) << seen;
  EXPECT_NE(seen.find("glibc.malloc.trim_threshold=2147483647"),
            std::string::npos)
      << seen;
  EXPECT_EQ(r.effective.extras.at("worker_malloc"), "GLIBC_TUNABLES=" + seen);
}

TEST_F(Worker, ChatterOnStdoutDoesNotDisturbTheProtocol) {
  const auto r = run("chatty", 5);
  EXPECT_EQ(r.state, results::State::kOk) << r.message;
  EXPECT_EQ(r.samples.size(), 5u);
}

// Shared by fresh and forked workers (ZygoteWorker below).
void expect_crash_names_the_signal() {
  const auto r = run("crash");
  EXPECT_EQ(r.state, results::State::kCrashed);
  EXPECT_NE(r.message.find("signal 11"), std::string::npos) << r.message;
}

void expect_hang_killed_at_the_timeout() {
  setenv("NNBENCH_WORKER_TIMEOUT", "2", 1);
  const auto r = run("hang");
  EXPECT_EQ(r.state, results::State::kTimeout);
  EXPECT_NE(r.message.find("did not answer 'steps' within 2 s"),
            std::string::npos)
      << r.message;
}

TEST_F(Worker, ACrashedWorkerIsACrashedRunNamingTheSignal) {
  expect_crash_names_the_signal();
}

TEST_F(Worker, AHungWorkerIsKilledAndTheRunTimesOut) {
  expect_hang_killed_at_the_timeout();
}

TEST_F(Worker, GarbageIsAFailedRunQuotingIt) {
  const auto r = run("garbage");
  EXPECT_EQ(r.state, results::State::kFailed);
  EXPECT_NE(r.message.find("garbage: 'this is not json'"), std::string::npos)
      << r.message;
}

TEST_F(Worker, StepTimesLongerThanTheCallAreRefused) {
  const auto r = run("liar");
  EXPECT_EQ(r.state, results::State::kFailed);
  EXPECT_NE(r.message.find("more than"), std::string::npos) << r.message;
}

TEST_F(Worker, ARefusedLayerIsUnimplementedNamingIt) {
  const auto r = run("unimpl");
  EXPECT_EQ(r.state, results::State::kUnimplemented);
  EXPECT_NE(r.message.find("layer 'dense_1' (linear)"), std::string::npos)
      << r.message;
}

TEST_F(Worker, AMissingEnvironmentSaysHowToSetItUp) {
  auto b = make_worker_backend({"nothing",
                                "pytorch",
                                {"venv:no-such-env"},
                                "scripts/setup nothing",
                                {}});
  const auto d = b->describe();
  EXPECT_EQ(d.unavailable,
            "no Python environment for nothing: run scripts/setup nothing");
  EXPECT_THROW(b->compile(model::zoo::get("mnist-mlp"), {}, {}), Error);
}

// Issue 29, item 10: what a worker prints reaches the user's terminal in
// error messages; an escape sequence in it (a title, a colour, a cleared
// screen) arrives as visible text, never as the control character.
TEST_F(Worker, EscapeSequencesOfAWorkerAreShownNotObeyed) {
  // In the log's tail, quoted when it crashed.
  auto r = run("escapes");
  EXPECT_EQ(r.state, results::State::kCrashed);
  EXPECT_EQ(r.message.find('\x1b'), std::string::npos) << r.message;
  EXPECT_EQ(r.message.find('\x07'), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("\\x1b]0;PWNED\\x07\\x1b[31mred"), std::string::npos)
      << r.message;
  // In the message of its failure.
  r = run("escaped-reply");
  EXPECT_EQ(r.state, results::State::kFailed);
  EXPECT_EQ(r.message.find('\x1b'), std::string::npos) << r.message;
  EXPECT_EQ(r.message.rfind("RuntimeError: \\x1b[2Jcleared", 0), 0u)
      << r.message;
}

// Item 11: a worker that streams bytes without an end of line is stopped at
// the reply bound (64 MiB), not read until nnbench runs out of memory or
// the step timeout (here 60 s, which the test would notice) passes.
TEST_F(Worker, AReplyWithoutAnEndOfLineIsBoundedAndTheWorkerKilled) {
  setenv("NNBENCH_WORKER_TIMEOUT", "60", 1);
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = run("flood");
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  EXPECT_EQ(r.state, results::State::kFailed);
  EXPECT_NE(r.message.find("more than 64.0 MiB and no end of line"),
            std::string::npos)
      << r.message.substr(0, 300);
  EXPECT_LT(took, 30);
}

// Item 12: a reply without a field the protocol needs names the field and
// the request in words, not the JSON library's "key 'effective' not found".
TEST_F(Worker, AMalformedReplyNamesWhatIsMissing) {
  const auto r = run("noeffective");
  EXPECT_EQ(r.state, results::State::kFailed);
  EXPECT_NE(r.message.find("the worker's reply to 'compile' has no object "
                           "'effective'"),
            std::string::npos)
      << r.message;
  EXPECT_EQ(r.message.find("json.exception"), std::string::npos) << r.message;
}

// Item 4: an engine whose Python hangs at start is unavailable once its
// start-up timeout passes (NNBENCH_WORKER_START_TIMEOUT, 30 s by default),
// not after the 600 s a step may take (here the step timeout is 20 s, so
// the old wait fails this test too).
TEST_F(Worker, AnEngineThatHangsAtStartIsUnavailableSoon) {
  const std::string dir =
      "/tmp/nnbench_worker_hang_" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  const std::string python = dir + "/python";
  std::ofstream(python) << "#!/bin/sh\nexec sleep 3600\n";
  std::filesystem::permissions(python, std::filesystem::perms::owner_all);
  setenv("XDG_CACHE_HOME", dir.c_str(), 1);  // no hello remembered
  setenv("NNBENCH_WORKER_TIMEOUT", "20", 1);
  setenv("NNBENCH_WORKER_START_TIMEOUT", "1", 1);
  auto b = make_worker_backend(
      {"hangs", "../tests/worker/fake", {python}, "scripts/setup hangs", {}});
  const auto t0 = std::chrono::steady_clock::now();
  const auto d = b->describe();
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  unsetenv("NNBENCH_WORKER_START_TIMEOUT");
  unsetenv("XDG_CACHE_HOME");
  std::filesystem::remove_all(dir);
  EXPECT_NE(d.unavailable.find("did not answer 'hello' within 1 s"),
            std::string::npos)
      << d.unavailable;
  EXPECT_LT(took, 10);
}

// hello's answer is kept on disk under a key of what could change it: a
// shared module an engine imports (frameworks/common/keras_model.py) too.
// Before, only worker.py and engine.py were in the key, and an answer
// from before a change to keras_model.py was still believed.
TEST_F(Worker, TheKeptHelloIsAskedAgainWhenASharedModuleChanges) {
  namespace fs = std::filesystem;
  const fs::path dir =
      "/tmp/nnbench_hello_key_" + std::to_string(getpid()) + "/frameworks";
  fs::create_directories(dir / "common" / "__pycache__");
  fs::create_directories(dir / "x");
  for (const char* f : {"common/worker.py", "common/keras_model.py",
                        "common/notes.txt", "x/engine.py", "x/helper.py"})
    std::ofstream(dir / f) << "# " << f << "\n";
  setenv("NNBENCH_FRAMEWORKS", dir.c_str(), 1);
  const Framework f{"x", "x", {"/usr/bin/python3"}, "nothing", {}};
  const std::string before = hello_key(f, "/usr/bin/python3");
  const auto later = [&](const char* file) {
    fs::last_write_time(
        dir / file, fs::last_write_time(dir / file) + std::chrono::hours(1));
    return hello_key(f, "/usr/bin/python3");
  };
  // Python's own cache and files that are not Python leave it.
  std::ofstream(dir / "common/__pycache__/keras_model.cpython-311.pyc") << "x";
  EXPECT_EQ(hello_key(f, "/usr/bin/python3"), before);
  EXPECT_EQ(later("common/notes.txt"), before);
  const std::string shared = later("common/keras_model.py");
  EXPECT_NE(shared, before);
  EXPECT_NE(later("x/helper.py"), shared);
  fs::remove_all(dir.parent_path());
}

int extra(const results::RunResult& r, const char* key) {
  return std::stoi(r.effective.extras.at(key));
}

// Outside a suite, a worker is a new process that imports its framework.
TEST_F(Worker, AWorkerOutsideASuiteImportsItsOwnFramework) {
  const auto r = run("sleep", 2);
  ASSERT_EQ(r.state, results::State::kOk) << r.message;
  EXPECT_EQ(extra(r, "imported_in"), extra(r, "pid"));
  EXPECT_EQ(extra(r, "ppid"), getpid());
  EXPECT_EQ(r.effective.extras.at("worker_start").rfind("a new process", 0),
            0u);
}

// Inside a suite (zygote.h), each run still gets a fresh worker process,
// forked from one zygote per engine and environment that did the import.
class ZygoteWorker : public Worker {
 protected:
  void SetUp() override {
    Worker::SetUp();
    zygotes_.emplace();
  }
  void TearDown() override { zygotes_.reset(); }
  std::optional<zygote::Zygotes> zygotes_;
};

TEST_F(ZygoteWorker, EachRunGetsAFreshWorkerForkedFromOneImport) {
  const auto a = run("sleep", 2), b = run("sleep", 2);
  ASSERT_EQ(a.state, results::State::kOk) << a.message;
  ASSERT_EQ(b.state, results::State::kOk) << b.message;
  EXPECT_NE(extra(a, "pid"), extra(b, "pid"));
  const int zygote = extra(a, "ppid");
  EXPECT_NE(zygote, getpid());
  EXPECT_EQ(extra(b, "ppid"), zygote);
  EXPECT_EQ(extra(a, "imported_in"), zygote);
  EXPECT_EQ(extra(b, "imported_in"), zygote);
  EXPECT_EQ(a.effective.extras.at("worker_start").rfind("forked", 0), 0u);
  // The zygote ends with the suite's Zygotes.
  zygotes_.reset();
  EXPECT_EQ(kill(zygote, 0), -1);
}

// The worker's environment is part of the zygote it comes from: a worker
// never runs in an environment set up for another.
TEST_F(ZygoteWorker, AnotherEnvironmentIsAnotherZygote) {
  const auto a = run("sleep", 2), b = run("chatty", 2);
  ASSERT_EQ(a.state, results::State::kOk) << a.message;
  ASSERT_EQ(b.state, results::State::kOk) << b.message;
  EXPECT_NE(extra(a, "ppid"), extra(b, "ppid"));
}

TEST_F(ZygoteWorker, ACrashedForkedWorkerNamesTheSignal) {
  expect_crash_names_the_signal();
}

TEST_F(ZygoteWorker, AHungForkedWorkerIsKilledAndTheRunTimesOut) {
  expect_hang_killed_at_the_timeout();
}

// The framework's own loop (--loop framework): each epoch's time is the
// worker's clock around the engine's loop, which the fake engine also
// timed by hand from inside: the two agree within a call's overhead, and
// the record carries what the framework counted and its loop in words.
TEST_F(Worker, TheFrameworkLoopIsTimedAsTheEngineTimedItByHand) {
  setenv("FAKE_MODE", "sleep", 1);
  setenv("FAKE_STEP", "0.02", 1);
  const std::string log =
      ::testing::TempDir() + "fake_fit_" + std::to_string(getpid()) + ".log";
  std::filesystem::remove(log);
  setenv("FAKE_FIT_LOG", log.c_str(), 1);
  backend::Capabilities can;
  can.lr_schedules = true;
  auto b = make_worker_backend(
      {"fake", "../tests/worker/fake", {"/usr/bin/python3"}, "nothing", can});
  train::TrainOptions o;
  o.threads = 1;
  o.loop = "framework";
  o.contention.max_excess_load = 4;  // a busy test machine is not the question
  o.contention.max_steal_fraction = 1;
  // A step schedule halving the rate each epoch: one rate per epoch.
  const train::TrainRun r = train::train_task(
      *b, tiny_task({"step", 0.1, 0.5, 1}), test::tiny_dataset(), o);
  ASSERT_EQ(r.state, results::State::kCompleted) << r.message;
  EXPECT_EQ(r.loop, "framework");
  EXPECT_EQ(r.effective.extras.at("training_loop"),
            "a fake loop over 3 batches");
  std::ifstream in(log);
  ASSERT_EQ(r.epochs.size(), 2u);
  for (const auto& e : r.epochs) {
    int batches = 0;
    double hand = 0, lr = 0;
    ASSERT_TRUE(in >> batches >> hand >> lr) << "epoch " << e.epoch;
    EXPECT_EQ(batches, 3);
    EXPECT_GE(hand, 3 * 0.02);
    EXPECT_GE(e.epoch_seconds, hand);
    EXPECT_LT(e.epoch_seconds - hand, 0.02) << "epoch " << e.epoch;
    EXPECT_DOUBLE_EQ(lr, e.epoch == 1 ? 0.1 : 0.05);
    EXPECT_DOUBLE_EQ(e.lr, lr);
    EXPECT_DOUBLE_EQ(e.loss, 0.25);
    EXPECT_DOUBLE_EQ(e.accuracy, 0.5);
  }
  EXPECT_DOUBLE_EQ(r.total_train_seconds,
                   r.epochs[0].epoch_seconds + r.epochs[1].epoch_seconds);
  EXPECT_EQ(results::key_of(r).mode, "training (framework loop)");
  std::filesystem::remove(log);

  // A rate that changes within an epoch cannot be given to one loop.
  const train::TrainRun cosine = train::train_task(
      *b, tiny_task({"cosine", 0.1}), test::tiny_dataset(), o);
  EXPECT_EQ(cosine.state, results::State::kInvalidArgs);
  EXPECT_NE(cosine.message.find("changes it within epoch 1"), std::string::npos)
      << cosine.message;
  unsetenv("FAKE_FIT_LOG");
}

}  // namespace
}  // namespace nnbench::engines::worker
