#pragma once
// Builds the executable graph of a model for one batch size (forward for
// training and inference, backward, optimizer state): which values
// need gradients, which ReLUs (and, inference-only, GELUs) fuse into the
// conv or linear before them, and
// one op builder per layer.
#include <cstdint>
#include <memory>

#include "engines/onednn/loss.h"
#include "engines/onednn/net.h"
#include "engines/onednn/ops.h"
#include "engines/onednn/param_store.h"
#include "model/model.h"

namespace nnbench::engines::onednn {

struct Graph {
  std::unique_ptr<Net> net;
  std::unique_ptr<ParamStore> params;
  std::unique_ptr<LossHead> loss;
  int folded_norms = 0;  // batch norms folded into the layer before
  int fused_adds = 0;    // adds fused into the conv or linear before
  int fused_gelus = 0;   // GELUs fused into the linear before
  int int8_values = 0;   // written as int8 (only quantized layers read)
};

// Throws backend::Unimplemented naming the first layer this backend cannot
// run, before anything is built.
void check_supported(const model::Model& m);

// `infer`: an inference-only build (no train_step), which folds batch
// norms into the layer before them and may quantize; null for one that
// trains.
Graph build_graph(const model::Model& m, int64_t batch, Dt dt,
                  const dnnl::engine& eng, ParamStates* params, RunState* state,
                  int state_arrays, const InferPlan* infer = nullptr);

// int8: the range of every value a quantized layer reads (the inputs of
// conv, linear, attention and tied output layers, and of adds), over the
// calibration samples in `file` (a tensor file, "input" [N, ...]), from an fp32
// inference-only build of the same plan run over them in chunks; `inner`: the
// ranges of buffers inside layers that int8 builds quantize (InferPlan::inner).
std::map<int, Range> calibrate(const model::Model& m, const std::string& file,
                               const dnnl::engine& eng, ParamStates* params,
                               RunState* state, int64_t* samples,
                               std::map<std::string, Range>* inner);

// A layout in oneDNN's notation (e.g. OIhw16i16o) from the descriptor;
// `names` are the logical dims' letters.
std::string layout_name(const Md& md, const std::string& names);

}  // namespace nnbench::engines::onednn
