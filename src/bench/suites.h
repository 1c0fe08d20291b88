#pragma once
// Named sets of runs. Batch sizes follow the studies where they state them.
#include <cstdint>
#include <string>
#include <vector>

#include "backend/backend.h"

namespace nnbench::bench {

struct SuiteEntry {
  std::string model;
  backend::Mode mode;
  int64_t batch;
};

struct Suite {
  std::string name, description;
  std::vector<SuiteEntry> entries;
};

const std::vector<Suite>& suites();
const Suite& suite(const std::string& name);  // throws nnbench::Error

}  // namespace nnbench::bench
