#include "util/spawn.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/error.h"
#include "util/lifeline.h"

extern char** environ;

namespace nnbench::util {
namespace {

std::vector<char*> pointers(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// In the child: the descriptors in place. Copies above the highest target
// first (close-on-exec), since a source may already be another's target,
// and dup2 onto itself would keep its close-on-exec flag; dup2 clears it
// on the ones the child keeps.
bool place(const std::vector<std::pair<int, int>>& fds, int null_in,
           int null_out, bool close_others) {
  int copies[64];
  const size_t n = fds.size() < 64 ? fds.size() : 64;
  int top = 2;
  for (size_t i = 0; i < n; ++i)
    if (fds[i].second > top) top = fds[i].second;
  for (size_t i = 0; i < n; ++i)
    if ((copies[i] = fcntl(fds[i].first, F_DUPFD_CLOEXEC, top + 1)) < 0)
      return false;
  if (null_in >= 0 && dup2(null_in, 0) < 0) return false;
  if (null_out >= 0 && dup2(null_out, 1) < 0) return false;
  for (size_t i = 0; i < n; ++i)
    if (dup2(copies[i], fds[i].second) < 0) return false;
  if (close_others) close_range(static_cast<unsigned>(top) + 1, ~0u, 0);
  return true;
}

}  // namespace

std::vector<std::string> environment_with(
    const std::map<std::string, std::string>& add) {
  std::vector<std::string> out;
  for (char** e = environ; *e; ++e) {
    const std::string kv(*e);
    if (!add.count(kv.substr(0, kv.find('=')))) out.push_back(kv);
  }
  for (const auto& [k, v] : add) out.push_back(k + "=" + v);
  return out;
}

pid_t spawn(const std::vector<std::string>& argv, const SpawnOptions& o) {
  if (argv.empty()) throw Error("spawn: no program");
  if (o.fds.size() > 64) throw Error("spawn: more than 64 descriptors");
  std::vector<std::string> arg_text = argv;
  std::vector<std::string> env_text =
      o.env.empty() ? environment_with({}) : o.env;
  std::vector<char*> args = pointers(arg_text), envp = pointers(env_text);
  const int null_in =
      o.null_stdin ? open("/dev/null", O_RDONLY | O_CLOEXEC) : -1;
  const int null_out =
      o.null_stdout ? open("/dev/null", O_WRONLY | O_CLOEXEC) : -1;
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    const int e = errno;
    for (int fd : {null_in, null_out})
      if (fd >= 0) close(fd);
    throw Error(std::string("fork: ") + std::strerror(e));
  }
  if (pid == 0) {
    if (o.group == SpawnOptions::Group::kOwnGroup) setpgid(0, 0);
    if (o.group == SpawnOptions::Group::kOwnSession) setsid();
    if (o.die_with_parent)
      lifeline::die_with_parent(parent, o.hold, o.death_signal);
    if (o.address_limit > 0) {
      const rlimit rl{o.address_limit, o.address_limit};
      setrlimit(RLIMIT_AS, &rl);
    }
    if (!place(o.fds, null_in, null_out, o.close_others)) _exit(127);
    if (o.search_path)
      execvpe(args[0], args.data(), envp.data());
    else
      execve(args[0], args.data(), envp.data());
    const char* why = strerrordesc_np(errno);  // async-signal-safe
    if (!why) why = "unknown error";
    const char* words[] = {"nnbench: cannot run ", args[0], ": ", why, "\n"};
    for (const char* w : words)
      if (write(2, w, strlen(w)) < 0) break;
    _exit(127);
  }
  // Also from the parent: no race with a kill of the group right after.
  if (o.group == SpawnOptions::Group::kOwnGroup) setpgid(pid, pid);
  for (int fd : {null_in, null_out})
    if (fd >= 0) close(fd);
  return pid;
}

}  // namespace nnbench::util
