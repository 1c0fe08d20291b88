#pragma once
// A data set shaped like the MNIST MLP's input for trainer tests on a
// scripted backend.
#include <cstdint>

#include "data/dataset.h"

namespace nnbench::test {

// mnist-mlp's input ([784] floats of 0.5) and 10 classes; labels cycle
// 0..9.
inline data::Split mnist_like_split(int64_t n) {
  data::Split s;
  s.input.shape = {784};
  s.classes = 10;
  s.size = n;
  s.f.assign(n * 784, 0.5f);
  for (int64_t i = 0; i < n; ++i) s.labels.push_back(i % 10);
  return s;
}

// 12 training samples (3 steps an epoch at batch 4) and 8 validation
// samples (one evaluation batch at batch 8: accuracies are multiples of
// 1/8).
inline data::Dataset tiny_dataset() {
  data::Dataset d;
  d.name = "tiny";
  d.train = mnist_like_split(12);
  d.test = mnist_like_split(8);
  return d;
}

}  // namespace nnbench::test
