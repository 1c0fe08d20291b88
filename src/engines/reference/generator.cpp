#include "engines/reference/generator.h"

#include <omp.h>

#include <algorithm>

#include "engines/reference/network.h"

namespace nnbench::engines::reference {
namespace {

class ReferenceGenerator : public backend::Generator {
 public:
  ReferenceGenerator(const model::Model& m, const backend::Options& o)
      : net_(m, o.seed, o.weights) {}

  std::vector<int64_t> prefill(
      const std::vector<std::vector<int64_t>>& prompts) override {
    last_.clear();
    rows_ = prompts;
    return next();
  }

  std::vector<int64_t> decode(const std::vector<int64_t>& tokens) override {
    last_.clear();
    for (size_t i = 0; i < rows_.size(); ++i) rows_[i].push_back(tokens.at(i));
    return next();
  }

  std::optional<std::vector<float>> last_logits() override {
    if (last_.empty()) return std::nullopt;  // before a call, or a failed one
    return last_;
  }

  backend::Effective effective() const override {
    return {omp_get_max_threads(),
            "cpu",
            "fp32",
            "",
            {{"kv_cache", "none (the whole sequence again for each token)"}}};
  }

 private:
  // Each row's argmax (the first of equal ones, as torch.argmax) at its
  // last position.
  std::vector<int64_t> next() {
    const int64_t n = static_cast<int64_t>(rows_.size());
    const int64_t t = n ? static_cast<int64_t>(rows_[0].size()) : 0;
    net_.set_sequence_length(t);
    batch_.ids.shape = {n, t};
    batch_.ids.data.clear();
    for (const auto& r : rows_)
      batch_.ids.data.insert(batch_.ids.data.end(), r.begin(), r.end());
    const Tensor<float>& y = net_.forward(batch_, /*train=*/false);
    const int64_t vocab = y.dim(2);
    std::vector<int64_t> out;
    for (int64_t i = 0; i < n; ++i) {
      const float* row = y.ptr() + (i * t + t - 1) * vocab;
      out.push_back(std::max_element(row, row + vocab) - row);
      last_.insert(last_.end(), row, row + vocab);
    }
    return out;
  }

  Network<float> net_;
  std::vector<std::vector<int64_t>> rows_;
  Batch<float> batch_;
  std::vector<float> last_;
};

}  // namespace

std::unique_ptr<backend::Generator> make_generator(
    const model::Model& m, const backend::Options& o,
    const backend::GenerationShape& shape) {
  backend::check_generates(m, shape);
  return std::make_unique<ReferenceGenerator>(m, o);
}

}  // namespace nnbench::engines::reference
