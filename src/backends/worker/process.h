#pragma once
// A framework worker process and its request/reply pipe (JSON lines on its
// fds 3 and 4; frameworks/common/worker.py is the other end). Its stdout
// and stderr go to a log whose last lines name what went wrong. The
// worker dies with nnbench (PR_SET_PDEATHSIG) and is killed when this
// object goes.
#include <sys/types.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace nnbench::backends::worker {

class Process {
 public:
  // Starts `argv` (argv[0] an absolute path) with `env` added to this
  // process's environment. Throws nnbench::Error when it cannot start.
  Process(const std::vector<std::string>& argv,
          const std::map<std::string, std::string>& env,
          const std::string& log_path);
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
  nlohmann::json request(const nlohmann::json& req, double timeout_seconds);

  // The last `n` non-empty lines of the worker's stdout and stderr.
  std::string log_tail(int n) const;
  pid_t pid() const { return pid_; }

 private:
  std::string died();  // why the worker is gone, once reaped
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
  std::string log_, buffer_;
  bool reaped_ = false;
  int status_ = 0;
};

}  // namespace nnbench::backends::worker
