// Models of nnbench's own training recipes (not from a study): small and
// fast, chosen so a reference task reaches its target in well under a
// minute on two cores.
#include "model/zoo/builder.h"
#include "model/zoo/models.h"

namespace nnbench::model::zoo {

Model fmnist_cnn() {
  Model m;
  m.name = "fmnist-cnn";
  m.study = kStudyNnbench;
  m.source = "nnbench recipe for the fashion-mnist-92 task (docs/training.md)";
  m.notes =
      "Two conv-BN-ReLU-maxpool blocks (32 and 64 channels, 3x3, padding 1; "
      "convs without bias, the BN shift replaces it), a 128-unit hidden "
      "layer with dropout 0.25, 10 classes: 421,738 parameters, about a "
      "third of the Keras MNIST CNN's FLOPs because it pools early.";
  m.input.shape = {1, 28, 28};
  Builder b(m);
  int x = b.relu(b.batch_norm(b.no_bias().conv(-1, 32, 3, 1, 1, "conv1")));
  x = b.max_pool(x, 2, 2);
  x = b.relu(b.batch_norm(b.no_bias().conv(x, 64, 3, 1, 1, "conv2")));
  x = b.max_pool(x, 2, 2);
  x = b.relu(b.linear(b.flatten(x), 128, "fc1"));
  b.linear(b.dropout(x, 0.25), 10, "fc2");
  return m;
}

}  // namespace nnbench::model::zoo
