#include "backend/backend.h"

#include "util/error.h"

namespace nnbench::backend {

std::string mode_name(Mode mode) {
  return mode == Mode::kTrain ? "train" : "infer";
}

Mode mode_from_name(const std::string& name) {
  if (name == "train") return Mode::kTrain;
  if (name == "infer") return Mode::kInfer;
  throw Error("unknown mode '" + name + "'; known: train, infer");
}

}  // namespace nnbench::backend
