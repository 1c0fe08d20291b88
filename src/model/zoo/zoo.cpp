#include "model/zoo/zoo.h"

#include "model/zoo/models.h"
#include "util/error.h"

namespace nnbench::model::zoo {

const std::vector<Entry>& entries() {
  // Grouped by study, in the order docs/studies.md lists them.
  static const std::vector<Entry> all = {
      {"alexnet", alexnet},
      {"googlenet", googlenet},
      {"resnet-50", resnet50},
      {"inception-v3", inception_v3},
      {"fcn-s", fcn_s},
      {"fcn-r", fcn_r},
      {"alexnet-s", alexnet_s},
      {"alexnet-r", alexnet_r},
      {"resnet-56", resnet56},
      {"lstm-ptb", [] { return lstm_ptb(32); }},
      {"lstm-ptb-64", [] { return lstm_ptb(64); }},
      {"mnist-mlp", mnist_mlp},
      {"mnist-cnn", mnist_cnn},
      {"cifar10-cnn", cifar10_cnn},
      {"imdb-fasttext", imdb_fasttext},
      {"imdb-bilstm", imdb_bilstm},
      {"lstm-text-gen", lstm_text_gen},
      {"fmnist-cnn", fmnist_cnn},
      {"gpt2-small", gpt2_small},
      {"gpt2-tiny", gpt2_tiny},
      {"bert-base", [] { return bert_base(128); }},
      {"bert-base-384", [] { return bert_base(384); }},
      {"bert-tiny", bert_tiny},
  };
  return all;
}

std::vector<std::string> names() {
  std::vector<std::string> out;
  for (const auto& e : entries()) out.push_back(e.name);
  return out;
}

Model get(const std::string& name) {
  for (const auto& e : entries())
    if (e.name == name) return e.build();
  std::string known;
  for (const auto& e : entries()) known += (known.empty() ? "" : ", ") + e.name;
  throw Error("unknown model '" + name + "'; known models: " + known);
}

}  // namespace nnbench::model::zoo
