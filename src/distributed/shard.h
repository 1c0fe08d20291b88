#pragma once
// Data parallelism splits each global batch into equal shards, one per
// rank, in rank order: rank r takes samples [r n / P, (r + 1) n / P).
#include "host/host.h"

namespace nnbench::distributed {

// Throws nnbench::Error when the batch does not split evenly (unequal
// shards would weight the ranks' mean gradients wrongly).
host::Batch shard(const host::Batch& global, int rank, int ranks);

}  // namespace nnbench::distributed
