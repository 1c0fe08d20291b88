#include "dist/reducer.h"

#include <algorithm>

#include "util/clock.h"

namespace nnbench::dist {

void MeanReducer::allreduce(float* data, int64_t n) {
  const auto t0 = util::Clock::now();
  group_.allreduce_sum(data, n);
  last_seconds_ += util::seconds_since(t0);
  ++last_calls_;
  const float scale = 1.0f / static_cast<float>(group_.size());
  for (int64_t i = 0; i < n; ++i) data[i] *= scale;
}

// Reduces the packed bucket and copies the means back to their buffers.
void MeanReducer::flush() {
  if (pending_.empty()) return;
  allreduce(bucket_.data(), static_cast<int64_t>(bucket_.size()));
  const float* src = bucket_.data();
  for (const auto& b : pending_) {
    std::copy(src, src + b.count, b.data);
    src += b.count;
  }
  pending_.clear();
  bucket_.clear();
}

void MeanReducer::reduce(const std::vector<backend::GradientBuffer>& buffers) {
  last_seconds_ = 0;
  last_calls_ = 0;
  bytes_ = 0;
  for (const auto& b : buffers) {
    bytes_ += 4 * b.count;
    if (b.count >= bucket_floats_) {  // big enough alone: in place
      allreduce(b.data, b.count);
      continue;
    }
    if (static_cast<int64_t>(bucket_.size()) + b.count > bucket_floats_)
      flush();
    bucket_.insert(bucket_.end(), b.data, b.data + b.count);
    pending_.push_back(b);
  }
  flush();
}

}  // namespace nnbench::dist
