#include "bench/suites.h"

#include "util/error.h"

namespace nnbench::bench {
namespace {

constexpr auto kTrain = backend::Mode::kTrain;
constexpr auto kInfer = backend::Mode::kInfer;

}  // namespace

const std::vector<Suite>& suites() {
  static const std::vector<Suite> all = {
      {"quick",
       "A few small models of every study, train and infer: a couple of "
       "minutes on 2 cores",
       {{"mnist-mlp", kTrain, 128},
        {"mnist-mlp", kInfer, 128},
        {"mnist-cnn", kTrain, 128},
        {"mnist-cnn", kInfer, 128},
        {"fcn-r", kTrain, 64},
        {"alexnet-r", kTrain, 128},
        {"resnet-56", kTrain, 32},
        {"imdb-fasttext", kTrain, 32},
        {"imdb-bilstm", kTrain, 32},
        {"lstm-ptb", kTrain, 32}}},
      {"dlbench-cpu",
       "DLBench's CPU configuration: one fixed mini-batch per network "
       "(FCN-S 64, AlexNet-S 16, ResNet-50 16, FCN-R 1024, AlexNet-R 1024, "
       "ResNet-56 128, LSTM 256)",
       {{"fcn-s", kTrain, 64},
        {"alexnet-s", kTrain, 16},
        {"resnet-50", kTrain, 16},
        {"fcn-r", kTrain, 1024},
        {"alexnet-r", kTrain, 1024},
        {"resnet-56", kTrain, 128},
        {"lstm-ptb", kTrain, 256}}},
      {"keras-cpu-gpu",
       "The CPU-vs-GPU study's Keras models at the examples' batch sizes",
       {{"mnist-mlp", kTrain, 128},
        {"mnist-cnn", kTrain, 128},
        {"cifar10-cnn", kTrain, 32},
        {"imdb-fasttext", kTrain, 32},
        {"imdb-bilstm", kTrain, 32},
        {"lstm-text-gen", kTrain, 128}}},
  };
  return all;
}

const Suite& suite(const std::string& name) {
  std::string known;
  for (const auto& s : suites()) {
    if (s.name == name) return s;
    known += " " + s.name;
  }
  throw Error("unknown suite '" + name + "'; known:" + known);
}

}  // namespace nnbench::bench
