#pragma once
// Small helper for writing zoo models: each call appends a layer and returns
// its index, so branches (residuals, Inception) read like the papers.
#include <string>
#include <vector>

#include "model/model.h"

namespace nnbench::model::zoo {

struct LstmOptions {
  int64_t num_layers = 1;
  bool bidirectional = false;
  bool sequences = true;  // false: last step only
  int64_t biases = kLstmBiasesKeras;
};

class Builder {
 public:
  explicit Builder(Model& m) : m_(m) {}

  // Index of the most recently added layer (-1 before any: the input).
  int last() const { return static_cast<int>(m_.layers.size()) - 1; }

  int add(Layer l, std::vector<int> inputs, const std::string& name = "");

  int linear(int x, int64_t out, const std::string& name = "");
  int conv(int x, int64_t out, int64_t k, int64_t stride = 1, int64_t pad = 0,
           const std::string& name = "");
  // Rectangular kernels (Inception-v3's 1x7 and 7x1).
  int conv_hw(int x, int64_t out, int64_t kh, int64_t kw, int64_t ph,
              int64_t pw, const std::string& name = "");
  int max_pool(int x, int64_t k, int64_t stride, int64_t pad = 0,
               bool ceil_mode = false);
  int avg_pool(int x, int64_t k, int64_t stride, int64_t pad = 0,
               bool ceil_mode = false);
  int global_avg_pool(int x);
  int batch_norm(int x, double eps = 1e-5);
  int relu(int x);
  int sigmoid(int x);
  int dropout(int x, double p);
  int flatten(int x);
  int add_(int a, int b);
  int concat(std::vector<int> xs);
  int lrn(int x, int64_t size, double alpha, double beta, double k = 1.0);
  // ResNet option A shortcut: parameter-free, so it takes no conv settings.
  int zero_pad_shortcut(int x, int64_t out, int64_t stride);
  int embedding(int x, int64_t vocab, int64_t dim,
                const std::string& name = "");
  int one_hot(int x, int64_t vocab);
  int seq_mean(int x);
  int lstm(int x, int64_t hidden, LstmOptions o = {},
           const std::string& name = "");
  // Transformers.
  int layer_norm(int x, double eps = 1e-5, const std::string& name = "");
  int gelu(int x, bool approximate = false);
  int positions(int x, int64_t max_positions, const std::string& name = "");
  // The next attention has biases unless no_bias() was called.
  int attention(int x, int64_t heads, bool causal,
                const std::string& name = "");
  int tied_linear(int x, int embedding, const std::string& name = "");
  int seq_first(int x);

  // The next conv / linear gets these settings, then they reset.
  Builder& no_bias() {
    bias_ = false;
    return *this;
  }
  Builder& groups(int64_t g) {
    groups_ = g;
    return *this;
  }

 private:
  std::string auto_name(Op op);
  Model& m_;
  bool bias_ = true;
  int64_t groups_ = 1;
  int counter_ = 0;
};

}  // namespace nnbench::model::zoo
