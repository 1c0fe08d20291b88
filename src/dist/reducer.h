#pragma once
// The gradient reducer of data-parallel training: after backward, every
// rank's gradients become their mean over the ranks (sum, then divide), so
// that with equal shards of one global batch the update equals the one a
// single process makes on the whole batch (the loss is a mean over the
// batch). Small gradients are packed into buckets of up to 25 MiB (PyTorch
// DDP's default bucket size), one all-reduce each, because an all-reduce
// per tensor pays the engine's latency tens of times per step.
#include <cstdint>
#include <vector>

#include "backend/backend.h"
#include "dist/group.h"

namespace nnbench::dist {

class MeanReducer : public backend::GradientReducer {
 public:
  explicit MeanReducer(Group& g, int64_t bucket_bytes = 25 << 20)
      : group_(g), bucket_floats_(bucket_bytes / 4) {}

  void reduce(const std::vector<backend::GradientBuffer>& buffers) override;

  // Of the last reduce(): seconds inside the engine's all-reduce calls, and
  // how many calls.
  double last_allreduce_seconds() const { return last_seconds_; }
  int last_calls() const { return last_calls_; }
  // Bytes all-reduced per step (fp32 gradients, padding included).
  int64_t bytes() const { return bytes_; }

 private:
  void allreduce(float* data, int64_t n);
  void flush();

  Group& group_;
  int64_t bucket_floats_;
  std::vector<float> bucket_;
  std::vector<backend::GradientBuffer> pending_;  // packed in bucket_
  double last_seconds_ = 0;
  int last_calls_ = 0;
  int64_t bytes_ = 0;
};

}  // namespace nnbench::dist
