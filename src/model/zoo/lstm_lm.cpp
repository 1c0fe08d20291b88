// DLBench's LSTM language model on Penn Treebank.
#include <string>

#include "model/zoo/builder.h"
#include "model/zoo/models.h"

namespace nnbench::model::zoo {

Model lstm_ptb(int64_t seq_len) {
  constexpr int64_t kVocab = 10000, kHidden = 256;
  Model m;
  m.name = seq_len == 32 ? "lstm-ptb" : "lstm-ptb-" + std::to_string(seq_len);
  m.study = kStudyDlbench;
  m.source =
      "DLBench arXiv:1608.07249 (LSTM on PTB), structure of TensorFlow "
      "models tutorials/rnn/ptb/ptb_word_lm.py";
  m.notes =
      "Word-level language model: vocab 10000, embedding 256, two stacked "
      "LSTM layers of 256 returning every step, a linear 10000 on every "
      "step; softmax cross-entropy over all steps, labels [T] (the next "
      "word). Sequence length " +
      std::to_string(seq_len) +
      ". One bias per gate (TensorFlow BasicLSTMCell); cuDNN/PyTorch's two "
      "biases would add 2048 parameters. No dropout.";
  m.input = {{seq_len}, DType::kInt64, kVocab};
  Builder b(m);
  int x = b.embedding(-1, kVocab, kHidden);
  x = b.lstm(x, kHidden, {.num_layers = 2}, "lstm");
  b.linear(x, kVocab, "softmax_w");
  m.loss = Loss::kSoftmaxCrossEntropy;
  return m;
}

}  // namespace nnbench::model::zoo
