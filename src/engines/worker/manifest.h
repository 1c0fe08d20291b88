#pragma once
// A framework describes itself: frameworks/NAME/framework.toml says how it
// is listed, which Python runs it, what it can do and how to set it up,
// beside its engine.py and requirements.txt. The registry lists every
// folder that has one, and scripts/setup reads the same file; adding a
// framework touches no C++ (docs/backends.md has the fields).
#include <string>
#include <vector>

#include "engines/worker/worker_backend.h"

namespace nnbench::engines::worker {

// The folder of framework folders: $NNBENCH_FRAMEWORKS, else the shipped
// frameworks/ (beside an installed binary, or the source tree's).
std::string frameworks_dir();

// One framework as its manifest describes it, with where it was found: a
// manifest nnbench cannot read still gives an entry, unavailable, whose
// reason names the file, the line and the field.
struct Listed {
  Framework framework;
  int order = 0;
};

// The manifest of folder `name` under `dir`.
Listed read_manifest(const std::string& dir, const std::string& name);

// Every framework under `dir` (the folders with a framework.toml), in
// their manifests' order, then by name.
std::vector<Listed> list_frameworks(const std::string& dir);

}  // namespace nnbench::engines::worker
