#include "cases.h"

#include <functional>
#include <map>

#include "model/zoo/builder.h"

namespace nnbench::conformance {
namespace {

using model::Model;
using model::zoo::Builder;
using Body = std::function<void(Builder&)>;

Case make(const std::string& name, model::Shape input, const Body& body,
          int64_t vocab = 0) {
  Model m;
  m.name = name;
  m.input.shape = std::move(input);
  if (vocab > 0) {
    m.input.dtype = model::DType::kInt64;
    m.input.vocab = vocab;
  }
  Builder b(m);
  body(b);
  b.linear(b.last(), 3, "head");
  return {name, m};
}

Case image(const std::string& name, const Body& body) {
  return make(name, {4, 9, 9}, [&](Builder& b) {
    body(b);
    b.flatten(b.last());
  });
}

Case binary_cross_entropy();

}  // namespace

std::vector<Case> layer_cases() {
  return {
      make("linear", {12}, [](Builder& b) { b.linear(-1, 7); }),
      make("linear_no_bias", {12},
           [](Builder& b) { b.no_bias().linear(-1, 7); }),
      image("conv2d", [](Builder& b) { b.conv(-1, 6, 3); }),
      image("conv2d_stride_pad_groups",
            [](Builder& b) { b.groups(2).conv(-1, 6, 3, 2, 1); }),
      image("conv2d_no_bias_relu",
            [](Builder& b) { b.relu(b.no_bias().conv(-1, 5, 3, 1, 1)); }),
      image("max_pool", [](Builder& b) { b.max_pool(b.conv(-1, 5, 3), 2, 2); }),
      image("max_pool_ceil_pad",
            [](Builder& b) { b.max_pool(b.conv(-1, 5, 2), 3, 2, 1, true); }),
      image("avg_pool", [](Builder& b) { b.avg_pool(b.conv(-1, 5, 3), 3, 2); }),
      image("avg_pool_ceil_pad",
            [](Builder& b) { b.avg_pool(b.conv(-1, 5, 2), 3, 2, 1, true); }),
      image("global_avg_pool",
            [](Builder& b) { b.global_avg_pool(b.conv(-1, 5, 3)); }),
      make("relu", {12}, [](Builder& b) { b.relu(b.linear(-1, 7)); }),
      make("sigmoid", {12}, [](Builder& b) { b.sigmoid(b.linear(-1, 7)); }),
      make("tanh", {12},
           [](Builder& b) {
             model::Layer t;
             t.op = model::Op::kTanh;
             b.add(t, {b.linear(-1, 7)});
           }),
      make("softmax", {12},
           [](Builder& b) {
             model::Layer s;
             s.op = model::Op::kSoftmax;
             b.add(s, {b.linear(-1, 7)});
           }),
      image("batch_norm_2d",
            [](Builder& b) { b.relu(b.batch_norm(b.conv(-1, 5, 3))); }),
      make("batch_norm_1d", {12},
           [](Builder& b) { b.batch_norm(b.linear(-1, 7)); }),
      image("lrn", [](Builder& b) { b.lrn(b.conv(-1, 6, 3), 5, 1e-2, 0.75); }),
      image("residual_add",
            [](Builder& b) {
              const int x = b.relu(b.conv(-1, 5, 3, 1, 1));
              b.add_(x, b.conv(x, 5, 3, 1, 1));
            }),
      image("concat",
            [](Builder& b) {
              b.concat({b.conv(-1, 3, 1), b.conv(-1, 5, 3, 1, 1)});
            }),
      image("zero_pad_shortcut",
            [](Builder& b) { b.zero_pad_shortcut(b.conv(-1, 4, 3), 8, 2); }),
      make(
          "embedding", {6},
          [](Builder& b) { b.seq_mean(b.embedding(-1, 20, 4)); }, 20),
      make(
          "one_hot_lstm", {5},
          [](Builder& b) { b.lstm(b.one_hot(-1, 7), 4, {.sequences = false}); },
          7),
      make(
          "lstm_2layer_bidirectional", {5},
          [](Builder& b) {
            b.seq_mean(b.lstm(b.embedding(-1, 11, 3), 4,
                              {.num_layers = 2, .bidirectional = true}));
          },
          11),
      make(
          "lstm_two_biases_last_step", {5},
          [](Builder& b) {
            b.lstm(b.embedding(-1, 11, 3), 4,
                   {.bidirectional = true, .sequences = false, .biases = 2});
          },
          11),
      binary_cross_entropy(),
  };
}

namespace {

Case binary_cross_entropy() {
  Model m;
  m.name = "sigmoid_bce_loss";
  m.input.shape = {12};
  m.loss = model::Loss::kSigmoidBinaryCrossEntropy;
  Builder b(m);
  b.linear(b.relu(b.linear(-1, 7)), 1, "head");
  return {m.name, m};
}

}  // namespace

std::vector<std::string> zoo_cases() {
  return {"mnist-mlp",     "mnist-cnn", "cifar10-cnn",   "alexnet-r",
          "resnet-56",     "fcn-r",     "imdb-fasttext", "imdb-bilstm",
          "lstm-text-gen", "bert-tiny", "gpt2-tiny"};
}

namespace {
std::map<std::string, Minimum>& minimums() {
  static std::map<std::string, Minimum> m;
  return m;
}
}  // namespace

Minimum minimum_for(const std::string& backend, const std::string& precision) {
  const auto it = minimums().find(backend);
  if (it != minimums().end()) return it->second;
  const size_t n = layer_cases().size();
  return {precision == "int8" ? (n + 2) / 3 : (n + 1) / 2, 2};
}

void expect_minimum(const std::string& backend, Minimum m) {
  minimums()[backend] = m;
}

}  // namespace nnbench::conformance
