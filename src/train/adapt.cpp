#include "train/adapt.h"

#include "model/analysis.h"
#include "util/error.h"

namespace nnbench::train {
namespace {

void adapt_vocab(model::Model& m, int64_t vocab) {
  if (m.input.dtype != model::DType::kInt64 || m.input.vocab == vocab) return;
  m.notes += " Adapted to the dataset: vocabulary " +
             std::to_string(m.input.vocab) + " -> " + std::to_string(vocab) +
             ".";
  m.input.vocab = vocab;
  for (int i = 0; i < static_cast<int>(m.layers.size()); ++i)
    if (model::layer_inputs(m, i) == std::vector<int>{-1})
      m.layers[i].vocab = vocab;
}

void adapt_classes(model::Model& m, int64_t classes) {
  if (m.loss != model::Loss::kSoftmaxCrossEntropy) return;
  model::Layer& head = m.layers.back();
  if (head.op != model::Op::kLinear || head.out == classes) return;
  m.notes += " Adapted to the dataset: " + std::to_string(head.out) + " -> " +
             std::to_string(classes) + " classes.";
  head.out = classes;
}

}  // namespace

model::Model adapt_model(model::Model m, const data::Dataset& d) {
  const auto& in = d.train.input;
  // The same floats in another shape (MNIST images [1,28,28] for an MLP's
  // [784]) are a free reshape of each batch: see reshape_inputs.
  const bool reshaped = in.dtype == model::DType::kFloat32 &&
                        in.dtype == m.input.dtype &&
                        model::numel(in.shape) == model::numel(m.input.shape);
  if (!reshaped && (in.shape != m.input.shape || in.dtype != m.input.dtype))
    throw Error("model '" + m.name + "' reads " +
                model::dtype_name(m.input.dtype) + " " +
                model::shape_str(m.input.shape) + " but dataset '" + d.name +
                "' gives " + model::dtype_name(in.dtype) + " " +
                model::shape_str(in.shape));
  adapt_vocab(m, in.vocab);
  adapt_classes(m, d.train.classes);
  const model::Shape out = model::infer_shapes(m).back();
  const model::Shape labels = m.loss == model::Loss::kSoftmaxCrossEntropy
                                  ? model::Shape(out.begin(), out.end() - 1)
                              : out.size() == 1 && out[0] == 1 ? model::Shape{}
                                                               : out;
  if (labels != d.train.label_shape)
    throw Error("model '" + m.name + "' predicts labels of shape " +
                model::shape_str(labels) + " but dataset '" + d.name +
                "' has labels of shape " +
                model::shape_str(d.train.label_shape));
  return m;
}

void reshape_inputs(host::Batch& b, const model::Model& m) {
  b.input.shape.resize(1);
  b.input.shape.insert(b.input.shape.end(), m.input.shape.begin(),
                       m.input.shape.end());
  // A binary model's one output per sample: its labels [N] (IMDb's) become
  // [N, 1], the output's shape, which every engine takes (the synthetic
  // batches' labels); LibTorch and PyTorch refused [N].
  if (m.loss == model::Loss::kSigmoidBinaryCrossEntropy &&
      b.labels.shape.size() == 1)
    b.labels.shape.push_back(1);
}

}  // namespace nnbench::train
