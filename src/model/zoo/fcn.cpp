// DLBench fully connected networks.
#include <string>
#include <vector>

#include "model/zoo/builder.h"
#include "model/zoo/models.h"

namespace nnbench::model::zoo {
namespace {

constexpr char kDlbenchSource[] =
    "Shi, Wang, Xu, Chu: Benchmarking State-of-the-Art Deep Learning "
    "Software Tools (DLBench), arXiv:1608.07249, network configurations "
    "table";

// Sigmoid hidden layers as in the paper; the last layer stays linear
// because its sigmoid/softmax is part of the loss.
Model fcn(const std::vector<int64_t>& widths) {
  Model m;
  m.input.shape = {widths.front()};
  Builder b(m);
  int x = -1;
  for (size_t i = 1; i < widths.size(); ++i) {
    x = b.linear(x, widths[i], "fc" + std::to_string(i));
    if (i + 1 < widths.size()) x = b.sigmoid(x);
  }
  m.loss = Loss::kSoftmaxCrossEntropy;
  m.source = kDlbenchSource;
  return m;
}

}  // namespace

Model fcn_s() {
  Model m = fcn({26752, 2048, 2048, 2048, 26752});
  m.name = "fcn-s";
  m.study = kStudyDlbench;
  m.notes =
      "FCN-S, synthetic data: 26752 float inputs, three sigmoid hidden "
      "layers of 2048, 26752 classes. Softmax folded into the loss.";
  return m;
}

Model fcn_r() {
  Model m = fcn({784, 2048, 4096, 1024, 10});
  m.name = "fcn-r";
  m.study = kStudyDlbench;
  m.notes =
      "FCN-R, MNIST: 784 inputs (28x28 flattened), sigmoid hidden layers "
      "2048-4096-1024, 10 classes. Softmax folded into the loss.";
  return m;
}

}  // namespace nnbench::model::zoo
