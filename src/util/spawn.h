#pragma once
// Starting a child program: the one fork and exec of nnbench (a suite's
// cases, a launcher's ranks and mpirun, framework workers and their
// zygotes). Everything the child needs is prepared before the fork; after
// it, only async-signal-safe calls until exec.
#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace nnbench::util {

struct SpawnOptions {
  // The child's whole environment ("K=V"); empty: this process's.
  std::vector<std::string> env;
  // Descriptors the child gets: {this process's fd, the child's fd}. The
  // others stay as they are (close-on-exec ones close) unless close_others.
  std::vector<std::pair<int, int>> fds;
  bool null_stdin = false;    // stdin from /dev/null
  bool null_stdout = false;   // stdout to /dev/null
  bool close_others = false;  // every fd above 2 not in `fds` closed
  // Its own process group (a timeout kills the group), or its own session
  // (neither a case's group kill nor the terminal reaches it).
  enum class Group { kInherit, kOwnGroup, kOwnSession } group = Group::kInherit;
  // lifeline::die_with_parent: `death_signal` when this process dies,
  // SIGTERM held across exec with `hold` (lifeline.h).
  bool die_with_parent = true;
  int death_signal = SIGTERM;
  bool hold = false;
  rlim_t address_limit = 0;  // RLIMIT_AS in bytes; 0: unchanged
  bool search_path = false;  // argv[0] looked up in PATH, as a shell would
};

// Starts argv with `o`. Throws nnbench::Error when it cannot fork; a child
// that cannot exec exits with 127 (after saying so on its stderr).
pid_t spawn(const std::vector<std::string>& argv, const SpawnOptions& o);

// This process's environment with `add` set over it, as "K=V" entries.
std::vector<std::string> environment_with(
    const std::map<std::string, std::string>& add);

}  // namespace nnbench::util
