#pragma once
// The models of the benchmark studies, with their published shapes.
#include <functional>
#include <string>
#include <vector>

#include "model/model.h"

namespace nnbench::model::zoo {

struct Entry {
  std::string name;
  std::function<Model()> build;
};

const std::vector<Entry>& entries();
std::vector<std::string> names();
// Throws nnbench::Error listing the known names.
Model get(const std::string& name);

}  // namespace nnbench::model::zoo
