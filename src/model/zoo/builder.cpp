#include "model/zoo/builder.h"

namespace nnbench::model::zoo {

std::string Builder::auto_name(Op op) {
  return std::string(op_name(op)) + "_" + std::to_string(counter_++);
}

int Builder::add(Layer l, std::vector<int> inputs, const std::string& name) {
  l.name = name.empty() ? auto_name(l.op) : name;
  // Store the default ("previous layer") as empty to keep model files short.
  if (!(inputs.size() == 1 && inputs[0] == last())) l.inputs = inputs;
  m_.layers.push_back(std::move(l));
  return last();
}

int Builder::linear(int x, int64_t out, const std::string& name) {
  Layer l;
  l.op = Op::kLinear;
  l.out = out;
  l.bias = bias_;
  bias_ = true;
  return add(l, {x}, name);
}

int Builder::conv(int x, int64_t out, int64_t k, int64_t stride, int64_t pad,
                  const std::string& name) {
  Layer l;
  l.op = Op::kConv2d;
  l.out = out;
  l.kernel = {k, k};
  l.stride = {stride, stride};
  l.pad = {pad, pad};
  l.bias = bias_;
  l.groups = groups_;
  bias_ = true;
  groups_ = 1;
  return add(l, {x}, name);
}

int Builder::conv_hw(int x, int64_t out, int64_t kh, int64_t kw, int64_t ph,
                     int64_t pw, const std::string& name) {
  const int i = conv(x, out, 1, 1, 0, name);
  m_.layers[i].kernel = {kh, kw};
  m_.layers[i].pad = {ph, pw};
  return i;
}

namespace {
Layer pool(Op op, int64_t k, int64_t stride, int64_t pad, bool ceil_mode) {
  Layer l;
  l.op = op;
  l.kernel = {k, k};
  l.stride = {stride, stride};
  l.pad = {pad, pad};
  l.ceil_mode = ceil_mode;
  return l;
}
Layer simple(Op op) {
  Layer l;
  l.op = op;
  return l;
}
}  // namespace

int Builder::max_pool(int x, int64_t k, int64_t stride, int64_t pad,
                      bool ceil_mode) {
  return add(pool(Op::kMaxPool2d, k, stride, pad, ceil_mode), {x});
}

int Builder::avg_pool(int x, int64_t k, int64_t stride, int64_t pad,
                      bool ceil_mode) {
  return add(pool(Op::kAvgPool2d, k, stride, pad, ceil_mode), {x});
}

int Builder::global_avg_pool(int x) {
  return add(simple(Op::kGlobalAvgPool), {x});
}

int Builder::batch_norm(int x, double eps) {
  Layer l = simple(Op::kBatchNorm);
  l.eps = eps;
  return add(l, {x});
}

int Builder::relu(int x) { return add(simple(Op::kRelu), {x}); }
int Builder::sigmoid(int x) { return add(simple(Op::kSigmoid), {x}); }

int Builder::dropout(int x, double p) {
  Layer l = simple(Op::kDropout);
  l.p = p;
  return add(l, {x});
}

int Builder::flatten(int x) { return add(simple(Op::kFlatten), {x}); }
int Builder::add_(int a, int b) { return add(simple(Op::kAdd), {a, b}); }
int Builder::concat(std::vector<int> xs) {
  return add(simple(Op::kConcat), std::move(xs));
}

int Builder::lrn(int x, int64_t size, double alpha, double beta, double k) {
  Layer l = simple(Op::kLrn);
  l.size = size;
  l.alpha = alpha;
  l.beta = beta;
  l.k = k;
  return add(l, {x});
}

int Builder::zero_pad_shortcut(int x, int64_t out, int64_t stride) {
  Layer l = simple(Op::kZeroPadShortcut);
  l.out = out;
  l.stride = {stride, stride};
  return add(l, {x});
}

int Builder::embedding(int x, int64_t vocab, int64_t dim,
                       const std::string& name) {
  Layer l = simple(Op::kEmbedding);
  l.vocab = vocab;
  l.out = dim;
  return add(l, {x}, name);
}

int Builder::one_hot(int x, int64_t vocab) {
  Layer l = simple(Op::kOneHot);
  l.vocab = vocab;
  return add(l, {x});
}

int Builder::seq_mean(int x) { return add(simple(Op::kSeqMean), {x}); }

int Builder::layer_norm(int x, double eps, const std::string& name) {
  Layer l = simple(Op::kLayerNorm);
  l.eps = eps;
  return add(l, {x}, name);
}

int Builder::gelu(int x, bool approximate) {
  Layer l = simple(Op::kGelu);
  l.approximate = approximate;
  return add(l, {x});
}

int Builder::positions(int x, int64_t max_positions, const std::string& name) {
  Layer l = simple(Op::kPositions);
  l.vocab = max_positions;
  return add(l, {x}, name);
}

int Builder::attention(int x, int64_t heads, bool causal,
                       const std::string& name) {
  Layer l = simple(Op::kAttention);
  l.heads = heads;
  l.causal = causal;
  l.bias = bias_;
  bias_ = true;
  return add(l, {x}, name);
}

int Builder::tied_linear(int x, int embedding, const std::string& name) {
  Layer l = simple(Op::kTiedLinear);
  l.tied = embedding;
  return add(l, {x}, name);
}

int Builder::seq_first(int x) { return add(simple(Op::kSeqFirst), {x}); }

int Builder::lstm(int x, int64_t hidden, LstmOptions o,
                  const std::string& name) {
  Layer l = simple(Op::kLstm);
  l.out = hidden;
  l.num_layers = o.num_layers;
  l.bidirectional = o.bidirectional;
  l.sequences = o.sequences;
  l.lstm_biases = o.biases;
  return add(l, {x}, name);
}

}  // namespace nnbench::model::zoo
