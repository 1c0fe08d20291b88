#include "util/temp_dir.h"

#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "util/error.h"

extern char** environ;

namespace nnbench::util {
namespace {

// The watcher: a shell that puts a subshell in the background and exits,
// so the subshell belongs to no nnbench process (nothing to reap, and a
// suite's kill of a case's process group does not reach it: its own
// session). The subshell reads fd 3 until end of file, then removes the
// folder ($0). Its standard descriptors are /dev/null: it must not hold a
// pipe that a caller reads to its end.
constexpr const char* kWatcher =
    "( while read -r _ <&3; do :; done; rm -rf -- \"$0\" ) &";

// Starts the watcher of `dir`; returns the writing end of its pipe, or -1
// when it could not be started (the folder is then removed only by the
// destructor and the signal handlers, as before watchers).
int start_watcher(const std::string& dir) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_adddup2(&actions, fds[0], 3);
  for (int fd = 0; fd < 3; ++fd)
    posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_RDWR, 0);
  // Not the writing ends of other folders' watchers, nor anything else.
  posix_spawn_file_actions_addclosefrom_np(&actions, 4);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK);
  std::string script = kWatcher;
  std::string arg0 = dir;
  char sh[] = "/bin/sh", dash_c[] = "-c";
  char* argv[] = {sh, dash_c, script.data(), arg0.data(), nullptr};
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, "/bin/sh", &actions, &attr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(fds[0]);
  if (rc != 0) {
    ::close(fds[1]);
    return -1;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  // The children this process starts inherit the writing end: the folder
  // stays while any of them lives.
  fcntl(fds[1], F_SETFD, 0);
  return fds[1];
}

}  // namespace

TempDir::TempDir(const std::string& prefix) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path base = fs::temp_directory_path(ec);
  if (ec) throw Error("no temporary folder: " + ec.message());
  std::string t = base / (prefix + "-XXXXXX");
  if (!mkdtemp(t.data()))
    throw Error("cannot make a folder in " + base.string() + ": " +
                std::generic_category().message(errno));
  dir_ = t;
  keepalive_ = start_watcher(dir_);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
  if (keepalive_ >= 0) ::close(keepalive_);
}

int anonymous_file() {
  const std::string dir = std::filesystem::temp_directory_path().string();
  int fd = open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) {  // a file system without O_TMPFILE: named for a moment
    std::string name = dir + "/nnbench-XXXXXX";
    fd = mkostemp(name.data(), O_CLOEXEC);
    if (fd >= 0) unlink(name.c_str());
  }
  if (fd < 0)
    throw Error("cannot create a temporary file in " + dir + ": " +
                std::strerror(errno));
  return fd;
}

}  // namespace nnbench::util
