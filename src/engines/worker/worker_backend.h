#pragma once
// A framework (PyTorch through Python, TensorFlow/Keras, MXNet, JAX) as a
// backend: each executable is a worker process in the framework's own
// Python environment, built from nnbench's description with the same
// seeded weights, fed the same batches before any clock, and asked for
// self-timed steps in chunks (backend::SelfTimed::timed_steps). Adding a
// framework is its folder under frameworks/ (framework.toml, engine.py,
// requirements.txt): no C++ (manifest.h).
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"

namespace nnbench::engines::worker {

struct Framework {
  std::string name;    // the backend's name: "pytorch"
  std::string folder;  // under frameworks/: its engine.py
  // Interpreters to try, in order; the first that exists runs the worker.
  // A leading "venv:" names the framework's own environment
  // (nnbench_venvs()/<name>/bin/python).
  std::vector<std::string> pythons;
  std::string setup;  // the command that makes it ready
  backend::Capabilities can;
  // Why it cannot be installed on this platform at all (a framework of
  // the studies listed so that their tables show it as not run): its
  // description says "cannot be installed here: " and this.
  std::string impossible = "";
};

// Where `scripts/setup FRAMEWORK` makes the environments:
// $NNBENCH_VENVS, else $XDG_DATA_HOME/nnbench/venvs, else
// ~/.local/share/nnbench/venvs.
std::string venvs_dir();

std::unique_ptr<backend::Backend> make_worker_backend(Framework f);

}  // namespace nnbench::engines::worker
