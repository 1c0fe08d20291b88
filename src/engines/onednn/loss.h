#pragma once
// The loss on the final logits, computed on the host in plain fp32: the
// logits are small ([N,K]), and both precisions then report an fp32 loss.
#include <vector>

#include "backend/backend.h"
#include "engines/onednn/net.h"
#include "model/model.h"

namespace nnbench::engines::onednn {

class LossHead {
 public:
  // Call after the net is finalized: it binds the last value's gradient.
  LossHead(Net& net, int last, model::Loss loss);
  // Copies the logits out of the net (plain fp32).
  void read_logits();
  // Mean loss over the batch; writes dLoss/dlogits into the net.
  double loss_and_grad(const host::Tensor& labels);
  host::Tensor output() const;

 private:
  double cross_entropy(const std::vector<int64_t>& labels);
  double binary_cross_entropy(const host::Tensor& labels);

  Net& net_;
  model::Loss loss_;
  Dims dims_;
  std::vector<float> logits_, grad_;  // unless the net's memory is plain
  memory logits_mem_, grad_mem_, value_, diff_;
  dnnl::reorder to_host_, to_net_;
};

}  // namespace nnbench::engines::onednn
