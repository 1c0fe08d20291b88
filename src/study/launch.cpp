#include "study/launch.h"

#include <fmt/core.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>
#include <vector>

#include "util/atomic_file.h"
#include "util/error.h"
#include "util/lifeline.h"
#include "util/spawn.h"
#include "util/temp_dir.h"

namespace nnbench::study {
namespace {

namespace fs = std::filesystem;

// A rank's run that ended not ok and said so (nnbench's exit code 1): its
// record tells; anything else but 0 is a failure of the rank.
constexpr int kRunNotOk = 1;

std::vector<std::string> own_arguments() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> args;
  std::string a;
  while (std::getline(in, a, '\0')) args.push_back(a);
  return args;
}

// This program's arguments for a rank: with --out pointing into the
// launcher's folder (--processes stays: the rank records what was asked,
// and knows from its environment that it is a rank).
std::vector<std::string> rank_arguments(const std::string& rank0_out) {
  std::vector<std::string> in = own_arguments(), out;
  out.push_back(fs::read_symlink("/proc/self/exe").string());
  for (size_t i = 1; i < in.size(); ++i) {
    const std::string& a = in[i];
    if (a == "--out") {
      ++i;
      continue;
    }
    if (a.rfind("--out=", 0) == 0) continue;
    out.push_back(a);
  }
  out.push_back("--out");
  out.push_back(rank0_out);
  return out;
}

// A rank (or mpirun) dies with this process and is told of interrupts.
// A rank started here holds SIGTERM until it has registered its folder
// (cli/app.cpp); mpirun does not (it would never release it).
pid_t spawn(const std::vector<std::string>& args,
            const std::map<std::string, std::string>& env, int stderr_fd,
            bool hold) {
  util::lifeline::install();
  util::SpawnOptions o;
  o.env = util::environment_with(env);
  if (stderr_fd >= 0) o.fds = {{stderr_fd, 2}};
  o.hold = hold;
  o.search_path = true;  // mpirun
  const pid_t pid = util::spawn(args, o);
  util::lifeline::add_child(pid, false);
  return pid;
}

std::string describe_status(int status) {
  if (WIFSIGNALED(status))
    return fmt::format("was killed by signal {} ({})", WTERMSIG(status),
                       strsignal(WTERMSIG(status)));
  return fmt::format("exited with code {}", WEXITSTATUS(status));
}

struct Outcome {
  int exit_code = 0;
  int failed_rank = -1;
  std::string why;
};

// Waits for every child; after the first failure, gives the rest
// `timeout` seconds, then kills them.
Outcome wait_all(const std::map<pid_t, int>& ranks, double timeout) {
  Outcome o;
  std::map<pid_t, int> running = ranks;
  auto deadline = std::chrono::steady_clock::time_point::max();
  while (!running.empty()) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid <= 0) {
      if (util::lifeline::interrupted() &&
          deadline == std::chrono::steady_clock::time_point::max())
        deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      if (std::chrono::steady_clock::now() > deadline) {
        for (const auto& [p, r] : running) kill(p, SIGKILL);
        deadline = std::chrono::steady_clock::time_point::max();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    const auto it = running.find(pid);
    if (it == running.end()) continue;
    const int rank = it->second;
    running.erase(it);
    util::lifeline::remove_child(pid);
    // Exit code 1 is a run that ended not ok and said so (its result and
    // message are rank 0's to record); anything else is a failure.
    const bool ok = WIFEXITED(status) && (WEXITSTATUS(status) == 0 ||
                                          WEXITSTATUS(status) == kRunNotOk);
    if (rank == 0 && WIFEXITED(status)) o.exit_code = WEXITSTATUS(status);
    if (!ok && o.failed_rank < 0 && !util::lifeline::interrupted()) {
      o.failed_rank = rank;
      o.why = describe_status(status);
      deadline = std::chrono::steady_clock::now() +
                 std::chrono::milliseconds(static_cast<int64_t>(timeout * 1e3));
    }
  }
  return o;
}

// mpirun names the rank that ended its job on stderr ("process rank 1
// with PID ... exited on signal 9"): copied through, and read for that.
Outcome run_mpirun(const std::vector<std::string>& args) {
  int fds[2];
  if (pipe(fds) != 0) throw Error("pipe failed");
  const pid_t pid = spawn(args, {}, fds[1], false);
  close(fds[1]);
  FILE* in = fdopen(fds[0], "r");
  std::string text;
  char line[4096];
  while (std::fgets(line, sizeof line, in)) {
    std::fputs(line, stderr);
    text += line;
  }
  std::fclose(in);
  int status = 0;
  waitpid(pid, &status, 0);
  util::lifeline::remove_child(pid);
  Outcome o;
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : kRunNotOk;
  std::smatch m;
  static const std::regex rank_re(
      R"(process rank (\d+) with PID \d+ on node \S+ (exited on signal \d+[^\n.]*))");
  if (std::regex_search(text, m, rank_re)) {
    o.failed_rank = std::stoi(m[1]);
    o.why = m[2];
  } else if (o.exit_code != 0 && o.exit_code != kRunNotOk) {
    o.failed_rank = 0;
    o.why = "mpirun " + describe_status(status);
  }
  return o;
}

}  // namespace

LaunchOutcome launch_ranks(const Launch& l) {
  // Removed however this ends: an interrupt's unwinding, or (its watcher)
  // this process and its ranks killed.
  const util::TempDir folder("nnbench-ranks");
  const fs::path dir = folder.path();
  const std::string rank0_out = (dir / "rank0.json").string();
  const auto args = rank_arguments(rank0_out);
  Outcome o;
  if (l.engine == "mpi") {
    std::vector<std::string> cmd = {
        "mpirun",    "-np",  std::to_string(l.processes),
        "--bind-to", "none", "--oversubscribe"};
    if (geteuid() == 0) cmd.push_back("--allow-run-as-root");
    cmd.insert(cmd.end(),
               {"-x", "NNBENCH_LAUNCH_DIR", "-x", "NNBENCH_LAUNCHER_PID"});
    cmd.insert(cmd.end(), args.begin(), args.end());
    setenv("NNBENCH_LAUNCH_DIR", dir.c_str(), 1);  // for mpirun's -x
    setenv("NNBENCH_LAUNCHER_PID", std::to_string(getpid()).c_str(), 1);
    o = run_mpirun(cmd);
    unsetenv("NNBENCH_LAUNCH_DIR");
    unsetenv("NNBENCH_LAUNCHER_PID");
  } else {
    const std::string rendezvous = l.rendezvous.empty()
                                       ? "file:" + (dir / "store").string()
                                       : l.rendezvous;
    std::map<pid_t, int> ranks;
    for (int r = 0; r < l.processes; ++r)
      ranks[spawn(args,
                  {{"NNBENCH_RANK", std::to_string(r)},
                   {"NNBENCH_WORLD_SIZE", std::to_string(l.processes)},
                   {"NNBENCH_RENDEZVOUS", rendezvous},
                   {"NNBENCH_LAUNCH_DIR", dir.string()},
                   {"NNBENCH_LAUNCHER_PID", std::to_string(getpid())}},
                  -1, true)] = r;
    o = wait_all(ranks, l.timeout_seconds);
  }
  util::lifeline::check();
  LaunchOutcome out{o.exit_code, o.failed_rank, o.why, ""};
  if (std::ifstream in(rank0_out); in) {
    std::stringstream text;
    text << in.rdbuf();
    out.rank0_output = text.str();
  }
  return out;
}

std::string failure_message(const Launch& l, const LaunchOutcome& o) {
  return fmt::format("rank {} {} (a data-parallel run of {} ranks over {})",
                     o.failed_rank, o.why, l.processes, l.engine);
}

void mark_failed(nlohmann::json& r, const Launch& l, const LaunchOutcome& o) {
  const std::string own = r.value("message", "");
  r["state"] = "failed";
  r["message"] =
      failure_message(l, o) + (own.empty() ? "" : "; rank 0: " + own);
  if (!r.contains("distributed") || !r["distributed"].is_object())
    r["distributed"] = {{"engine", l.engine},
                        {"ranks", l.processes},
                        {"scaling", "strong"},
                        {"global_batch", 0},
                        {"batch_per_rank", 0}};
  r["distributed"]["failed_rank"] = o.failed_rank;
}

}  // namespace nnbench::study
