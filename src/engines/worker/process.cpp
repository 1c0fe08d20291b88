#include "engines/worker/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "backend/backend.h"
#include "backend/failures.h"
#include "engines/worker/contract.h"
#include "engines/worker/zygote.h"
#include "util/atomic_file.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/lifeline.h"
#include "util/spawn.h"
#include "util/text.h"

extern char** environ;

namespace nnbench::engines::worker {
namespace {

void set_cloexec(int fd) { fcntl(fd, F_SETFD, FD_CLOEXEC); }

// A reply is a line of metadata (tensors travel in files): far below this.
constexpr size_t kMaxReplyBytes = size_t{64} << 20;

void make_printable(nlohmann::json& j) {
  if (j.is_string())
    j = util::printable(j.get<std::string>());
  else if (j.is_structured())
    for (auto& v : j) make_printable(v);
}

}  // namespace

Process::Process(const std::vector<std::string>& argv,
                 const std::map<std::string, std::string>& env,
                 const std::string& log_path, double start_seconds)
    : log_(log_path) {
  // A worker that died makes writes to its pipe fail with EPIPE, which
  // request() reports; the signal would end nnbench instead.
  signal(SIGPIPE, SIG_IGN);
  int req[2], rep[2];
  if (pipe(req) != 0 || pipe(rep) != 0)
    throw Error(std::string("cannot make the worker's pipes: ") +
                std::strerror(errno));
  for (int fd : {req[0], req[1], rep[0], rep[1]}) set_cloexec(fd);
  const std::vector<std::string> env_text = util::environment_with(env);
  const int log_fd = util::create_new_file(log_path);
  if (log_fd < 0)
    throw Error("cannot write the worker's log " + log_path + ": " +
                std::strerror(errno));
  // Inside a suite, a zygote forks the worker with the framework already
  // imported (zygote.h); else a new process starts it.
  try {
    zygote_ = zygote::connect(argv, env_text, start_seconds);
    if (zygote_ >= 0)
      pid_ = zygote::fork_worker(zygote_, req[0], rep[1], log_fd);
  } catch (...) {
    for (int fd : {req[0], req[1], rep[0], rep[1], log_fd, zygote_})
      if (fd >= 0) close(fd);
    throw;
  }
  if (zygote_ < 0) {
    util::SpawnOptions o;
    o.env = env_text;
    o.fds = {{req[0], 3}, {rep[1], 4}, {log_fd, 1}, {log_fd, 2}};
    o.null_stdin = true;
    // SIGKILL: a worker ends with nnbench even when it is stopped (a
    // stopped process does not act on SIGTERM); it has nothing of its own
    // to clean up (its folder is nnbench's, util/temp_dir.h).
    o.death_signal = SIGKILL;
    try {
      pid_ = util::spawn(argv, o);
    } catch (...) {
      for (int fd : {req[0], req[1], rep[0], rep[1], log_fd, zygote_})
        if (fd >= 0) close(fd);
      throw;
    }
  }
  close(log_fd);
  close(req[0]);
  close(rep[1]);
  to_ = req[1];
  from_ = rep[0];
  util::lifeline::add_child(pid_, false);
}

Process::~Process() {
  if (to_ >= 0) {
    const char quit[] = "{\"op\":\"quit\"}\n";
    [[maybe_unused]] ssize_t n = write(to_, quit, sizeof quit - 1);
    close(to_);
  }
  if (from_ >= 0) close(from_);
  if (pid_ > 0 && !reaped_) {
    // A moment to exit on its own, then killed.
    if (!reap(1000)) kill_and_reap();
  }
  if (pid_ > 0) util::lifeline::remove_child(pid_);
  if (zygote_ >= 0) close(zygote_);
}

bool Process::reap(int wait_ms) {
  if (reaped_) return true;
  const auto t0 = util::Clock::now();
  for (;;) {
    if (zygote_ < 0) {
      if (waitpid(pid_, &status_, WNOHANG) == pid_) reaped_ = true;
    } else {
      // The zygote's second line, {"status": S}, once the worker ended.
      pollfd p{zygote_, POLLIN, 0};
      char buf[256];
      ssize_t n = 0;
      if (poll(&p, 1, 0) > 0 && (n = read(zygote_, buf, sizeof buf)) > 0)
        zygote_reply_.append(buf, static_cast<size_t>(n));
      if (const auto eol = zygote_reply_.find('\n'); eol != std::string::npos) {
        const auto j =
            nlohmann::json::parse(zygote_reply_.substr(0, eol), nullptr, false);
        status_ = j.is_object() && j.contains("status") &&
                          j["status"].is_number_integer()
                      ? j["status"].get<int>()
                      : SIGKILL;
        reaped_ = true;
      } else if (n == 0 && p.revents) {
        status_ = SIGKILL;  // the zygote ended: so did its workers
        reaped_ = true;
      }
    }
    if (reaped_ || util::seconds_since(t0) * 1000 >= wait_ms) return reaped_;
    usleep(10000);
  }
}

void Process::kill_and_reap() {
  kill(pid_, SIGKILL);
  // The zygote reaps its worker and says so at once; 10 s is its bound.
  if (!reap(zygote_ < 0 ? 1 << 30 : 10000)) reaped_ = true;
}

std::string log_tail(const std::string& path, int n) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) lines.push_back(l);
  std::string out;
  for (size_t i = lines.size() > size_t(n) ? lines.size() - n : 0;
       i < lines.size(); ++i)
    out += (out.empty() ? "" : " | ") + util::printable(lines[i], true);
  return out;
}

std::string Process::log_tail(int n) const { return worker::log_tail(log_, n); }

std::string Process::died() {
  // Closed its pipe: give it a moment to finish exiting.
  reap(1000);
  if (!reaped_) return "the worker closed its pipe";
  if (WIFSIGNALED(status_))
    return "the worker was killed by signal " +
           std::to_string(WTERMSIG(status_)) + " (" +
           strsignal(WTERMSIG(status_)) + ")";
  return "the worker exited with code " + std::to_string(WEXITSTATUS(status_));
}

nlohmann::json Process::request(const std::string& op, nlohmann::json fields,
                                double timeout_seconds) {
  const nlohmann::json req = contract::request(op, std::move(fields));
  const auto tail = [&] {
    const std::string t = log_tail(5);
    return t.empty() ? std::string() : "; its last output: " + t;
  };
  std::string line = req.dump() + "\n";
  for (size_t done = 0; done < line.size();) {
    const ssize_t n = write(to_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = died();
      util::lifeline::check();
      throw backend::ProcessDied(why + tail());
    }
    done += static_cast<size_t>(n);
  }
  using Clock = std::chrono::steady_clock;
  const auto deadline =
      Clock::now() + std::chrono::duration<double>(timeout_seconds);
  size_t eol, scanned = 0;
  while ((eol = buffer_.find('\n', scanned)) == std::string::npos) {
    scanned = buffer_.size();  // the next read is searched alone
    if (buffer_.size() > kMaxReplyBytes) {
      kill_and_reap();
      throw std::runtime_error(
          "the worker answered '" + op + "' with more than " +
          util::bytes_text(kMaxReplyBytes) +
          " and no end of line, and was killed (a reply is one JSON line; "
          "tensors travel in files): '" +
          util::printable(buffer_.substr(0, 200), true) + "'" + tail());
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - Clock::now())
                          .count();
    if (left <= 0) {
      kill_and_reap();
      throw backend::ProcessHung(
          "the worker did not answer '" + op + "' within " +
          std::to_string(static_cast<int>(timeout_seconds)) +
          " s and was killed" + tail());
    }
    pollfd p{from_, POLLIN, 0};
    const int r =
        poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    // An interrupt (whichever thread caught it) ends the worker: this
    // request ends as the interrupt, not as a worker that died.
    util::lifeline::check();
    if (r <= 0) continue;
    char buf[65536];
    const ssize_t n = read(from_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = died();
      util::lifeline::check();
      throw backend::ProcessDied(why + tail());
    }
    buffer_.append(buf, static_cast<size_t>(n));
  }
  const std::string text = buffer_.substr(0, eol);
  buffer_.erase(0, eol + 1);
  nlohmann::json reply;
  try {
    reply = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    reply = nullptr;
  }
  if (!reply.is_object() || !reply.contains("ok"))
    throw std::runtime_error(
        "the worker answered '" + op + "' with garbage: '" +
        util::printable(text.substr(0, 200), true) + "'" + tail());
  // Its words reach the user's terminal: no escape sequences.
  make_printable(reply);
  if (reply["ok"] == true) {
    contract::check_reply(op, reply);
    return reply;
  }
  const auto text_of = [&](const char* key, const char* otherwise) {
    const auto it = reply.find(key);
    return it != reply.end() && it->is_string() ? it->get<std::string>()
                                                : std::string(otherwise);
  };
  const std::string state = text_of("state", "failed");
  const std::string message = text_of("message", "no message");
  contract::throw_failure(state, message, tail());
}

}  // namespace nnbench::engines::worker
