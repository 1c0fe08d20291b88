// Inception-v3 as torchvision defines it (module names kept).
#include <string>

#include "model/zoo/builder.h"
#include "model/zoo/models.h"

namespace nnbench::model::zoo {
namespace {

// torchvision BasicConv2d: conv without bias, BN eps 0.001, ReLU. Square
// kernels with the padding torchvision passes explicitly.
int basic(Builder& b, int x, int64_t out, int64_t k, const std::string& name,
          int64_t stride = 1, int64_t pad = 0) {
  x = b.no_bias().conv(x, out, k, stride, pad, name);
  return b.relu(b.batch_norm(x, 0.001));
}

// Factorised 1xn / nx1 kernels, always "same" padding and stride 1.
int basic_hw(Builder& b, int x, int64_t out, int64_t kh, int64_t kw,
             const std::string& name) {
  x = b.no_bias().conv_hw(x, out, kh, kw, kh / 2, kw / 2, name);
  return b.relu(b.batch_norm(x, 0.001));
}

int avg_pool_branch(Builder& b, int x, int64_t out, const std::string& name) {
  return basic(b, b.avg_pool(x, 3, 1, 1), out, 1, name + ".branch_pool");
}

int inception_a(Builder& b, int x, int64_t pool_features,
                const std::string& n) {
  const int b1 = basic(b, x, 64, 1, n + ".branch1x1");
  int b5 = basic(b, x, 48, 1, n + ".branch5x5_1");
  b5 = basic(b, b5, 64, 5, n + ".branch5x5_2", 1, 2);
  int b3 = basic(b, x, 64, 1, n + ".branch3x3dbl_1");
  b3 = basic(b, b3, 96, 3, n + ".branch3x3dbl_2", 1, 1);
  b3 = basic(b, b3, 96, 3, n + ".branch3x3dbl_3", 1, 1);
  const int bp = avg_pool_branch(b, x, pool_features, n);
  return b.concat({b1, b5, b3, bp});
}

int inception_b(Builder& b, int x, const std::string& n) {
  const int b3 = basic(b, x, 384, 3, n + ".branch3x3", 2);
  int bd = basic(b, x, 64, 1, n + ".branch3x3dbl_1");
  bd = basic(b, bd, 96, 3, n + ".branch3x3dbl_2", 1, 1);
  bd = basic(b, bd, 96, 3, n + ".branch3x3dbl_3", 2);
  const int bp = b.max_pool(x, 3, 2);
  return b.concat({b3, bd, bp});
}

int inception_c(Builder& b, int x, int64_t c7, const std::string& n) {
  const int b1 = basic(b, x, 192, 1, n + ".branch1x1");
  int b7 = basic(b, x, c7, 1, n + ".branch7x7_1");
  b7 = basic_hw(b, b7, c7, 1, 7, n + ".branch7x7_2");
  b7 = basic_hw(b, b7, 192, 7, 1, n + ".branch7x7_3");
  int bd = basic(b, x, c7, 1, n + ".branch7x7dbl_1");
  bd = basic_hw(b, bd, c7, 7, 1, n + ".branch7x7dbl_2");
  bd = basic_hw(b, bd, c7, 1, 7, n + ".branch7x7dbl_3");
  bd = basic_hw(b, bd, c7, 7, 1, n + ".branch7x7dbl_4");
  bd = basic_hw(b, bd, 192, 1, 7, n + ".branch7x7dbl_5");
  const int bp = avg_pool_branch(b, x, 192, n);
  return b.concat({b1, b7, bd, bp});
}

int inception_d(Builder& b, int x, const std::string& n) {
  int b3 = basic(b, x, 192, 1, n + ".branch3x3_1");
  b3 = basic(b, b3, 320, 3, n + ".branch3x3_2", 2);
  int b7 = basic(b, x, 192, 1, n + ".branch7x7x3_1");
  b7 = basic_hw(b, b7, 192, 1, 7, n + ".branch7x7x3_2");
  b7 = basic_hw(b, b7, 192, 7, 1, n + ".branch7x7x3_3");
  b7 = basic(b, b7, 192, 3, n + ".branch7x7x3_4", 2);
  const int bp = b.max_pool(x, 3, 2);
  return b.concat({b3, b7, bp});
}

// The 3x3 branches split into parallel 1x3 and 3x1 convs, concatenated.
int inception_e(Builder& b, int x, const std::string& n) {
  const int b1 = basic(b, x, 320, 1, n + ".branch1x1");
  const int b3 = basic(b, x, 384, 1, n + ".branch3x3_1");
  const int b3a = basic_hw(b, b3, 384, 1, 3, n + ".branch3x3_2a");
  const int b3b = basic_hw(b, b3, 384, 3, 1, n + ".branch3x3_2b");
  int bd = basic(b, x, 448, 1, n + ".branch3x3dbl_1");
  bd = basic(b, bd, 384, 3, n + ".branch3x3dbl_2", 1, 1);
  const int bda = basic_hw(b, bd, 384, 1, 3, n + ".branch3x3dbl_3a");
  const int bdb = basic_hw(b, bd, 384, 3, 1, n + ".branch3x3dbl_3b");
  const int bp = avg_pool_branch(b, x, 192, n);
  const int b3ab = b.concat({b3a, b3b});
  const int bdab = b.concat({bda, bdb});
  return b.concat({b1, b3ab, bdab, bp});
}

}  // namespace

Model inception_v3() {
  Model m;
  m.name = "inception-v3";
  m.study = kStudyCloudGpu;
  m.source =
      "torchvision/models/inception.py inception_v3(aux_logits=False) "
      "(Szegedy et al. 2015, Rethinking the Inception Architecture, "
      "arXiv:1512.00567)";
  m.notes =
      "Input [3,299,299]. Convs without bias, each followed by BN (eps "
      "0.001) and ReLU; floor-mode pooling; average-pool branches count "
      "padding (torchvision's default). The auxiliary classifier "
      "(AuxLogits after Mixed_6e) is excluded: a training-only head. "
      "Dropout 0.5 before fc, 1000 classes, softmax folded into the loss.";
  m.input.shape = {3, 299, 299};
  Builder b(m);
  int x = basic(b, -1, 32, 3, "Conv2d_1a_3x3", 2);
  x = basic(b, x, 32, 3, "Conv2d_2a_3x3");
  x = basic(b, x, 64, 3, "Conv2d_2b_3x3", 1, 1);
  x = b.max_pool(x, 3, 2);
  x = basic(b, x, 80, 1, "Conv2d_3b_1x1");
  x = basic(b, x, 192, 3, "Conv2d_4a_3x3");
  x = b.max_pool(x, 3, 2);
  x = inception_a(b, x, 32, "Mixed_5b");
  x = inception_a(b, x, 64, "Mixed_5c");
  x = inception_a(b, x, 64, "Mixed_5d");
  x = inception_b(b, x, "Mixed_6a");
  x = inception_c(b, x, 128, "Mixed_6b");
  x = inception_c(b, x, 160, "Mixed_6c");
  x = inception_c(b, x, 160, "Mixed_6d");
  x = inception_c(b, x, 192, "Mixed_6e");
  x = inception_d(b, x, "Mixed_7a");
  x = inception_e(b, x, "Mixed_7b");
  x = inception_e(b, x, "Mixed_7c");
  x = b.dropout(b.global_avg_pool(x), 0.5);
  b.linear(x, 1000, "fc");
  m.loss = Loss::kSoftmaxCrossEntropy;
  return m;
}

}  // namespace nnbench::model::zoo
