// AlexNet as Caffe ships it, DLBench's ungrouped AlexNet-S, and DLBench's
// small CIFAR-10 variant.
#include "model/zoo/builder.h"
#include "model/zoo/models.h"

namespace nnbench::model::zoo {

Model alexnet() {
  Model m;
  m.name = "alexnet";
  // Not DLBench's AlexNet-S, which has no groups and no LRN: alexnet-s.
  m.study = kStudyCloudGpu;
  m.source =
      "BVLC Caffe models/bvlc_alexnet/train_val.prototxt (Krizhevsky, "
      "Sutskever, Hinton 2012)";
  m.notes =
      "Input [3,227,227], the prototxt's crop: every pooling window then "
      "tiles its input exactly, so Caffe's ceil-mode and the floor mode of "
      "other frameworks agree and pool5 is 6x6 (fc6 reads 9216). The often "
      "quoted 224 input does not give that map in floor mode (conv1 54, "
      "pool5 5x5, fc6 would read 6400). Two groups in conv2, conv4, conv5 "
      "(the original two-GPU split); LRN (size 5, alpha 1e-4, beta 0.75) "
      "after relu1 and relu2, before pooling, as in the prototxt. Softmax "
      "folded into the loss.";
  m.input.shape = {3, 227, 227};
  Builder b(m);
  // Caffe pools in ceil mode; kept so the description matches the source.
  auto pool = [&b](int x) { return b.max_pool(x, 3, 2, 0, true); };
  int x = b.conv(-1, 96, 11, 4, 0, "conv1");
  x = b.lrn(b.relu(x), 5, 1e-4, 0.75);
  x = pool(x);
  x = b.groups(2).conv(x, 256, 5, 1, 2, "conv2");
  x = b.lrn(b.relu(x), 5, 1e-4, 0.75);
  x = pool(x);
  x = b.relu(b.conv(x, 384, 3, 1, 1, "conv3"));
  x = b.relu(b.groups(2).conv(x, 384, 3, 1, 1, "conv4"));
  x = b.relu(b.groups(2).conv(x, 256, 3, 1, 1, "conv5"));
  x = b.flatten(pool(x));
  x = b.dropout(b.relu(b.linear(x, 4096, "fc6")), 0.5);
  x = b.dropout(b.relu(b.linear(x, 4096, "fc7")), 0.5);
  b.linear(x, 1000, "fc8");
  m.loss = Loss::kSoftmaxCrossEntropy;
  return m;
}

Model alexnet_s() {
  Model m;
  m.name = "alexnet-s";
  m.study = std::string(kStudyDlbench) + " (AlexNet-S)";
  m.source =
      "DLBench arXiv:1608.07249 (AlexNet-S, synthetic ImageNet-sized data: "
      "150528 inputs, 1000 classes, ~62M parameters); layers as "
      "hclhkbu/dlbench synthetic/experiments/caffe/cnn/alexnet/"
      "alexnet.prototxt and cntk/cnn/alexnet/AlexNet.ndl";
  m.notes =
      "The AlexNet DLBench benchmarks on synthetic data, not Caffe's "
      "bvlc_alexnet (model alexnet): no groups (conv2, conv4 and conv5 see "
      "every input channel, as on one GPU) and no LRN, so 62,378,344 "
      "parameters instead of 60,965,224. Input [3,224,224] (150528 values, "
      "the paper's input size); Caffe's ceil-mode pooling then gives "
      "54->27->13->6, so fc6 reads 9216 as in the CNTK script. DLBench's "
      "TensorFlow script pads SAME instead (pool5 7x7, fc6 reads 12544); "
      "the Caffe and CNTK definitions are followed here. Dropout 0.5 after "
      "fc6 and fc7 as in the prototxt. Softmax folded into the loss.";
  m.input.shape = {3, 224, 224};
  Builder b(m);
  auto pool = [&b](int x) { return b.max_pool(x, 3, 2, 0, true); };
  int x = pool(b.relu(b.conv(-1, 96, 11, 4, 0, "conv1")));
  x = pool(b.relu(b.conv(x, 256, 5, 1, 2, "conv2")));
  x = b.relu(b.conv(x, 384, 3, 1, 1, "conv3"));
  x = b.relu(b.conv(x, 384, 3, 1, 1, "conv4"));
  x = b.relu(b.conv(x, 256, 3, 1, 1, "conv5"));
  x = b.flatten(pool(x));
  x = b.dropout(b.relu(b.linear(x, 4096, "fc6")), 0.5);
  x = b.dropout(b.relu(b.linear(x, 4096, "fc7")), 0.5);
  b.linear(x, 1000, "fc8");
  m.loss = Loss::kSoftmaxCrossEntropy;
  return m;
}

Model alexnet_r() {
  Model m;
  m.name = "alexnet-r";
  m.study = kStudyDlbench;
  m.source =
      "DLBench arXiv:1608.07249 (AlexNet-R); cuda-convnet "
      "example-layers/layers-18pct.cfg, as Caffe "
      "examples/cifar10/cifar10_full_train_test.prototxt";
  m.notes =
      "CIFAR-10, input [3,32,32]. The layers-18pct net without its LRN "
      "layers, as DLBench runs it. Layer order as in the source: conv1 is "
      "max-pooled before its ReLU, conv2 and conv3 are ReLU then average "
      "pool. Pooling in ceil mode (cuda-convnet and Caffe), giving "
      "32->16->8->4; floor mode would give 15->7->3.";
  m.input.shape = {3, 32, 32};
  Builder b(m);
  int x = b.conv(-1, 32, 5, 1, 2, "conv1");
  x = b.relu(b.max_pool(x, 3, 2, 0, true));
  x = b.relu(b.conv(x, 32, 5, 1, 2, "conv2"));
  x = b.avg_pool(x, 3, 2, 0, true);
  x = b.relu(b.conv(x, 64, 5, 1, 2, "conv3"));
  x = b.flatten(b.avg_pool(x, 3, 2, 0, true));
  b.linear(x, 10, "ip1");
  m.loss = Loss::kSoftmaxCrossEntropy;
  return m;
}

}  // namespace nnbench::model::zoo
