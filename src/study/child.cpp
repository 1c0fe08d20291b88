#include "study/child.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "util/clock.h"
#include "util/error.h"

namespace nnbench::study {
namespace {

std::string tail_of(const std::string& path, size_t bytes) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  std::string text = s.str();
  if (text.size() > bytes) {
    text = text.substr(text.size() - bytes);
    const auto nl = text.find('\n');
    if (nl != std::string::npos) text = text.substr(nl + 1);
  }
  return text;
}

}  // namespace

std::string self_exe() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw Error("cannot read /proc/self/exe");
  return std::string(buf, static_cast<size_t>(n));
}

ChildOutcome run_child(const std::vector<std::string>& argv,
                       const ChildLimits& limits) {
  char err_path[] = "/tmp/nnbench-case-stderr-XXXXXX";
  const int err_fd = mkstemp(err_path);
  if (err_fd < 0) throw Error("cannot create a temporary file for stderr");
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  const auto t0 = util::Clock::now();
  const pid_t pid = fork();
  if (pid < 0) {
    close(err_fd);
    unlink(err_path);
    throw Error("fork failed");
  }
  if (pid == 0) {  // child: only async-signal-safe calls until exec
    setpgid(0, 0);
    if (limits.memory_limit_gib > 0) {
      const rlim_t bytes =
          static_cast<rlim_t>(limits.memory_limit_gib * 1024 * 1024 * 1024);
      const rlimit rl{bytes, bytes};
      setrlimit(RLIMIT_AS, &rl);
    }
    const int null_fd = open("/dev/null", O_WRONLY);
    dup2(null_fd, STDOUT_FILENO);
    dup2(err_fd, STDERR_FILENO);
    execv(args[0], args.data());
    _exit(127);
  }
  setpgid(pid, pid);  // also from the parent: no race with the kill below
  close(err_fd);
  ChildOutcome out;
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (limits.timeout_seconds > 0 &&
        util::seconds_since(t0) > limits.timeout_seconds && !out.timed_out) {
      out.timed_out = true;
      kill(-pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  out.wall_seconds = util::seconds_since(t0);
  if (WIFEXITED(status)) out.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) out.signal = WTERMSIG(status);
  out.stderr_tail = tail_of(err_path, 4096);
  unlink(err_path);
  return out;
}

}  // namespace nnbench::study
