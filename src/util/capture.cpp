#include "util/capture.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include "util/error.h"
#include "util/spawn.h"

namespace nnbench::util {

Captured run_captured(const std::vector<std::string>& argv,
                      double deadline_seconds) {
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0) throw Error("run_captured: no pipe");
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(out[0]);
    close(out[1]);
    throw Error("run_captured: no pipe");
  }
  SpawnOptions o;
  o.fds = {{out[1], 1}, {err[1], 2}};
  o.null_stdin = true;
  o.search_path = true;
  pid_t pid = -1;
  try {
    pid = spawn(argv, o);
  } catch (...) {
    for (int fd : {out[0], out[1], err[0], err[1]}) close(fd);
    throw;
  }
  close(out[1]);
  close(err[1]);
  Captured c;
  const auto end = std::chrono::steady_clock::now() +
                   std::chrono::duration<double>(deadline_seconds);
  pollfd p[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  std::string* into[2] = {&c.out, &c.err};
  int open = 2;
  bool killed = false;
  while (open > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          end - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) {
      kill(pid, SIGKILL);
      killed = true;
      break;
    }
    const int n = poll(p, 2, static_cast<int>(left));
    if (n < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
        continue;
      char buf[4096];
      const ssize_t r = read(p[i].fd, buf, sizeof buf);
      if (r > 0) {
        into[i]->append(buf, static_cast<size_t>(r));
      } else if (r == 0 || errno != EINTR) {
        close(p[i].fd);
        p[i].fd = -1;
        --open;
      }
    }
  }
  for (const auto& x : p)
    if (x.fd >= 0) close(x.fd);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  c.status = killed              ? -1
             : WIFEXITED(status) ? WEXITSTATUS(status)
                                 : 128 + WTERMSIG(status);
  return c;
}

}  // namespace nnbench::util
