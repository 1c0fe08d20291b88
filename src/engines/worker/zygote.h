#pragma once
// Inside a suite, a framework's worker is forked from a zygote that has
// imported the framework once (frameworks/common/zygote.py) instead of
// starting Python and importing the framework again for every case: each
// case still gets a fresh worker process, in the state a new process has
// after that import. `Zygotes` (held by `nnbench suite`) names a private
// folder in the environment its cases inherit; a case's first worker of a
// given interpreter, engine and environment starts that zygote there, and
// the zygotes end with the suite. Outside a suite nothing changes.
#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

namespace nnbench::util {
class TempDir;
}

namespace nnbench::engines::worker::zygote {

// A connection to the zygote of a worker started as `argv` ({python,
// options..., worker.py, engine.py}) with the environment `env_text`
// ("K=V" each), started on first use. -1 when no suite asked for zygotes
// (or its folder's path is too long for a socket). Throws nnbench::Error
// when the zygote cannot start, with the last lines of its log.
int connect(const std::vector<std::string>& argv,
            const std::vector<std::string>& env_text, double timeout_seconds);

// Asks the zygote for a worker whose fds 3, 4, 1 and 2 are `requests`,
// `replies` and `log` (twice); returns its pid. Throws nnbench::Error.
pid_t fork_worker(int conn, int requests, int replies, int log);

// The suite's zygotes: while this lives, workers of the processes this one
// starts come from zygotes; they are ended when it goes (and end by
// themselves when this process ends).
class Zygotes {
 public:
  Zygotes();
  ~Zygotes();
  Zygotes(const Zygotes&) = delete;
  Zygotes& operator=(const Zygotes&) = delete;

 private:
  std::unique_ptr<util::TempDir> dir_;
};

}  // namespace nnbench::engines::worker::zygote
