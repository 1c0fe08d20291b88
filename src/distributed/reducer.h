#pragma once
// The gradient reducer of data-parallel training: after backward, every
// rank's gradients become their mean over the ranks (sum, then divide), so
// that with equal shards of one global batch the update equals the one a
// single process makes on the whole batch (the loss is a mean over the
// batch). Small gradients are packed into buckets of up to 25 MiB (PyTorch
// DDP's default bucket size), one all-reduce each, because an all-reduce
// per tensor pays the engine's latency tens of times per step.
//
// With overlap (asked for, and a backend that reports gradients during
// backward), buckets are fixed by gradient index in reverse order, as DDP
// does (backward produces the last layers' gradients first), and bucket k
// starts its all-reduce as soon as it is complete and buckets 0..k-1 have
// started: every rank starts them in the same order, as the engines need.
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "backend/backend.h"
#include "distributed/group.h"

namespace nnbench::distributed {

class MeanReducer : public backend::GradientReducer {
 public:
  explicit MeanReducer(Group& g, bool overlap = false,
                       int64_t bucket_bytes = 25 << 20)
      : group_(g), overlap_(overlap), bucket_floats_(bucket_bytes / 4) {}

  void reduce(const std::vector<backend::GradientBuffer>& buffers) override;
  bool wants_overlap() const override { return overlap_; }
  void begin(const std::vector<int64_t>& counts) override;
  void ready(int index, const float* data) override;
  void finish(const std::vector<backend::GradientBuffer>& buffers) override;

  // Of the last step: seconds the step waited for the engine's all-reduce
  // (all of it after backward; with overlap, only the wait after backward
  // for what had not finished: the exposed part), and how many calls.
  double last_allreduce_seconds() const { return last_seconds_; }
  // Whether the last step overlapped (the backend called begin()).
  bool overlapped() const { return overlapped_; }
  int last_calls() const { return last_calls_; }
  // Bytes all-reduced per step (fp32 gradients, padding included).
  int64_t bytes() const { return bytes_; }

 private:
  void allreduce(float* data, int64_t n);
  void flush();

  // Overlap: fixed buckets over gradient indices, launched in order.
  struct Bucket {
    std::vector<int> members;  // gradient indices
    std::vector<int64_t> offsets;
    std::vector<float> data;
    int missing = 0;
    std::function<void()> wait;  // set once started
  };
  void start_ready_buckets();
  void plan_buckets(const std::vector<int64_t>& counts);

  Group& group_;
  bool overlap_;
  int64_t bucket_floats_;
  std::vector<Bucket> buckets_;
  std::vector<int64_t> counts_;
  std::vector<std::pair<int, int>> where_;  // gradient -> (bucket, member)
  size_t next_start_ = 0;
  bool overlapped_ = false;
  std::vector<float> bucket_;
  std::vector<backend::GradientBuffer> pending_;  // packed in bucket_
  double last_seconds_ = 0;
  int last_calls_ = 0;
  int64_t bytes_ = 0;
};

}  // namespace nnbench::distributed
