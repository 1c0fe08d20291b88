// Residual networks: torchvision's ImageNet ResNet-50 and the CIFAR-10
// ResNet-56 of the paper.
#include <string>

#include "model/zoo/builder.h"
#include "model/zoo/models.h"

namespace nnbench::model::zoo {
namespace {

// conv (no bias: BN's shift makes it redundant) -> BN, optional ReLU.
int conv_bn(Builder& b, int x, int64_t out, int64_t k, int64_t stride,
            const std::string& name, bool relu = true) {
  x = b.no_bias().conv(x, out, k, stride, k / 2, name);
  x = b.batch_norm(x);
  return relu ? b.relu(x) : x;
}

// torchvision Bottleneck (v1.5): the stride sits in the 3x3 conv.
int bottleneck(Builder& b, int x, int64_t in, int64_t planes, int64_t stride,
               const std::string& name) {
  const int64_t out = planes * 4;
  int y = conv_bn(b, x, planes, 1, 1, name + ".conv1");
  y = conv_bn(b, y, planes, 3, stride, name + ".conv2");
  y = conv_bn(b, y, out, 1, 1, name + ".conv3", false);
  int shortcut = x;
  if (stride != 1 || in != out)
    shortcut = conv_bn(b, x, out, 1, stride, name + ".downsample", false);
  return b.relu(b.add_(y, shortcut));
}

// CIFAR basic block with the parameter-free option A shortcut.
int basic_block(Builder& b, int x, int64_t in, int64_t planes, int64_t stride,
                const std::string& name) {
  int y = conv_bn(b, x, planes, 3, stride, name + ".conv1");
  y = conv_bn(b, y, planes, 3, 1, name + ".conv2", false);
  int shortcut = x;
  if (stride != 1 || in != planes)
    shortcut = b.zero_pad_shortcut(x, planes, stride);
  return b.relu(b.add_(y, shortcut));
}

}  // namespace

Model resnet50() {
  Model m;
  m.name = "resnet-50";
  m.study = std::string(kStudyCloudGpu) + ", " + kStudyDlbench;
  m.source =
      "torchvision/models/resnet.py resnet50 (He, Zhang, Ren, Sun 2016, "
      "arXiv:1512.03385)";
  m.notes =
      "ResNet v1.5 as torchvision: the stride-2 of a stage sits in the 3x3 "
      "conv, not the first 1x1 (Caffe's original v1 puts it in the 1x1; "
      "same parameters, somewhat more FLOPs). Convs without bias, BN eps 1e-5, "
      "projection shortcuts (1x1 conv + BN) where shapes change. Input "
      "[3,224,224], 1000 classes, softmax folded into the loss.";
  m.input.shape = {3, 224, 224};
  Builder b(m);
  int x = conv_bn(b, -1, 64, 7, 2, "conv1");
  x = b.max_pool(x, 3, 2, 1);
  const int64_t blocks[] = {3, 4, 6, 3};
  int64_t in = 64;
  for (int stage = 0; stage < 4; ++stage) {
    const int64_t planes = int64_t{64} << stage;
    for (int64_t i = 0; i < blocks[stage]; ++i) {
      const int64_t stride = (stage > 0 && i == 0) ? 2 : 1;
      x = bottleneck(
          b, x, in, planes, stride,
          "layer" + std::to_string(stage + 1) + "." + std::to_string(i));
      in = planes * 4;
    }
  }
  x = b.global_avg_pool(x);
  b.linear(x, 1000, "fc");
  m.loss = Loss::kSoftmaxCrossEntropy;
  return m;
}

Model resnet56() {
  Model m;
  m.name = "resnet-56";
  m.study = kStudyDlbench;
  m.source =
      "He, Zhang, Ren, Sun 2016, arXiv:1512.03385, section 4.2 (CIFAR-10, "
      "6n+2 layers with n=9)";
  m.notes =
      "Input [3,32,32]; 3 stages of 9 basic blocks with 16/32/64 channels "
      "on 32/16/8 maps; convs without bias, BN eps 1e-5. Shortcut option "
      "A: identity, or subsample by 2 and zero-pad the new channels, so "
      "shortcuts add no parameters (853,018 in all; projection shortcuts, "
      "option B, would add 1x1 convs). Softmax folded into the loss.";
  m.input.shape = {3, 32, 32};
  Builder b(m);
  int x = conv_bn(b, -1, 16, 3, 1, "conv1");
  int64_t in = 16;
  for (int stage = 0; stage < 3; ++stage) {
    const int64_t planes = int64_t{16} << stage;
    for (int i = 0; i < 9; ++i) {
      const int64_t stride = (stage > 0 && i == 0) ? 2 : 1;
      x = basic_block(
          b, x, in, planes, stride,
          "stage" + std::to_string(stage + 1) + "." + std::to_string(i));
      in = planes;
    }
  }
  x = b.global_avg_pool(x);
  b.linear(x, 10, "fc");
  m.loss = Loss::kSoftmaxCrossEntropy;
  return m;
}

}  // namespace nnbench::model::zoo
