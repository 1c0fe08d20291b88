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

void require_plain_sgd(const Options& o, const std::string& backend) {
  if (o.optimizer != "sgd" || o.nesterov || o.weight_decay != 0)
    throw Unimplemented(
        "optimizer " + o.optimizer + (o.nesterov ? " with nesterov" : "") +
        (o.weight_decay != 0 ? " with weight decay" : "") + " (the " + backend +
        " backend implements SGD with momentum)");
}

}  // namespace nnbench::backend
