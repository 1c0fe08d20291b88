#pragma once
// Trainable parameters of one build. The fp32 master weights, gradients and
// momentum buffers live in the layout the backward-weights primitive writes,
// inside three flat buffers, so the SGD update is two sum primitives over the
// whole model and needs no reorder. Where the forward reads another layout
// or bf16, a per-parameter reorder refreshes that copy after each update.
// Values persist across builds (batch sizes) in the canonical layout.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "backend/backend.h"
#include "backends/onednn/net.h"
#include "model/model.h"

namespace nnbench::backends::onednn {

// A parameter between builds: canonical (PyTorch) layout, fp32.
struct ParamState {
  model::Shape shape;
  std::vector<float> value, momentum;
};
using ParamStates = std::map<std::string, ParamState>;

class ParamStore {
 public:
  // What an op binds: the weights its forward reads, the gradient its
  // backward-weights primitive writes.
  struct Ref {
    memory weights, grad;
  };

  ParamStore(dnnl::engine eng, ParamStates* states)
      : eng_(std::move(eng)), states_(states) {}

  // canonical: plain fp32 view of the canonical tensor (e.g. goihw for
  // grouped convs); weights, grad: what the primitives want.
  Ref add(const std::string& name, const Md& canonical, const Md& weights,
          const Md& grad);
  // Allocates the flat buffers and loads the values from the states.
  void finalize(dnnl::stream& s);
  // SGD with momentum as torch.optim.SGD (buffer starts at zero, so the
  // first step sets it to the gradient).
  void step(dnnl::stream& s, float lr, float momentum);
  // Writes values and momentum back to the states.
  void save(dnnl::stream& s);
  std::map<std::string, backend::Tensor> values(dnnl::stream& s);
  std::map<std::string, backend::Tensor> grads(dnnl::stream& s);

 private:
  struct Slot {
    std::string name;
    Md canonical, master_md;
    size_t offset = 0;  // floats into the flat buffers
    memory master, grad, momentum, weights;
    dnnl::primitive sync;  // master -> weights, where they differ
  };
  void sync_all(dnnl::stream& s);
  std::map<std::string, backend::Tensor> export_canonical(dnnl::stream& s,
                                                          memory Slot::*which);

  dnnl::engine eng_;
  ParamStates* states_;
  std::vector<Slot> slots_;
  size_t total_ = 0;
  memory flat_master_, flat_grad_, flat_momentum_;
  dnnl::primitive momentum_update_, weight_update_;
  Args momentum_args_, weight_args_;
  std::pair<float, float> scales_{0.f, 0.f};  // lr, momentum of the sums
};

}  // namespace nnbench::backends::onednn
