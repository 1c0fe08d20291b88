#include "model/model.h"

#include "util/error.h"

namespace nnbench::model {

std::string loss_name(Loss loss) {
  return loss == Loss::kSoftmaxCrossEntropy ? "softmax_cross_entropy"
                                            : "sigmoid_binary_cross_entropy";
}

Loss loss_from_name(const std::string& name) {
  if (name == "softmax_cross_entropy") return Loss::kSoftmaxCrossEntropy;
  if (name == "sigmoid_binary_cross_entropy")
    return Loss::kSigmoidBinaryCrossEntropy;
  throw Error("unknown loss '" + name +
              "'; known: softmax_cross_entropy, sigmoid_binary_cross_entropy");
}

std::string dtype_name(DType dtype) {
  return dtype == DType::kFloat32 ? "float32" : "int64";
}

DType dtype_from_name(const std::string& name) {
  if (name == "float32") return DType::kFloat32;
  if (name == "int64") return DType::kInt64;
  throw Error("unknown dtype '" + name + "'; known: float32, int64");
}

std::vector<int> layer_inputs(const Model& m, int i) {
  const auto& in = m.layers.at(i).inputs;
  if (!in.empty()) return in;
  return {i - 1};  // -1 for the first layer: the model input
}

std::string shape_str(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i)
    out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

}  // namespace nnbench::model
