#pragma once
// Trainable parameters of one graph. The fp32 master weights, gradients and
// optimizer state live in the layout the backward-weights primitive writes,
// inside flat buffers, so the update is one elementwise pass over the whole
// model (backend::HostOptimizer, PyTorch's rules) with no reorder; padding
// inside blocked layouts stays zero under every rule. Where the forward
// reads another layout or bf16, a per-parameter reorder refreshes that copy
// after each update. Graphs of other batch sizes exchange values through
// the canonical layout (save, load).
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "backend/backend.h"
#include "backend/optimizer.h"
#include "engines/onednn/net.h"
#include "model/model.h"
#include "util/huge_pages.h"

namespace nnbench::engines::onednn {

// A parameter between builds: canonical (PyTorch) layout, fp32.
struct ParamState {
  model::Shape shape;
  std::vector<float> value;
  std::vector<std::vector<float>> state;  // the optimizer's, zero at start
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
  // The weights another op added under `name`, for an op that reads the
  // same tensor (a tied output layer); they must be in layout `weights`.
  memory shared(const std::string& name, const Md& weights) const;
  // A gradient of parameter `name` computed by another op that reads it
  // (a tied output layer), which the op owning it adds to its own.
  void contribute(const std::string& name, const memory& grad);
  // The contributions to `name` (filled as the graph is built: read them
  // when running).
  const std::vector<memory>* contributions(const std::string& name) {
    return &contributions_[name];
  }
  // Allocates the flat buffers (with `state_arrays` optimizer state arrays)
  // and loads the values from the states.
  void finalize(dnnl::stream& s, int state_arrays);
  // One optimizer step over every parameter; the caller has called
  // rule.begin_step().
  void step(dnnl::stream& s, const backend::HostOptimizer& rule);
  // Writes values and optimizer state back to the states, or reads them.
  void save(dnnl::stream& s);
  void load(dnnl::stream& s);
  // The flat gradient buffer (padding included, zero there): what a
  // data-parallel step all-reduces, in one message.
  backend::GradientBuffer flat_grad();
  // The canonical value of parameter `name` (what an inference-only build
  // folds and quantizes once).
  const ParamState& state(const std::string& name) const;
  // Elements of the canonical tensors: the parameter count.
  int64_t count() const;
  // Where a generation build's matrix-vector loop keeps the s8 weights it
  // quantizes (ops_gemv.cpp): 2 MiB pages, shared, for as long as the store.
  util::HugeArena& int8_pages() { return int8_pages_; }
  std::map<std::string, host::Tensor> values(dnnl::stream& s);
  std::map<std::string, host::Tensor> grads(dnnl::stream& s);

 private:
  struct Slot {
    std::string name;
    Md canonical, master_md;
    size_t offset = 0;  // floats into the flat buffers
    memory master, grad, weights;
    std::vector<memory> state;
    dnnl::primitive sync;  // master -> weights, where they differ
  };
  void sync_all(dnnl::stream& s);
  void place_weights();
  std::map<std::string, host::Tensor> export_canonical(dnnl::stream& s,
                                                       memory Slot::*which);

  dnnl::engine eng_;
  ParamStates* states_;
  std::vector<Slot> slots_;
  std::map<std::string, std::vector<memory>> contributions_;
  size_t total_ = 0;
  // The master weights, and those in another type or layout, on 2 MiB
  // pages where the kernel gives them: a token's step streams every weight
  // from these (util/huge_pages.h). The weights' memory objects point into
  // them: they live as long as this store.
  util::HugeBuffer master_pages_, weight_pages_;
  util::HugeArena int8_pages_;
  memory flat_master_, flat_grad_;
  std::vector<memory> flat_state_;
};

}  // namespace nnbench::engines::onednn
