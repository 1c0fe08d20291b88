#include "engines/torch/optimizer.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "backend/optimizer.h"

namespace nnbench::engines::torch_backend {

Adadelta::Adadelta(std::vector<torch::Tensor> params, double lr, double rho,
                   double eps, double weight_decay)
    : torch::optim::Optimizer({torch::optim::OptimizerParamGroup(params)},
                              std::make_unique<torch::optim::SGDOptions>(lr)),
      rho_(rho),
      eps_(eps),
      weight_decay_(weight_decay) {
  for (const auto& p : params) {
    square_avg_.push_back(torch::zeros_like(p));
    acc_delta_.push_back(torch::zeros_like(p));
  }
}

torch::Tensor Adadelta::step(LossClosure closure) {
  torch::NoGradGuard no_grad;
  const double lr = param_groups()[0].options().get_lr();
  auto& params = param_groups()[0].params();
  for (size_t i = 0; i < params.size(); ++i) {
    auto& p = params[i];
    if (!p.grad().defined()) continue;
    auto g = p.grad();
    if (weight_decay_ != 0) g = g.add(p, weight_decay_);
    // torch.optim.Adadelta: E[g^2], then the update scaled by the ratio of
    // RMS[delta] to RMS[g], then E[delta^2].
    square_avg_[i].mul_(rho_).addcmul_(g, g, 1 - rho_);
    auto delta = acc_delta_[i]
                     .add(eps_)
                     .sqrt_()
                     .div_(square_avg_[i].add(eps_).sqrt_())
                     .mul_(g);
    acc_delta_[i].mul_(rho_).addcmul_(delta, delta, 1 - rho_);
    p.add_(delta, -lr);
  }
  return {};
}

std::unique_ptr<torch::optim::Optimizer> make_optimizer(
    std::vector<torch::Tensor> params, const backend::Options& o) {
  namespace optim = torch::optim;
  if (o.optimizer == "sgd")
    return std::make_unique<optim::SGD>(params,
                                        optim::SGDOptions(o.learning_rate)
                                            .momentum(o.momentum)
                                            .nesterov(o.nesterov)
                                            .weight_decay(o.weight_decay));
  if (o.optimizer == "adam")
    return std::make_unique<optim::Adam>(params,
                                         optim::AdamOptions(o.learning_rate)
                                             .betas({o.beta1, o.beta2})
                                             .eps(o.eps)
                                             .weight_decay(o.weight_decay));
  if (o.optimizer == "rmsprop")
    return std::make_unique<optim::RMSprop>(
        params, optim::RMSpropOptions(o.learning_rate)
                    .alpha(o.alpha)
                    .eps(o.eps)
                    .momentum(o.momentum)
                    .weight_decay(o.weight_decay));
  if (o.optimizer == "adadelta")
    return std::make_unique<Adadelta>(params, o.learning_rate, o.rho, o.eps,
                                      o.weight_decay);
  throw backend::Unimplemented(
      fmt::format("optimizer '{}' (known: {})", o.optimizer,
                  fmt::join(backend::known_optimizers(), " ")));
}

}  // namespace nnbench::engines::torch_backend
