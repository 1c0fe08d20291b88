// GoogLeNet (Inception v1) as the BVLC Caffe prototxt defines it.
#include <string>

#include "model/zoo/builder.h"
#include "model/zoo/models.h"

namespace nnbench::model::zoo {
namespace {

int conv_relu(Builder& b, int x, int64_t out, int64_t k, int64_t stride,
              const std::string& name) {
  return b.relu(b.conv(x, out, k, stride, k / 2, name));
}

// Caffe pools round up; sizes 112->56->28->14->7 depend on it.
int pool(Builder& b, int x) { return b.max_pool(x, 3, 2, 0, true); }

struct InceptionWidths {
  int64_t c1, c3_reduce, c3, c5_reduce, c5, pool_proj;
};

int inception(Builder& b, int x, const std::string& name,
              const InceptionWidths& w) {
  const int b1 = conv_relu(b, x, w.c1, 1, 1, name + "/1x1");
  int b3 = conv_relu(b, x, w.c3_reduce, 1, 1, name + "/3x3_reduce");
  b3 = conv_relu(b, b3, w.c3, 3, 1, name + "/3x3");
  int b5 = conv_relu(b, x, w.c5_reduce, 1, 1, name + "/5x5_reduce");
  b5 = conv_relu(b, b5, w.c5, 5, 1, name + "/5x5");
  int bp = b.max_pool(x, 3, 1, 1, true);
  bp = conv_relu(b, bp, w.pool_proj, 1, 1, name + "/pool_proj");
  return b.concat({b1, b3, b5, bp});
}

}  // namespace

Model googlenet() {
  Model m;
  m.name = "googlenet";
  m.study = kStudyCloudGpu;
  m.source =
      "BVLC Caffe models/bvlc_googlenet/train_val.prototxt (Szegedy et al. "
      "2014, Going Deeper with Convolutions, arXiv:1409.4842)";
  m.notes =
      "The original GoogLeNet: convs with bias, no batch norm, LRN (size 5, "
      "alpha 1e-4, beta 0.75) after pool1 and after conv2/3x3, ceil-mode "
      "pooling as in Caffe, 7x7 average pool, dropout 0.4, 1000 classes, "
      "input [3,224,224]. The two auxiliary classifiers (loss1, loss2) are "
      "left out: they are training-only heads whose losses the prototxt "
      "weights by 0.3, and deployment drops them. Not torchvision's "
      "googlenet, which adds batch norm and drops the biases. Softmax "
      "folded into the loss.";
  m.input.shape = {3, 224, 224};
  Builder b(m);
  int x = conv_relu(b, -1, 64, 7, 2, "conv1/7x7_s2");
  x = b.lrn(pool(b, x), 5, 1e-4, 0.75);
  x = conv_relu(b, x, 64, 1, 1, "conv2/3x3_reduce");
  x = conv_relu(b, x, 192, 3, 1, "conv2/3x3");
  x = pool(b, b.lrn(x, 5, 1e-4, 0.75));
  x = inception(b, x, "inception_3a", {64, 96, 128, 16, 32, 32});
  x = inception(b, x, "inception_3b", {128, 128, 192, 32, 96, 64});
  x = pool(b, x);
  x = inception(b, x, "inception_4a", {192, 96, 208, 16, 48, 64});
  x = inception(b, x, "inception_4b", {160, 112, 224, 24, 64, 64});
  x = inception(b, x, "inception_4c", {128, 128, 256, 24, 64, 64});
  x = inception(b, x, "inception_4d", {112, 144, 288, 32, 64, 64});
  x = inception(b, x, "inception_4e", {256, 160, 320, 32, 128, 128});
  x = pool(b, x);
  x = inception(b, x, "inception_5a", {256, 160, 320, 32, 128, 128});
  x = inception(b, x, "inception_5b", {384, 192, 384, 48, 128, 128});
  x = b.flatten(b.avg_pool(x, 7, 1));
  x = b.dropout(x, 0.4);
  b.linear(x, 1000, "loss3/classifier");
  m.loss = Loss::kSoftmaxCrossEntropy;
  return m;
}

}  // namespace nnbench::model::zoo
