#include "engines/worker/start.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <vector>

#include "engines/worker/manifest.h"
#include "util/child_env.h"
#include "util/error.h"

namespace nnbench::engines::worker {

namespace fs = std::filesystem;

// How long a request may take before the worker counts as hung: generous,
// since one chunk of a slow model's steps is one request.
double timeout_seconds() {
  if (const char* t = std::getenv("NNBENCH_WORKER_TIMEOUT"); t && *t)
    return std::atof(t);
  return 600;
}

// How long a worker may take to start and say hello: Python and its
// framework import in seconds (TensorFlow's cold import is the slowest);
// far less than a step's timeout, since every nnbench command that lists
// the engines waits for each one's hello.
double start_timeout_seconds() {
  if (const char* t = std::getenv("NNBENCH_WORKER_START_TIMEOUT"); t && *t)
    return std::atof(t);
  return 30;
}

// The interpreter that runs the framework's worker, "" when none exists.
std::string python_of(const Framework& f) {
  for (const auto& p : f.pythons) {
    const std::string path =
        p.rfind("venv:", 0) == 0
            ? venvs_dir() + "/" + p.substr(5) + "/bin/python"
            : p;
    if (access(path.c_str(), X_OK) == 0) return path;
  }
  return "";
}

// NNBENCH_THREADS: frameworks whose thread pools are sized when they are
// imported (OpenMP for MXNet, XLA's for JAX) read it before that.
std::unique_ptr<Process> start(const Framework& f, const std::string& python,
                               const Scratch& s, int threads) {
  const std::string dir = frameworks_dir();
  if (dir.empty() || !fs::exists(dir + "/common/worker.py"))
    throw Error(
        "the framework workers are not found (frameworks/ beside the "
        "binary or in its source tree; NNBENCH_FRAMEWORKS names "
        "another)");
  std::map<std::string, std::string> env{
      {"PYTHONDONTWRITEBYTECODE", "1"},
      {"NNBENCH_THREADS", std::to_string(threads)}};
  // What nnbench's own settings imply for it (util/child_env.h): its
  // malloc keeps freed memory, else a fresh worker page-faults its
  // buffers again every step.
  for (const auto& [k, v] : util::child_env()) env[k] = v;
  return std::make_unique<Process>(
      std::vector<std::string>{python, "-u", dir + "/common/worker.py",
                               dir + "/" + f.folder + "/engine.py"},
      env, s.file("worker.log"), start_timeout_seconds());
}

}  // namespace nnbench::engines::worker
