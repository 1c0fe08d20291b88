#include "engines/worker/zygote.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engines/worker/process.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/spawn.h"
#include "util/temp_dir.h"
#include "util/text.h"

namespace nnbench::engines::worker::zygote {
namespace {

constexpr const char* kDir = "NNBENCH_ZYGOTES";
constexpr const char* kOwner = "NNBENCH_ZYGOTE_OWNER";

// FNV-1a: a stable name for one interpreter, engine and environment.
uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// The address space limit a worker inherits (a suite's per-case limit):
// part of the zygote's key, since its forks inherit its own.
long long address_limit() {
  rlimit rl{};
  if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return -1;
  return static_cast<long long>(rl.rlim_cur);
}

int try_connect(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) return fd;
  close(fd);
  return -1;
}

// Starts the zygote as a session of its own (a case's timeout kills the
// case's process group, not the suite's zygotes), holding none of this
// process's descriptors (a temporary folder lives while its holders do).
pid_t spawn(const std::vector<std::string>& argv,
            const std::vector<std::string>& env_text, const std::string& log) {
  const int log_fd =
      open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (log_fd < 0)
    throw Error("cannot write the zygote's log " + log + ": " +
                std::strerror(errno));
  util::SpawnOptions o;
  o.env = env_text;
  o.fds = {{log_fd, 1}, {log_fd, 2}};
  o.null_stdin = true;
  o.close_others = true;
  o.group = util::SpawnOptions::Group::kOwnSession;
  o.die_with_parent = false;  // it watches its owner itself (pidfd)
  try {
    const pid_t pid = util::spawn(argv, o);
    close(log_fd);
    return pid;
  } catch (...) {
    close(log_fd);
    throw;
  }
}

}  // namespace

int connect(const std::vector<std::string>& argv,
            const std::vector<std::string>& env_text, double timeout_seconds) {
  const char* dir = std::getenv(kDir);
  const char* owner = std::getenv(kOwner);
  if (!dir || !*dir || !owner || !*owner || argv.size() < 2) return -1;
  std::string key;
  for (const auto& s : argv) key += s + '\0';
  std::vector<std::string> env = env_text;
  std::sort(env.begin(), env.end());
  for (const auto& s : env) key += s + '\0';
  key += std::to_string(address_limit());
  const std::string engine =
      std::filesystem::path(argv.back()).parent_path().filename().string();
  const std::string base = std::string(dir) + "/" + engine + "-" +
                           fmt::format("{:016x}", fnv1a(key));
  const std::string sock = base + ".sock";
  if (sock.size() + 16 >= sizeof(sockaddr_un::sun_path)) return -1;
  // One case at a time starts it; the next one finds it listening.
  const int lock =
      open((base + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock < 0 || flock(lock, LOCK_EX) != 0)
    throw Error("cannot lock " + base + ".lock: " + std::strerror(errno));
  struct Unlock {
    int fd;
    ~Unlock() { close(fd); }
  } unlock{lock};
  if (const int fd = try_connect(sock); fd >= 0) return fd;
  std::vector<std::string> z(argv.begin(), argv.end() - 1);
  z.insert(z.end(), {"--zygote", sock, owner, argv.back()});
  const pid_t pid = spawn(z, env_text, base + ".log");
  std::ofstream(base + ".pid") << pid << "\n";
  const auto t0 = util::Clock::now();
  for (;;) {
    if (const int fd = try_connect(sock); fd >= 0) return fd;
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid)
      throw Error("the " + engine + " zygote ended while importing (" +
                  (WIFSIGNALED(status)
                       ? "signal " + std::to_string(WTERMSIG(status))
                       : "exit code " + std::to_string(WEXITSTATUS(status))) +
                  "): " + log_tail(base + ".log", 5));
    if (util::seconds_since(t0) > timeout_seconds) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      throw Error("the " + engine + " zygote did not listen within " +
                  std::to_string(static_cast<int>(timeout_seconds)) +
                  " s and was killed: " + log_tail(base + ".log", 5));
    }
    usleep(20000);
  }
}

pid_t fork_worker(int conn, int requests, int replies, int log) {
  char cwd[4096];
  const nlohmann::json req{
      {"rlimit_as", address_limit()},
      {"cwd", getcwd(cwd, sizeof cwd) ? std::string(cwd) : std::string("/")}};
  std::string text = req.dump() + "\n";
  iovec io{text.data(), text.size()};
  const int fds[3] = {requests, replies, log};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof fds)] = {};
  msghdr m{};
  m.msg_iov = &io;
  m.msg_iovlen = 1;
  m.msg_control = control;
  m.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&m);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof fds);
  std::memcpy(CMSG_DATA(c), fds, sizeof fds);
  if (sendmsg(conn, &m, MSG_NOSIGNAL) != static_cast<ssize_t>(text.size()))
    throw Error(std::string("cannot ask the zygote for a worker: ") +
                std::strerror(errno));
  std::string line;
  for (char ch; line.empty() || line.back() != '\n';) {
    pollfd p{conn, POLLIN, 0};
    if (poll(&p, 1, 30000) <= 0 || read(conn, &ch, 1) != 1)
      throw Error("the zygote did not fork a worker");
    line += ch;
  }
  const auto reply = nlohmann::json::parse(line, nullptr, false);
  if (!reply.is_object() || !reply.contains("pid") ||
      !reply["pid"].is_number_integer())
    throw Error("the zygote answered '" + util::printable(line, true) + "'");
  return reply["pid"].get<pid_t>();
}

Zygotes::Zygotes() : dir_(std::make_unique<util::TempDir>("nnbench-zygotes")) {
  setenv(kDir, dir_->path().c_str(), 1);
  setenv(kOwner, std::to_string(getpid()).c_str(), 1);
}

Zygotes::~Zygotes() {
  unsetenv(kDir);
  unsetenv(kOwner);
  // They end by themselves once this process has; a suite that goes on
  // (an interactive caller) ends them now.
  std::error_code ec;
  std::vector<pid_t> ours;
  for (const auto& e : std::filesystem::directory_iterator(dir_->path(), ec)) {
    if (e.path().extension() != ".pid") continue;
    pid_t pid = 0;
    if (!(std::ifstream(e.path()) >> pid) || pid <= 0) continue;
    // Still a zygote (its pid not reused by another process since).
    std::string cmd;
    std::getline(std::ifstream("/proc/" + std::to_string(pid) + "/cmdline"),
                 cmd);
    if (cmd.find("--zygote") != std::string::npos) kill(pid, SIGTERM);
    ours.push_back(pid);
  }
  // Those this process started itself (no case process between) are its
  // children: reaped here, within a bound (waitpid fails at once for the
  // others).
  const auto t0 = util::Clock::now();
  for (const pid_t pid : ours) {
    int status = 0;
    while (waitpid(pid, &status, WNOHANG) == 0 && util::seconds_since(t0) < 5)
      usleep(10000);
  }
}

}  // namespace nnbench::engines::worker::zygote
