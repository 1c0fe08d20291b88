#pragma once
// The oneDNN executable: one graph per batch size of the run's shapes, all
// built in compile, whose steps only execute recorded primitives on one
// stream. Loading a batch of a size not compiled is an error, never a
// rebuild inside a timed region.
#include <memory>

#include "backend/backend.h"
#include "engines/onednn/net.h"
#include "model/model.h"

namespace nnbench::engines::onednn {

std::unique_ptr<backend::Executable> make_executable(
    const model::Model& m, const backend::Options& o, Dt dt,
    const backend::Shapes& shapes);

}  // namespace nnbench::engines::onednn
