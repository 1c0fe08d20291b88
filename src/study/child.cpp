#include "study/child.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <thread>

#include "util/clock.h"
#include "util/error.h"
#include "util/lifeline.h"
#include "util/spawn.h"
#include "util/temp_dir.h"
#include "util/text.h"

namespace nnbench::study {
namespace {

// The last `bytes` of what the child wrote to fd, from its first full line.
std::string tail_of(int fd, size_t bytes) {
  const off_t size = lseek(fd, 0, SEEK_END);
  if (size <= 0) return "";
  const off_t from = size > static_cast<off_t>(bytes) ? size - bytes : 0;
  std::string text(static_cast<size_t>(size - from), '\0');
  const ssize_t n = pread(fd, text.data(), text.size(), from);
  text.resize(n > 0 ? static_cast<size_t>(n) : 0);
  if (from > 0) {
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
  // The child's stderr goes to a file that has no name: nothing is left
  // behind however this process ends.
  const int err_fd = util::anonymous_file();
  util::lifeline::install();
  util::SpawnOptions o;
  o.group = util::SpawnOptions::Group::kOwnGroup;
  // An interrupt's SIGTERM waits until `nnbench case` has registered its
  // files. This process's death is SIGKILL, which ends the child even
  // when it is stopped; its folders' watchers remove them
  // (util/temp_dir.h).
  o.hold = true;
  o.death_signal = SIGKILL;
  if (limits.memory_limit_gib > 0)
    o.address_limit =
        static_cast<rlim_t>(limits.memory_limit_gib * 1024 * 1024 * 1024);
  o.null_stdout = true;
  o.fds = {{err_fd, STDERR_FILENO}};
  const auto t0 = util::Clock::now();
  pid_t pid;
  try {
    pid = util::spawn(argv, o);
  } catch (...) {
    close(err_fd);
    throw;
  }
  util::lifeline::add_child(pid, true);
  ChildOutcome out;
  int status = 0;
  // An interrupt forwarded SIGTERM to the child's group: it gets 2 s to
  // end (its own children, its files), then SIGKILL.
  std::optional<util::Clock::time_point> interrupted_at;
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (limits.timeout_seconds > 0 &&
        util::seconds_since(t0) > limits.timeout_seconds && !out.timed_out) {
      out.timed_out = true;
      kill(-pid, SIGKILL);
    }
    if (util::lifeline::interrupted() && !interrupted_at)
      interrupted_at = util::Clock::now();
    if (interrupted_at && util::seconds_since(*interrupted_at) > 2)
      kill(-pid, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  util::lifeline::remove_child(pid);
  out.wall_seconds = util::seconds_since(t0);
  if (WIFEXITED(status)) out.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) out.signal = WTERMSIG(status);
  // Shown on the user's terminal: no escape sequence of the child's.
  out.stderr_tail = util::printable(tail_of(err_fd, 4096));
  close(err_fd);
  util::lifeline::check();
  return out;
}

}  // namespace nnbench::study
