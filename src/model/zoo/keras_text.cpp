// Keras 2 text examples used in the CPU-versus-GPU study.
#include <string>

#include "model/zoo/builder.h"
#include "model/zoo/models.h"

namespace nnbench::model::zoo {
namespace {

Model keras_text_model(const std::string& name, const std::string& file,
                       int64_t seq_len, int64_t vocab, Loss loss) {
  Model m;
  m.name = name;
  m.study = kStudyCpuVsGpu;
  m.source = "keras-team/keras 2.x examples/" + file;
  m.input = {{seq_len}, DType::kInt64, vocab};
  m.loss = loss;
  return m;
}

}  // namespace

Model imdb_fasttext() {
  Model m = keras_text_model("imdb-fasttext", "imdb_fasttext.py", 400, 20000,
                             Loss::kSigmoidBinaryCrossEntropy);
  m.notes =
      "ngram_range=1 (the script's default): max_features 20000, maxlen "
      "400, embedding 50, GlobalAveragePooling1D, Dense(1) whose sigmoid "
      "is folded into the loss. With ngram_range=2 the vocabulary grows to "
      "the bigrams found in the data. model.summary(): 1,000,051 params.";
  Builder b(m);
  const int x = b.seq_mean(b.embedding(-1, 20000, 50));
  b.linear(x, 1, "dense_1");
  return m;
}

Model imdb_bilstm() {
  Model m = keras_text_model("imdb-bilstm", "imdb_bidirectional_lstm.py", 100,
                             20000, Loss::kSigmoidBinaryCrossEntropy);
  m.notes =
      "max_features 20000, maxlen 100, embedding 128, Bidirectional(LSTM(64)) "
      "returning the last step of each direction (128 wide), dropout 0.5, "
      "Dense(1) whose sigmoid is folded into the loss. LSTM with one bias "
      "per gate (Keras); cuDNN/PyTorch's two biases would add 512 "
      "parameters. model.summary(): 2,658,945 params.";
  Builder b(m);
  int x = b.embedding(-1, 20000, 128);
  x = b.lstm(x, 64, {.bidirectional = true, .sequences = false}, "lstm");
  x = b.dropout(x, 0.5);
  b.linear(x, 1, "dense_1");
  return m;
}

Model lstm_text_gen() {
  // The script lower-cases nietzsche.txt and reports "total chars: 57".
  constexpr int64_t kChars = 57;
  Model m = keras_text_model("lstm-text-gen", "lstm_text_generation.py", 40,
                             kChars, Loss::kSoftmaxCrossEntropy);
  m.notes =
      "Windows of 40 characters of Nietzsche's writings, predicting the "
      "next. Assumes 57 distinct characters, what the script reports for "
      "the lower-cased nietzsche.txt it downloads; another corpus changes "
      "the vocabulary and the counts. The script feeds one-hot boolean "
      "arrays; here int64 ids go through one_hot. LSTM(128), last step, "
      "one bias per gate (Keras); Dense(57) whose softmax is folded into "
      "the loss. model.summary(): 102,585 params.";
  Builder b(m);
  int x = b.one_hot(-1, kChars);
  x = b.lstm(x, 128, {.sequences = false}, "lstm");
  b.linear(x, kChars, "dense_1");
  return m;
}

}  // namespace nnbench::model::zoo
