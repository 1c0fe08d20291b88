#pragma once
// A framework worker process and its request/reply pipe (JSON lines on its
// fds 3 and 4; frameworks/common/worker.py is the other end). Its stdout
// and stderr go to a log whose last lines name what went wrong. The
// worker dies with nnbench (PR_SET_PDEATHSIG, or its zygote's watch of
// this process: zygote.h) and is killed when this object goes.
#include <sys/types.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace nnbench::engines::worker {

// The last `n` non-empty lines of the log at `path`, printable, joined by
// " | " (a worker's or a zygote's).
std::string log_tail(const std::string& path, int n);

class Process {
 public:
  // Starts `argv` (argv[0] an absolute path) with `env` added to this
  // process's environment; inside a suite, forks it from its zygote
  // (zygote.h), waiting up to `start_seconds` for the zygote's import.
  // Throws nnbench::Error when it cannot start.
  Process(const std::vector<std::string>& argv,
          const std::map<std::string, std::string>& env,
          const std::string& log_path, double start_seconds);
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  // One request, its reply. Throws backend::ProcessDied (the worker ended
  // or closed its pipe), backend::ProcessHung (no reply within
  // `timeout_seconds`; the worker is killed), std::runtime_error for a
  // reply that is not one JSON object on one line (garbage), and for
  // {"ok": false, "state", "message"} the exception of that state:
  // Unimplemented, OutOfMemory, nnbench::Error (invalid_args) or
  // std::runtime_error. Each message ends with the log's last lines.
  // The request and its reply's fields are checked against the worker
  // contract (contract.h): a reply missing one is a std::runtime_error.
  nlohmann::json request(const std::string& op, nlohmann::json fields,
                         double timeout_seconds);

  // The last `n` non-empty lines of the worker's stdout and stderr.
  std::string log_tail(int n) const;
  pid_t pid() const { return pid_; }
  // Whether a zygote forked it (zygote.h) rather than a new process.
  bool forked() const { return zygote_ >= 0; }

 private:
  std::string died();  // why the worker is gone, once reaped
  // Its exit status, waiting up to `wait_ms`: true once known.
  bool reap(int wait_ms);
  void kill_and_reap();
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
  int zygote_ = -1;  // the connection to the zygote that forked it, if one did
  std::string log_, buffer_, zygote_reply_;
  bool reaped_ = false;
  int status_ = 0;
};

}  // namespace nnbench::engines::worker
