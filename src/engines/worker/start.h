#pragma once
// Starting a framework's worker: its interpreter, a scratch folder for the
// tensors it is handed and its log, the environment it gets, and how long
// its requests may take.
#include <memory>
#include <string>

#include "engines/worker/process.h"
#include "engines/worker/worker_backend.h"
#include "util/temp_dir.h"

namespace nnbench::engines::worker {

// How long a request may take before the worker counts as hung
// (NNBENCH_WORKER_TIMEOUT, default 600 s), and how long it may take to
// start and say hello (NNBENCH_WORKER_START_TIMEOUT, default 30 s).
double timeout_seconds();
double start_timeout_seconds();

// The interpreter that runs the framework's worker, "" when none exists.
std::string python_of(const Framework& f);

// A folder of its own for the tensors handed to one worker and its log.
class Scratch : public util::TempDir {
 public:
  Scratch() : util::TempDir("nnbench-worker") {}
};

// The framework's worker.py on `python`, its log in `s`. `threads` (asked,
// 0 for every CPU) is in its environment as NNBENCH_THREADS.
std::unique_ptr<Process> start(const Framework& f, const std::string& python,
                               const Scratch& s, int threads = 0);

}  // namespace nnbench::engines::worker
