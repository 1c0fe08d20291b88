#include "model/params.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "model/analysis.h"

namespace nnbench::model {
namespace {

void add(std::vector<ParamSpec>& out, const std::string& name, int layer,
         Shape shape, Init init, int64_t fan_in) {
  out.push_back({name, layer, std::move(shape), init, fan_in});
}

void lstm_specs(std::vector<ParamSpec>& out, const Layer& l, int i,
                int64_t width) {
  const int64_t h = l.out, dirs = l.bidirectional ? 2 : 1;
  for (int64_t k = 0; k < l.num_layers; ++k) {
    for (int64_t d = 0; d < dirs; ++d) {
      const std::string p =
          l.name + ".l" + std::to_string(k) + (d ? "_reverse" : "") + ".";
      // PyTorch initialises every LSTM tensor with U(-1/sqrt(H), 1/sqrt(H)).
      add(out, p + "w_ih", i, {4 * h, width}, Init::kUniformFanIn, h);
      add(out, p + "w_hh", i, {4 * h, h}, Init::kUniformFanIn, h);
      add(out, p + "b_ih", i, {4 * h}, Init::kUniformFanIn, h);
      if (l.lstm_biases == 2)
        add(out, p + "b_hh", i, {4 * h}, Init::kUniformFanIn, h);
    }
    width = dirs * h;
  }
}

void layer_specs(std::vector<ParamSpec>& out, const Layer& l, int i,
                 const Shape& in) {
  switch (l.op) {
    case Op::kLinear:
      add(out, l.name + ".weight", i, {l.out, in.back()}, Init::kUniformFanIn,
          in.back());
      if (l.bias)
        add(out, l.name + ".bias", i, {l.out}, Init::kUniformFanIn, in.back());
      return;
    case Op::kConv2d: {
      const int64_t fan_in = in[0] / l.groups * l.kernel[0] * l.kernel[1];
      add(out, l.name + ".weight", i,
          {l.out, in[0] / l.groups, l.kernel[0], l.kernel[1]},
          Init::kUniformFanIn, fan_in);
      if (l.bias)
        add(out, l.name + ".bias", i, {l.out}, Init::kUniformFanIn, fan_in);
      return;
    }
    case Op::kBatchNorm:
      add(out, l.name + ".weight", i, {in[0]}, Init::kOnes, 1);
      add(out, l.name + ".bias", i, {in[0]}, Init::kZeros, 1);
      return;
    case Op::kEmbedding:
      add(out, l.name + ".weight", i, {l.vocab, l.out}, Init::kNormal, 1);
      return;
    case Op::kLstm:
      lstm_specs(out, l, i, in[1]);
      return;
    case Op::kLayerNorm:
      add(out, l.name + ".weight", i, {in.back()}, Init::kOnes, 1);
      add(out, l.name + ".bias", i, {in.back()}, Init::kZeros, 1);
      return;
    case Op::kPositions:
      add(out, l.name + ".weight", i, {l.vocab, in[1]}, Init::kNormal, 1);
      return;
    case Op::kAttention: {
      // q, k and v in one [3F, F] projection (rows: q, then k, then v),
      // as GPT-2's c_attn; heads are consecutive column blocks of F/heads.
      const int64_t f = in[1];
      add(out, l.name + ".in_weight", i, {3 * f, f}, Init::kUniformFanIn, f);
      if (l.bias)
        add(out, l.name + ".in_bias", i, {3 * f}, Init::kUniformFanIn, f);
      add(out, l.name + ".out_weight", i, {f, f}, Init::kUniformFanIn, f);
      if (l.bias)
        add(out, l.name + ".out_bias", i, {f}, Init::kUniformFanIn, f);
      return;
    }
    default:
      return;
  }
}

// FNV-1a: unlike std::hash, the same on every compiler and library.
uint64_t fnv1a(const std::string& s) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

void fill(const ParamSpec& s, uint64_t seed, std::vector<float>& v) {
  // Seeded per parameter by name: adding a layer elsewhere does not change
  // the values of the others.
  std::seed_seq seq{seed, fnv1a(s.name)};
  std::mt19937_64 rng(seq);
  const float bound = 1.0f / std::sqrt(static_cast<float>(s.fan_in));
  std::uniform_real_distribution<float> uniform(-bound, bound);
  std::normal_distribution<float> normal(0.f, 1.f);
  for (auto& x : v) {
    switch (s.init) {
      case Init::kUniformFanIn:
        x = uniform(rng);
        break;
      case Init::kNormal:
        x = normal(rng);
        break;
      case Init::kNormalSmall:
        x = 0.02f * normal(rng);
        break;
      case Init::kOnes:
        x = 1.f;
        break;
      case Init::kZeros:
        x = 0.f;
        break;
    }
  }
}

}  // namespace

std::vector<ParamSpec> param_specs(const Model& m) {
  const auto shapes = infer_shapes(m);
  std::vector<ParamSpec> out;
  for (int i = 0; i < static_cast<int>(m.layers.size()); ++i) {
    const int first = layer_inputs(m, i)[0];
    layer_specs(out, m.layers[i], i, first < 0 ? m.input.shape : shapes[first]);
  }
  // A transformer's tables start as GPT-2's and BERT's do (N(0, 0.02)):
  // at N(0, 1) GPT-2's tied head gave logits of standard deviation about
  // 28, every greedy choice decided by the input token's own row.
  const bool transformer =
      std::any_of(m.layers.begin(), m.layers.end(),
                  [](const Layer& l) { return l.op == Op::kAttention; });
  for (ParamSpec& p : out) {
    const Op op = m.layers[p.layer].op;
    if (transformer && (op == Op::kEmbedding || op == Op::kPositions))
      p.init = Init::kNormalSmall;
  }
  return out;
}

std::vector<ParamValue> init_params(const Model& m, uint64_t seed) {
  std::vector<ParamValue> out;
  for (auto& s : param_specs(m)) {
    ParamValue p{s, std::vector<float>(numel(s.shape))};
    fill(p.spec, seed, p.data);
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace nnbench::model
