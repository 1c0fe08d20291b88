#include "probe_models.h"

namespace nnbench::engines::reference::testing {

using model::Loss;
using model::Op;
using model::zoo::Builder;
using model::zoo::LstmOptions;
using Body = std::function<void(Builder&)>;

model::Model float_model(const model::Shape& input, const Body& body,
                         Loss loss) {
  model::Model m;
  m.name = "probe";
  m.input.shape = input;
  m.loss = loss;
  Builder b(m);
  body(b);
  return m;
}

model::Model token_model(int64_t steps, int64_t vocab, const Body& body) {
  model::Model m;
  m.name = "probe";
  m.input = {{steps}, model::DType::kInt64, vocab};
  Builder b(m);
  body(b);
  return m;
}

int simple(Builder& b, int x, Op op) {
  model::Layer l;
  l.op = op;
  return b.add(l, {x});
}

namespace {

// x -> flatten -> linear 3 (the classifier every image probe ends with).
void head(Builder& b, int x) { b.linear(b.flatten(x), 3); }

Probe image(const std::string& name, const model::Shape& in, int64_t batch,
            const std::function<int(Builder&)>& body) {
  return {name, float_model(in, [&](Builder& b) { head(b, body(b)); }), batch};
}

Probe lstm_probe(const std::string& name, LstmOptions o) {
  return {
      name,
      float_model({4, 3}, [&](Builder& b) { b.linear(b.lstm(-1, 3, o), 2); }),
      2};
}

std::vector<Probe> image_probes() {
  return {
      image("conv_stride2_pad1_groups2", {4, 6, 6}, 2,
            [](Builder& b) { return b.groups(2).conv(-1, 4, 3, 2, 1); }),
      image("conv_no_bias_and_1x1", {3, 5, 5}, 2,
            [](Builder& b) {
              return b.conv(b.no_bias().conv(-1, 4, 2, 1, 0), 2, 1);
            }),
      image("max_pool_pad_ceil", {2, 6, 6}, 2,
            [](Builder& b) { return b.max_pool(-1, 3, 2, 1, true); }),
      image("max_pool_ceil", {2, 5, 5}, 2,
            [](Builder& b) { return b.max_pool(-1, 2, 2, 0, true); }),
      image("avg_pool_pad_ceil", {2, 6, 6}, 2,
            [](Builder& b) { return b.avg_pool(-1, 3, 2, 1, true); }),
      image("avg_pool_ceil", {2, 5, 5}, 2,
            [](Builder& b) { return b.avg_pool(-1, 2, 2, 0, true); }),
      image("global_avg_pool", {3, 4, 4}, 2,
            [](Builder& b) { return b.global_avg_pool(b.conv(-1, 4, 3)); }),
      image("batch_norm_2d", {3, 3, 3}, 3,
            [](Builder& b) { return b.batch_norm(-1); }),
      image("lrn_size5", {6, 2, 2}, 2,
            [](Builder& b) { return b.lrn(-1, 5, 0.5, 0.75, 2.0); }),
      image("lrn_size4", {5, 2, 2}, 2,
            [](Builder& b) { return b.lrn(-1, 4, 0.5, 0.75, 1.0); }),
      image("add_residual", {2, 4, 4}, 2,
            [](Builder& b) {
              const int x = b.conv(-1, 2, 3, 1, 1);
              return b.add_(b.relu(x), x);
            }),
      image("concat_branches", {2, 4, 4}, 2,
            [](Builder& b) {
              return b.concat({b.conv(-1, 2, 1), b.conv(-1, 3, 3, 1, 1)});
            }),
      image("zero_pad_shortcut", {2, 5, 5}, 2,
            [](Builder& b) {
              return b.zero_pad_shortcut(b.conv(-1, 2, 1), 5, 2);
            }),
  };
}

std::vector<Probe> vector_probes() {
  std::vector<Probe> out;
  for (Op op : {Op::kRelu, Op::kSigmoid, Op::kTanh, Op::kSoftmax})
    out.push_back({"activation_" + std::string(model::op_name(op)),
                   float_model({6},
                               [op](Builder& b) {
                                 b.linear(simple(b, b.linear(-1, 5), op), 3);
                               }),
                   2});
  out.push_back(
      {"batch_norm_1d",
       float_model(
           {6}, [](Builder& b) { b.linear(b.batch_norm(b.linear(-1, 5)), 3); }),
       4});
  out.push_back(
      {"linear_per_step_no_bias",
       float_model({4, 3}, [](Builder& b) { b.no_bias().linear(-1, 5); }), 2});
  out.push_back({"sigmoid_bce",
                 float_model(
                     {6}, [](Builder& b) { b.linear(b.linear(-1, 4), 3); },
                     Loss::kSigmoidBinaryCrossEntropy),
                 3});
  out.push_back({"sigmoid_bce_per_step",
                 float_model(
                     {4, 3}, [](Builder& b) { b.linear(-1, 2); },
                     Loss::kSigmoidBinaryCrossEntropy),
                 2});
  return out;
}

std::vector<Probe> sequence_probes() {
  return {
      {"seq_mean",
       float_model(
           {4, 3},
           [](Builder& b) { b.linear(b.seq_mean(b.linear(-1, 4)), 3); }),
       2},
      {"embedding",
       token_model(
           5, 7,
           [](Builder& b) { b.linear(b.seq_mean(b.embedding(-1, 7, 3)), 4); }),
       3},
      {"one_hot_lstm",
       token_model(4, 5,
                   [](Builder& b) {
                     b.linear(b.lstm(b.one_hot(-1, 5), 3, {.sequences = false}),
                              5);
                   }),
       3},
      lstm_probe("lstm_1layer_last", {.sequences = false}),
      lstm_probe("lstm_2layers_bidir_seq_1bias",
                 {.num_layers = 2, .bidirectional = true}),
      lstm_probe("lstm_2layers_bidir_last_2bias", {.num_layers = 2,
                                                   .bidirectional = true,
                                                   .sequences = false,
                                                   .biases = 2}),
      lstm_probe("lstm_bidir_seq_2bias", {.bidirectional = true, .biases = 2}),
  };
}

}  // namespace

std::vector<Probe> transformer_probes() {
  return {
      {"layer_norm",
       float_model({3, 4},
                   [](Builder& b) {
                     b.linear(b.seq_mean(b.layer_norm(b.linear(-1, 5))), 3);
                   }),
       2},
      {"gelu_erf",
       float_model({6},
                   [](Builder& b) { b.linear(b.gelu(b.linear(-1, 5)), 3); }),
       2},
      {"gelu_tanh",
       float_model(
           {6}, [](Builder& b) { b.linear(b.gelu(b.linear(-1, 5), true), 3); }),
       2},
      {"positions",
       token_model(4, 6,
                   [](Builder& b) {
                     b.linear(b.seq_mean(b.positions(b.embedding(-1, 6, 3), 5)),
                              3);
                   }),
       2},
      {"attention_2heads",
       float_model({4, 4},
                   [](Builder& b) {
                     b.linear(b.seq_mean(b.attention(-1, 2, false)), 3);
                   }),
       2},
      {"attention_causal_no_bias",
       float_model({4, 6},
                   [](Builder& b) {
                     b.linear(b.seq_mean(b.no_bias().attention(-1, 3, true)),
                              3);
                   }),
       2},
      {"seq_first",
       float_model(
           {3, 4},
           [](Builder& b) { b.linear(b.seq_first(b.linear(-1, 5)), 3); }),
       2},
      // A GPT-2 block between tied embeddings: a logit per position.
      {"gpt_block_tied",
       token_model(4, 6,
                   [](Builder& b) {
                     const int e = b.embedding(-1, 6, 4);
                     const int p = b.positions(e, 4);
                     const int r =
                         b.add_(p, b.attention(b.layer_norm(p), 2, true));
                     const int m = b.linear(
                         b.gelu(b.linear(b.layer_norm(r), 8), true), 4);
                     b.tied_linear(b.layer_norm(b.add_(r, m)), e);
                   }),
       2},
  };
}

std::vector<Probe> probes() {
  std::vector<Probe> all = image_probes();
  for (auto& p : vector_probes()) all.push_back(std::move(p));
  for (auto& p : sequence_probes()) all.push_back(std::move(p));
  return all;
}

}  // namespace nnbench::engines::reference::testing
