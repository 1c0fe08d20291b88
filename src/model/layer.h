#pragma once
// A layer of a model description: plain data, no behaviour. Each op reads
// only the attributes listed for it in layer.cpp (kOpInfo); the model file
// reader rejects any other attribute so typos do not pass silently.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nnbench::model {

enum class Op {
  kLinear,         // last dim -> out
  kConv2d,         // [C,H,W] -> [out,H',W']
  kMaxPool2d,      // [C,H,W]
  kAvgPool2d,      // [C,H,W], padding counted in the divisor (Caffe, torch)
  kGlobalAvgPool,  // [C,H,W] -> [C]
  kSeqMean,  // [T,F] -> [F]: mean over time (Keras GlobalAveragePooling1D)
  kRelu,
  kSigmoid,
  kTanh,
  kSoftmax,  // over the last dim
  kBatchNorm,
  kLrn,  // local response normalisation across channels (Caffe AlexNet)
  kDropout,
  kFlatten,
  kAdd,              // residual add of two inputs with equal shapes
  kConcat,           // along the channel (first per-sample) dim
  kZeroPadShortcut,  // ResNet option A: subsample by stride, zero-pad channels
  kEmbedding,        // token ids [T] -> [T,out]
  kOneHot,           // token ids [T] -> [T,vocab] floats
  kLstm,             // [T,F] -> [T,dirs*out] or [dirs*out]
  // Transformers (docs/models.md):
  kLayerNorm,   // over the last dim, with a scale and a shift
  kGelu,        // x * Phi(x); `approximate`: GPT-2's tanh form
  kPositions,   // [T,F] + a learned [vocab,F] table's first T rows
  kAttention,   // [T,F] -> [T,F]: multi-head self-attention, projections
                // in (q, k, v: one [3F,F]) and out ([F,F]); `causal` masks
                // each position's view of later ones
  kTiedLinear,  // last dim -> the embedding layer `tied`'s vocab, its
                // table as the weight (GPT-2's tied output), no bias
  kSeqFirst,    // [T,F] -> [F]: the first position (BERT's [CLS])
};

// How many bias vectors an LSTM gate carries: Keras and TensorFlow use one,
// cuDNN and PyTorch two. Both compute the same function; counts differ.
inline constexpr int kLstmBiasesKeras = 1;

struct Layer {
  std::string name;
  Op op = Op::kRelu;
  // Indices of earlier layers; -1 is the model input. Empty means "the
  // previous layer" (or the model input for the first layer).
  std::vector<int> inputs;

  int64_t out = 0;  // linear units, conv channels, embedding dim, lstm hidden
  std::array<int64_t, 2> kernel{1, 1};
  std::array<int64_t, 2> stride{1, 1};
  std::array<int64_t, 2> pad{0, 0};
  int64_t groups = 1;
  bool bias = true;
  bool ceil_mode = false;
  int64_t num_layers = 1;  // lstm
  bool bidirectional = false;
  bool sequences = true;  // lstm: full sequence, or last step only
  int64_t lstm_biases = kLstmBiasesKeras;
  int64_t vocab = 0;  // embedding, one_hot
  double p = 0.0;     // dropout probability
  double eps = 1e-5;  // batch norm
  double momentum = 0.1;
  int64_t size = 5;  // lrn window
  double alpha = 1e-4, beta = 0.75, k = 1.0;
  int64_t heads = 1;         // attention
  bool causal = false;       // attention
  bool approximate = false;  // gelu: the tanh approximation
  int64_t tied = -1;         // tied_linear: the embedding layer's index
};

std::string_view op_name(Op op);
// Throws nnbench::Error naming the unknown op.
Op op_from_name(std::string_view name);
const std::vector<Op>& all_ops();
// Attribute names an op reads; used by the model file reader and writer.
const std::vector<std::string_view>& op_attributes(Op op);

}  // namespace nnbench::model
