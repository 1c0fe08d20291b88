#pragma once
// The oneDNN executable: a graph built for the loaded batch size, whose
// steps only execute recorded primitives on one stream.
#include <memory>

#include "backend/backend.h"
#include "backends/onednn/net.h"
#include "model/model.h"

namespace nnbench::backends::onednn {

// Builds once at batch 1 so that every primitive is validated (and the
// implementations reported) at compile; load_batches rebuilds for the
// batches' size.
std::unique_ptr<backend::Executable> make_executable(const model::Model& m,
                                                     const backend::Options& o,
                                                     Dt dt);

}  // namespace nnbench::backends::onednn
