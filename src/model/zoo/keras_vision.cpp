// Keras 2 examples on images used in the CPU-versus-GPU study.
#include <string>

#include "model/zoo/builder.h"
#include "model/zoo/models.h"

namespace nnbench::model::zoo {
namespace {

Model keras_model(const std::string& name, const std::string& file) {
  Model m;
  m.name = name;
  m.study = kStudyCpuVsGpu;
  m.source = "keras-team/keras 2.x examples/" + file;
  m.loss = Loss::kSoftmaxCrossEntropy;
  return m;
}

// Keras stores images channels-last and flattens in HWC order; the
// description is [C,H,W]. Parameter counts and FLOPs do not change.
constexpr char kChannelsNote[] =
    " Images are [C,H,W] here where Keras uses channels-last (HWC); counts "
    "are the same, only the flatten order differs.";

}  // namespace

Model mnist_mlp() {
  Model m = keras_model("mnist-mlp", "mnist_mlp.py");
  m.notes =
      "784-512-512-10, ReLU, dropout 0.2 after each hidden layer; the final "
      "softmax is folded into the loss. model.summary(): 669,706 params.";
  m.input.shape = {784};
  Builder b(m);
  int x = b.dropout(b.relu(b.linear(-1, 512, "dense_1")), 0.2);
  x = b.dropout(b.relu(b.linear(x, 512, "dense_2")), 0.2);
  b.linear(x, 10, "dense_3");
  return m;
}

Model mnist_cnn() {
  Model m = keras_model("mnist-cnn", "mnist_cnn.py");
  m.notes = std::string(
                "Input [1,28,28]; valid convs 32 and 64 (3x3, ReLU), max "
                "pool 2, dropout 0.25, dense 128 ReLU, dropout 0.5, dense "
                "10; softmax folded into the loss. model.summary(): "
                "1,199,882 params.") +
            kChannelsNote;
  m.input.shape = {1, 28, 28};
  Builder b(m);
  int x = b.relu(b.conv(-1, 32, 3, 1, 0, "conv2d_1"));
  x = b.relu(b.conv(x, 64, 3, 1, 0, "conv2d_2"));
  x = b.dropout(b.max_pool(x, 2, 2), 0.25);
  x = b.flatten(x);
  x = b.dropout(b.relu(b.linear(x, 128, "dense_1")), 0.5);
  b.linear(x, 10, "dense_2");
  return m;
}

Model cifar10_cnn() {
  Model m = keras_model("cifar10-cnn", "cifar10_cnn.py");
  m.notes = std::string(
                "The study's VGG-like CIFAR-10 CNN. Input [3,32,32]; conv 32 "
                "same, conv 32 valid, max pool 2, dropout 0.25, conv 64 "
                "same, conv 64 valid, max pool 2, dropout 0.25, dense 512, "
                "dropout 0.5, dense 10; all 3x3 with ReLU; softmax folded "
                "into the loss. model.summary(): 1,250,858 params.") +
            kChannelsNote;
  m.input.shape = {3, 32, 32};
  Builder b(m);
  int x = b.relu(b.conv(-1, 32, 3, 1, 1, "conv2d_1"));
  x = b.relu(b.conv(x, 32, 3, 1, 0, "conv2d_2"));
  x = b.dropout(b.max_pool(x, 2, 2), 0.25);
  x = b.relu(b.conv(x, 64, 3, 1, 1, "conv2d_3"));
  x = b.relu(b.conv(x, 64, 3, 1, 0, "conv2d_4"));
  x = b.dropout(b.max_pool(x, 2, 2), 0.25);
  x = b.flatten(x);
  x = b.dropout(b.relu(b.linear(x, 512, "dense_1")), 0.5);
  b.linear(x, 10, "dense_2");
  return m;
}

}  // namespace nnbench::model::zoo
