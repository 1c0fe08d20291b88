#include "model/layer.h"

#include <algorithm>

#include "util/error.h"

namespace nnbench::model {
namespace {

struct OpInfo {
  Op op;
  std::string_view name;
  std::vector<std::string_view> attributes;
};

const std::vector<OpInfo>& op_table() {
  static const std::vector<OpInfo> table = {
      {Op::kLinear, "linear", {"out", "bias"}},
      {Op::kConv2d,
       "conv2d",
       {"out", "kernel", "stride", "pad", "groups", "bias"}},
      {Op::kMaxPool2d, "max_pool2d", {"kernel", "stride", "pad", "ceil_mode"}},
      {Op::kAvgPool2d, "avg_pool2d", {"kernel", "stride", "pad", "ceil_mode"}},
      {Op::kGlobalAvgPool, "global_avg_pool", {}},
      {Op::kSeqMean, "seq_mean", {}},
      {Op::kRelu, "relu", {}},
      {Op::kSigmoid, "sigmoid", {}},
      {Op::kTanh, "tanh", {}},
      {Op::kSoftmax, "softmax", {}},
      {Op::kBatchNorm, "batch_norm", {"eps", "momentum"}},
      {Op::kLrn, "lrn", {"size", "alpha", "beta", "k"}},
      {Op::kDropout, "dropout", {"p"}},
      {Op::kFlatten, "flatten", {}},
      {Op::kAdd, "add", {}},
      {Op::kConcat, "concat", {}},
      {Op::kZeroPadShortcut, "zero_pad_shortcut", {"out", "stride"}},
      {Op::kEmbedding, "embedding", {"vocab", "out"}},
      {Op::kOneHot, "one_hot", {"vocab"}},
      {Op::kLstm,
       "lstm",
       {"out", "num_layers", "bidirectional", "sequences", "lstm_biases"}},
      {Op::kLayerNorm, "layer_norm", {"eps"}},
      {Op::kGelu, "gelu", {"approximate"}},
      {Op::kPositions, "positions", {"vocab"}},
      {Op::kAttention, "attention", {"heads", "causal", "bias"}},
      {Op::kTiedLinear, "tied_linear", {"tied"}},
      {Op::kSeqFirst, "seq_first", {}},
  };
  return table;
}

const OpInfo& info(Op op) {
  const auto& t = op_table();
  auto it = std::find_if(t.begin(), t.end(),
                         [op](const OpInfo& i) { return i.op == op; });
  return *it;
}

}  // namespace

std::string_view op_name(Op op) { return info(op).name; }

Op op_from_name(std::string_view name) {
  for (const auto& i : op_table())
    if (i.name == name) return i.op;
  std::string known;
  for (const auto& i : op_table()) known += " " + std::string(i.name);
  throw Error("unknown op '" + std::string(name) + "'; known ops:" + known);
}

const std::vector<Op>& all_ops() {
  static const std::vector<Op> ops = [] {
    std::vector<Op> v;
    for (const auto& i : op_table()) v.push_back(i.op);
    return v;
  }();
  return ops;
}

const std::vector<std::string_view>& op_attributes(Op op) {
  return info(op).attributes;
}

}  // namespace nnbench::model
