// Processes and interrupts (issue 18, items 14 and 15): children die with
// the suite or launcher that started them, whatever ends it, and leave no
// temporary folder; an interrupt keeps what finished; a user's mpirun
// binding is judged per machine.
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../common/eventually.h"
#include "cli_util.h"

namespace {

using namespace nnbench_cli_test;
using json = nlohmann::json;

class Processes : public Cli {
 protected:
  std::string db() const { return path("r.db"); }
};

// A process's state and parent, from /proc/PID/stat; state 0 when it is
// gone.
struct ProcStat {
  char state = 0;
  pid_t ppid = 0;
};
ProcStat proc_stat(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  ProcStat s;
  if (!std::getline(in, text)) return s;
  const auto close = text.rfind(')');  // the name may hold spaces
  if (close == std::string::npos) return s;
  std::istringstream rest(text.substr(close + 2));
  rest >> s.state >> s.ppid;
  return s;
}

// The processes a pid started (its children).
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> out;
  DIR* d = opendir("/proc");
  while (dirent* e = d ? readdir(d) : nullptr) {
    const pid_t pid = std::atoi(e->d_name);
    if (pid > 0 && proc_stat(pid).ppid == parent) out.push_back(pid);
  }
  if (d) closedir(d);
  return out;
}

// Alive, and not a zombie waiting to be reaped.
bool running(pid_t pid) {
  const char state = proc_stat(pid).state;
  return state != 0 && state != 'Z';
}

// Empty for a process that ended since it was listed (the suite's
// short-lived children do, and reading a gone process's file throws).
std::string cmdline(pid_t pid) {
  std::string s;
  try {
    s = slurp("/proc/" + std::to_string(pid) + "/cmdline");
  } catch (const std::exception&) {
    return "";
  }
  for (char& c : s)
    if (c == '\0') c = ' ';
  return s;
}

// The folder of a path in a command line ("--in /tmp/nnbench-case-X/...").
std::string folder_after(const std::string& cmd, const std::string& flag) {
  const auto at = cmd.find(flag + " ");
  if (at == std::string::npos) return "";
  const std::string p =
      cmd.substr(at + flag.size() + 1,
                 cmd.find(' ', at + flag.size() + 1) - at - flag.size() - 1);
  return fs::path(p).parent_path().string();
}

pid_t start(const std::string& command, const std::string& log) {
  const pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c",
          ("exec " + command + " > " + log + " 2>&1").c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

using nnbench_test::eventually;

// 14. SIGKILL, SIGINT or SIGTERM to a suite ends its `nnbench case` child
// within 2 s and leaves no temporary folder; an interrupted suite says how
// to resume.
TEST_F(Processes, KilledSuiteLeavesNoChildAndNoFolder) {
  // The second case runs for a minute unless it is ended.
  write("slow.toml",
        "[grid]\nmodels = [\"mnist-mlp\"]\nbatches = [8, 16]\nthreads = [1]\n"
        "[warmup]\nmin_iterations = 1\nmin_seconds = 0\n[stop]\n"
        "min_iterations = 3\nmin_seconds = 60\nmax_seconds = 120\n");
  for (const int sig : {SIGKILL, SIGINT, SIGTERM}) {
    const std::string log = path("log" + std::to_string(sig));
    const std::string store = path("k" + std::to_string(sig) + ".db");
    const pid_t suite =
        start(std::string(NNBENCH_EXE) + " suite " + path("slow.toml") +
                  " --db " + store + kNoContention,
              log);
    pid_t child = 0;
    ASSERT_TRUE(eventually(30, [&] {
      for (pid_t c : children_of(suite))
        if (cmdline(c).find(" case --in ") != std::string::npos) child = c;
      return child > 0;
    })) << slurp(log);
    const std::string folder = folder_after(cmdline(child), "--in");
    ASSERT_EQ(folder.rfind("/tmp/nnbench-case-", 0), 0u) << cmdline(child);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    kill(suite, sig);
    int status = 0;
    waitpid(suite, &status, 0);
    EXPECT_TRUE(eventually(2, [&] { return !running(child); }))
        << "signal " << sig << ": its case child " << child << " runs on";
    EXPECT_TRUE(eventually(2, [&] { return !fs::exists(folder); }))
        << "signal " << sig << ": " << folder << " is left";
    if (sig != SIGKILL) {
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 128 + sig)
          << slurp(log);
      EXPECT_NE(slurp(log).find("rerun the same command with --resume"),
                std::string::npos)
          << slurp(log);
    }
  }
}

// 11 and 14. An interrupt after the store failed still keeps the cases
// that finished: they reach --out, and the note says they are not stored.
TEST_F(Processes, InterruptAfterAStoreFailureKeepsTheFinishedCases) {
  // The MNIST MLP finishes in a second; ResNet-50 takes seconds a step.
  write("slow.toml",
        "[grid]\nmodels = [\"mnist-mlp\", \"resnet-50\"]\nbatches = [8]\n"
        "threads = [1]\n" +
            std::string(kFastRules));
  const std::string log = path("log");
  const pid_t suite =
      start("env NNBENCH_FAULT_STORE=1 " + std::string(NNBENCH_EXE) +
                " suite " + path("slow.toml") + " --db " + db() + " --out " +
                path("out.json") + kNoContention,
            log);
  // Wait for the second case's child: the first has finished by then.
  ASSERT_TRUE(eventually(90, [&] {
    return slurp(log).find("[2/2]") != std::string::npos;
  })) << slurp(log);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  kill(suite, SIGINT);
  int status = 0;
  waitpid(suite, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 130) << slurp(log);
  EXPECT_NE(slurp(log).find("the cases since are not stored"),
            std::string::npos)
      << slurp(log);
  const auto out = json::parse(slurp(path("out.json")));
  ASSERT_EQ(out["results"].size(), 1u) << out.dump();
  EXPECT_EQ(out["results"][0]["model"]["name"], "mnist-mlp");
}

// 14. The ranks of `run --distributed` die with their launcher and its
// folder goes with them.
TEST_F(Processes, KilledLauncherTakesItsRanksAndFolder) {
  for (const char* engine : {"gloo", "mpi"}) {
    const std::string log = path(std::string("l-") + engine);
    const pid_t launcher =
        start(std::string(NNBENCH_EXE) +
                  " run --model mnist-mlp --batch 8 --threads 1 "
                  "--warmup-iters 1 --warmup-time 0 --min-time 60 "
                  "--max-time 120 --distributed " +
                  engine + " --processes 2" + kNoContention,
              log);
    std::vector<pid_t> ranks;  // nnbench processes under the launcher
    std::string folder;
    ASSERT_TRUE(eventually(
        30,
        [&] {
          ranks.clear();
          std::vector<pid_t> todo = children_of(launcher);
          while (!todo.empty()) {
            const pid_t p = todo.back();
            todo.pop_back();
            const auto more = children_of(p);
            todo.insert(todo.end(), more.begin(), more.end());
            const std::string c = cmdline(p);
            if (c.rfind(std::string(NNBENCH_EXE) + " run --model", 0) == 0) {
              ranks.push_back(p);
              folder = folder_after(c, "--out");
            }
          }
          return ranks.size() == 2;
        }))
        << engine << ": " << slurp(log);
    ASSERT_EQ(folder.rfind("/tmp/nnbench-ranks-", 0), 0u) << folder;
    kill(launcher, SIGKILL);
    waitpid(launcher, nullptr, 0);
    for (pid_t r : ranks)
      EXPECT_TRUE(eventually(2, [&] { return !running(r); }))
          << engine << ": rank " << r << " runs on";
    EXPECT_TRUE(eventually(2, [&] { return !fs::exists(folder); }))
        << engine << ": " << folder << " is left";
  }
}

// 15. Under a user's mpirun, which binds each rank to its own core, two
// 1-thread ranks on two CPUs are not oversubscribed.
TEST_F(Processes, ExternalMpirunWithItsDefaultBindingIsValid) {
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
    GTEST_SKIP() << "needs 2 CPUs: mpirun binds each rank to a core";
  const std::string root = geteuid() == 0 ? " --allow-run-as-root" : "";
  const Outcome o =
      shell("mpirun -np 2" + root + " " + NNBENCH_EXE +
            " run --model mnist-mlp --backend onednn --threads 1 --batch 8"
            " --warmup-iters 1 --warmup-time 0 --min-iters 3 --min-time 0"
            " --distributed mpi" +
            kNoContention + " --out " + path("mpi.json"));
  ASSERT_EQ(o.code, 0) << o.output;
  const auto r = json::parse(slurp(path("mpi.json")))["results"][0];
  for (const auto& x : r["validity"]["reasons"])
    EXPECT_NE(x["reason"], "oversubscribed") << x["detail"];
  EXPECT_EQ(o.output.find("other thread"), std::string::npos) << o.output;
}

// Issue 29: `run`, `infer` and framework workers under signals. The
// framework here is the fake engine (tests/worker/fake) standing in as
// pytorch, on Debian's python3, with no other engine set up; each run's
// temporary folders are made under a TMPDIR of the test's own.
class Interrupts : public Processes {
 protected:
  void SetUp() override {
    Processes::SetUp();
    fs::create_directories(path("frameworks/pytorch"));
    fs::create_directories(path("venvs"));
    fs::create_directories(path("tmp"));
    fs::create_symlink(NNBENCH_SOURCE_DIR "/frameworks/common",
                       path("frameworks/common"));
    for (const char* f : {"engine.py", "framework.toml"})
      fs::copy_file(NNBENCH_SOURCE_DIR "/tests/worker/fake/" + std::string(f),
                    path("frameworks/pytorch/") + f);
  }
  std::string env() const {
    return "env TMPDIR=" + path("tmp") +
           " NNBENCH_FRAMEWORKS=" + path("frameworks") +
           " NNBENCH_VENVS=" + path("venvs") +
           " XDG_CACHE_HOME=" + path("cache") +
           " FAKE_MODE=sleep FAKE_STEP=0.2 ";
  }
  // What the runs left in their TMPDIR ("" nothing). Entries may vanish
  // while it is read.
  std::string tmp_left() const {
    std::string left;
    std::error_code ec;
    for (fs::directory_iterator e(path("tmp"), ec), end; !ec && e != end;
         e.increment(ec))
      left += e->path().filename().string() + " ";
    return left;
  }
  bool tmp_empty() const { return tmp_left().empty(); }
  bool tmp_has(const std::string& prefix) const {
    return (" " + tmp_left()).find(" " + prefix) != std::string::npos;
  }
  // The worker under `parent` that runs the fake engine's steps, once its
  // batches are loaded (before, a worker may be the short-lived one that
  // says hello).
  pid_t stepping_worker(pid_t parent) const {
    bool loaded = false;
    std::istringstream names(tmp_left());
    std::error_code ec;
    for (std::string n; names >> n;)
      if (fs::exists(path("tmp/" + n + "/batches"), ec)) loaded = true;
    if (!loaded) return 0;
    for (pid_t c : children_of(parent))
      if (cmdline(c).find("worker.py") != std::string::npos) return c;
    return 0;
  }
};

bool ended_by(int status, int sig) {
  return (WIFEXITED(status) && WEXITSTATUS(status) == 128 + sig) ||
         (WIFSIGNALED(status) && WTERMSIG(status) == sig);
}

const char* kSlowRun =
    " run --model mnist-mlp --backend pytorch --mode infer --batch 2"
    " --threads 1 --warmup-iters 1 --warmup-time 0 --min-time 60"
    " --max-time 120";

// Item 9: a stopped worker does not act on SIGTERM, so its parent-death
// signal is SIGKILL; its folder goes too (item 5, SIGKILL).
TEST_F(Interrupts, AStoppedWorkerDiesWithItsKilledParent) {
  const std::string log = path("log");
  const pid_t run = start(env() + NNBENCH_EXE + kSlowRun + kNoContention, log);
  pid_t worker = 0;
  ASSERT_TRUE(eventually(30, [&] {
    return (worker = stepping_worker(run)) > 0;
  })) << slurp(log);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  kill(worker, SIGSTOP);
  kill(run, SIGKILL);
  waitpid(run, nullptr, 0);
  EXPECT_TRUE(eventually(2, [&] { return !running(worker); }))
      << "the stopped worker " << worker << " outlives nnbench";
  if (running(worker)) kill(worker, SIGKILL);
  EXPECT_TRUE(eventually(3, [&] { return tmp_empty(); })) << tmp_left();
}

// Item 5: SIGINT and SIGTERM to `run` with a framework worker: the worker
// ends, the folders go, the exit code is 128 + the signal.
TEST_F(Interrupts, AnInterruptedRunEndsItsWorkerAndLeavesNoFolder) {
  for (const int sig : {SIGINT, SIGTERM}) {
    const std::string log = path("log" + std::to_string(sig));
    const pid_t run =
        start(env() + NNBENCH_EXE + kSlowRun + kNoContention, log);
    pid_t worker = 0;
    ASSERT_TRUE(eventually(30, [&] {
      return (worker = stepping_worker(run)) > 0;
    })) << slurp(log);
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    kill(run, sig);
    int status = 0;
    waitpid(run, &status, 0);
    EXPECT_TRUE(ended_by(status, sig)) << status << ": " << slurp(log);
    EXPECT_TRUE(eventually(2, [&] { return !running(worker); }));
    EXPECT_TRUE(eventually(3, [&] { return tmp_empty(); }))
        << "signal " << sig << ": " << tmp_left();
  }
}

// Item 5: `infer` (LoadGen, with its trace and the engine's batches in its
// folders) interrupted or killed leaves none of them.
TEST_F(Interrupts, AnInterruptedInferLeavesNoFolder) {
  for (const int sig : {SIGINT, SIGTERM, SIGKILL}) {
    const std::string log = path("infer" + std::to_string(sig));
    const pid_t infer =
        start(env() + NNBENCH_EXE +
                  " infer --model mnist-mlp --backend reference --threads 1"
                  " --scenario offline --min-duration-s 60" +
                  kNoContention,
              log);
    ASSERT_TRUE(eventually(30, [&] { return tmp_has("nnbench-loadgen-"); }))
        << slurp(log);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    kill(infer, sig);
    int status = 0;
    waitpid(infer, &status, 0);
    if (sig != SIGKILL) EXPECT_TRUE(ended_by(status, sig)) << slurp(log);
    EXPECT_TRUE(eventually(3, [&] { return tmp_empty(); }))
        << "signal " << sig << ": " << tmp_left();
  }
}

}  // namespace
