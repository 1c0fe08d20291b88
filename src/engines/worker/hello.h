#pragma once
// What hello said, once per framework per process: starting Python and
// importing a framework takes a second or more (TensorFlow about three),
// and every nnbench command describes every backend. The answer is also
// kept on disk, keyed by what could change it: the interpreter, its
// environment's packages folder and the worker's files, by path and
// modification time.
#include <nlohmann/json.hpp>
#include <string>

#include "engines/worker/worker_backend.h"

namespace nnbench::engines::worker {

struct Hello {
  std::string python;       // the interpreter that answered
  std::string unavailable;  // why the engine cannot run here, "" when it can
  nlohmann::json reply;     // checked against the worker contract
};

const Hello& hello(const Framework& f);

// The on-disk answer's key: the interpreter, its packages folders, the
// oneDNN ISA cap, and every Python file of the shared worker code
// (frameworks/common) and of the engine's folder, by path and modification
// time: an engine imports the shared modules (keras_model.py, ...), whose
// change changes its answer.
std::string hello_key(const Framework& f, const std::string& python);

}  // namespace nnbench::engines::worker
