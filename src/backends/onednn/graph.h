#pragma once
// Builds the executable graph of a model for one batch size (forward for
// training and inference, backward, optimizer state): which values
// need gradients, which ReLUs fuse into the conv or linear before them, and
// one op builder per layer.
#include <cstdint>
#include <memory>

#include "backends/onednn/loss.h"
#include "backends/onednn/net.h"
#include "backends/onednn/ops.h"
#include "backends/onednn/param_store.h"
#include "model/model.h"

namespace nnbench::backends::onednn {

struct Graph {
  std::unique_ptr<Net> net;
  std::unique_ptr<ParamStore> params;
  std::unique_ptr<LossHead> loss;
};

// Throws backend::Unimplemented naming the first layer this backend cannot
// run, before anything is built.
void check_supported(const model::Model& m);

Graph build_graph(const model::Model& m, int64_t batch, Dt dt,
                  const dnnl::engine& eng, ParamStates* params, RunState* state,
                  int state_arrays);

// A layout in oneDNN's notation (e.g. OIhw16i16o) from the descriptor;
// `names` are the logical dims' letters.
std::string layout_name(const Md& md, const std::string& names);

}  // namespace nnbench::backends::onednn
