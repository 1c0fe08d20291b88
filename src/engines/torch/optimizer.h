#pragma once
// The optimizers of backend::Options on LibTorch: torch::optim where it has
// them (SGD, Adam, RMSprop), and Adadelta, which LibTorch 1.13's C++ API
// lacks, written with the update rule of torch.optim.Adadelta.
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"

namespace nnbench::engines::torch_backend {

class Adadelta : public torch::optim::Optimizer {
 public:
  Adadelta(std::vector<torch::Tensor> params, double lr, double rho, double eps,
           double weight_decay);
  torch::Tensor step(LossClosure closure = nullptr) override;
  void save(torch::serialize::OutputArchive&) const override {}
  void load(torch::serialize::InputArchive&) override {}

 private:
  double rho_, eps_, weight_decay_;
  std::vector<torch::Tensor> square_avg_, acc_delta_;
};

std::unique_ptr<torch::optim::Optimizer> make_optimizer(
    std::vector<torch::Tensor> params, const backend::Options& o);

}  // namespace nnbench::engines::torch_backend
