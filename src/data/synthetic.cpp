#include "data/synthetic.h"

#include <random>

#include "model/analysis.h"

namespace nnbench::data {
namespace {

std::vector<int64_t> with_batch(int64_t batch, const model::Shape& s) {
  std::vector<int64_t> out{batch};
  out.insert(out.end(), s.begin(), s.end());
  return out;
}

// Label shape per sample: the output's shape minus the class dim (CE), or
// the output's shape itself (BCE).
model::Shape label_shape(const model::Model& m, const model::Shape& out) {
  if (m.loss == model::Loss::kSigmoidBinaryCrossEntropy) return out;
  return model::Shape(out.begin(), out.end() - 1);
}

}  // namespace

host::Batch synthetic_batch(const model::Model& m, int64_t batch,
                            uint64_t seed) {
  std::mt19937_64 rng(seed);
  host::Batch b;
  b.input.shape = with_batch(batch, m.input.shape);
  b.input.dtype = m.input.dtype;
  const int64_t n_in = model::numel(b.input.shape);
  if (m.input.dtype == model::DType::kFloat32) {
    std::normal_distribution<float> normal(0.f, 1.f);
    b.input.f.resize(n_in);
    for (auto& v : b.input.f) v = normal(rng);
  } else {
    std::uniform_int_distribution<int64_t> token(0, m.input.vocab - 1);
    b.input.i.resize(n_in);
    for (auto& v : b.input.i) v = token(rng);
  }
  const model::Shape out = model::infer_shapes(m).back();
  const int64_t classes =
      m.loss == model::Loss::kSoftmaxCrossEntropy ? out.back() : 2;
  b.labels.shape = with_batch(batch, label_shape(m, out));
  b.labels.dtype = model::DType::kInt64;
  std::uniform_int_distribution<int64_t> label(0, classes - 1);
  b.labels.i.resize(model::numel(b.labels.shape));
  for (auto& v : b.labels.i) v = label(rng);
  return b;
}

double batch_bytes(const model::Model& m, int64_t batch) {
  const double elem = m.input.dtype == model::DType::kFloat32 ? 4.0 : 8.0;
  return elem * static_cast<double>(batch) *
         static_cast<double>(model::numel(m.input.shape));
}

std::vector<std::vector<int64_t>> synthetic_prompts(int64_t batch,
                                                    int64_t prompt,
                                                    int64_t vocab,
                                                    uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> id(0, vocab - 1);
  std::vector<std::vector<int64_t>> out(batch);
  for (auto& row : out)
    for (int64_t i = 0; i < prompt; ++i) row.push_back(id(rng));
  return out;
}

}  // namespace nnbench::data
