#pragma once
// One command in a child process with a wall-clock timeout and an
// address-space limit, so that a crash, hang or runaway allocation of one
// case ends that case only.
#include <string>
#include <vector>

namespace nnbench::study {

struct ChildLimits {
  double timeout_seconds = 600;  // 0: none
  double memory_limit_gib = 0;   // RLIMIT_AS; 0: none
};

struct ChildOutcome {
  bool timed_out = false;  // killed by us after the timeout
  int exit_code = -1;      // when it exited
  int signal = 0;          // when a signal ended it (SIGKILL after a timeout)
  double wall_seconds = 0;
  std::string stderr_tail;  // its last lines of stderr (at most ~4 KiB)
};

// Runs argv (argv[0]: the program's path) in its own process group, stdout
// to /dev/null, stderr captured. A timeout kills the whole group. The child
// gets SIGTERM when this process dies, held until it calls
// util::lifeline::release(); an interrupt of this process is forwarded to
// it, and then this throws util::lifeline::Interrupted.
ChildOutcome run_child(const std::vector<std::string>& argv,
                       const ChildLimits& limits);

// The running program's own path (/proc/self/exe), for re-running itself.
std::string self_exe();

}  // namespace nnbench::study
