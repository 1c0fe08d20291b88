// `--data synthetic`: the real data sets' shapes, sizes and label counts
// filled with seeded random values, for timing fixed-epoch training where
// the data are absent (a step's time does not depend on the pixel values).
// The sizes are the real sets' (each loader's file formats and the Keras
// examples' printouts), so an epoch is as many steps as with real data.
#include <random>

#include "data/dataset.h"

namespace nnbench::data {
namespace {

struct Shape {
  int64_t train, test;  // samples
  model::InputSpec input;
  int64_t classes;
  model::Shape label_shape;
  int64_t valid = 0;  // ptb only
};

// Token windows as the loaders cut them: text every 3 characters, ptb
// non-overlapping with a label per position.
int64_t text_windows(int64_t chars, int64_t seq_len) {
  return chars > seq_len ? (chars - seq_len - 1) / 3 + 1 : 0;
}

Shape shape_of(const std::string& name, const DatasetOptions& o) {
  if (name == "mnist" || name == "fashion-mnist")
    return {60000, 10000, {{1, 28, 28}}, 10, {}};
  if (name == "cifar10") return {50000, 10000, {{3, 32, 32}}, 10, {}};
  if (name == "imdb") {
    const int64_t len = o.seq_len > 0 ? o.seq_len : 400;
    const int64_t vocab = o.vocab > 0 ? o.vocab : 20000;
    return {25000, 25000, {{len}, model::DType::kInt64, vocab}, 2, {}};
  }
  if (name == "text") {
    // nietzsche.txt, as lstm_text_generation.py reports it: "corpus
    // length: 600893", "total chars: 57"; no test split.
    const int64_t len = o.seq_len > 0 ? o.seq_len : 40;
    const int64_t vocab = o.vocab > 0 ? o.vocab : 57;
    return {text_windows(600893, len),
            0,
            {{len}, model::DType::kInt64, vocab},
            vocab,
            {}};
  }
  // ptb: TensorFlow's reader on the Mikolov files, 10,000 words.
  const int64_t len = o.seq_len > 0 ? o.seq_len : 32;
  const int64_t vocab = o.vocab > 0 ? o.vocab : 10000;
  return {(929589 - 1) / len,
          (82430 - 1) / len,
          {{len}, model::DType::kInt64, vocab},
          vocab,
          {len},
          (73760 - 1) / len};
}

Split fill(const Shape& s, int64_t size, std::mt19937_64& rng) {
  Split out;
  out.input = s.input;
  out.label_shape = s.label_shape;
  out.classes = s.classes;
  out.size = size;
  int64_t per = 1, labels = 1;
  for (int64_t d : s.input.shape) per *= d;
  for (int64_t d : s.label_shape) labels *= d;
  if (s.input.dtype == model::DType::kInt64) {
    // Ids from 1: 0 is padding in the Keras encodings.
    std::uniform_int_distribution<int64_t> id(s.input.vocab > 1 ? 1 : 0,
                                              s.input.vocab - 1);
    out.i.resize(static_cast<size_t>(size * per));
    for (auto& v : out.i) v = id(rng);
  } else {
    std::normal_distribution<float> normal(0.f, 1.f);
    out.f.resize(static_cast<size_t>(size * per));
    for (auto& v : out.f) v = normal(rng);
    // What the real loaders standardise with: N(0, 1) data need none.
    out.channel_mean.assign(static_cast<size_t>(s.input.shape[0]), 0.f);
    out.channel_std.assign(static_cast<size_t>(s.input.shape[0]), 1.f);
  }
  std::uniform_int_distribution<int64_t> label(0, s.classes - 1);
  out.labels.resize(static_cast<size_t>(size * labels));
  for (auto& v : out.labels) v = label(rng);
  return out;
}

}  // namespace

Dataset synthetic_dataset(const std::string& name, const DatasetOptions& o) {
  dataset_path(name, "synthetic");  // an unknown name is an error naming it
  const Shape s = shape_of(name, o);
  // One seed per data set: the same bytes on every machine and every run.
  std::mt19937_64 rng(std::hash<std::string>{}(name) ^ 0x5eedda7aULL);
  Dataset d;
  d.name = name;
  d.synthetic = true;
  d.source = "synthetic";
  d.train = fill(s, s.train, rng);
  d.test = fill(s, s.test, rng);
  if (s.valid > 0) d.valid = fill(s, s.valid, rng);
  d.normalisation = s.input.dtype == model::DType::kInt64
                        ? "seeded uniform token ids in [1, " +
                              std::to_string(s.input.vocab) + ")"
                        : "seeded N(0, 1) values";
  d.normalisation += ", uniform labels; the real set's shapes and sizes";
  d.integrity = "none: synthetic data (accuracy is not measured)";
  return d;
}

}  // namespace nnbench::data
