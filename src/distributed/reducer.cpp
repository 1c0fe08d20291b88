#include "distributed/reducer.h"

#include <algorithm>

#include "util/clock.h"

namespace nnbench::distributed {

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

void MeanReducer::plan_buckets(const std::vector<int64_t>& counts) {
  counts_ = counts;
  buckets_.clear();
  where_.assign(counts.size(), {0, 0});
  for (int i = static_cast<int>(counts.size()) - 1; i >= 0; --i) {
    if (buckets_.empty() ||
        static_cast<int64_t>(buckets_.back().data.size()) + counts[i] >
            bucket_floats_)
      buckets_.emplace_back();
    Bucket& b = buckets_.back();
    where_[i] = {static_cast<int>(buckets_.size()) - 1,
                 static_cast<int>(b.members.size())};
    b.members.push_back(i);
    b.offsets.push_back(static_cast<int64_t>(b.data.size()));
    b.data.resize(b.data.size() + counts[i]);
  }
}

void MeanReducer::begin(const std::vector<int64_t>& counts) {
  if (counts != counts_) plan_buckets(counts);
  last_seconds_ = 0;
  last_calls_ = 0;
  bytes_ = 0;
  for (auto c : counts) bytes_ += 4 * c;
  for (auto& b : buckets_) {
    // Zeros for a gradient backward never reports (an unused parameter).
    std::fill(b.data.begin(), b.data.end(), 0.f);
    b.missing = static_cast<int>(b.members.size());
    b.wait = nullptr;
  }
  next_start_ = 0;
  overlapped_ = true;
}

void MeanReducer::start_ready_buckets() {
  while (next_start_ < buckets_.size() && buckets_[next_start_].missing == 0) {
    Bucket& b = buckets_[next_start_++];
    b.wait = group_.allreduce_sum_async(b.data.data(),
                                        static_cast<int64_t>(b.data.size()));
    ++last_calls_;
  }
}

void MeanReducer::ready(int index, const float* data) {
  const auto [bucket, member] = where_.at(index);
  Bucket& b = buckets_[bucket];
  std::copy(data, data + counts_[index], b.data.begin() + b.offsets[member]);
  --b.missing;
  start_ready_buckets();
}

void MeanReducer::finish(const std::vector<backend::GradientBuffer>& buffers) {
  const auto t0 = util::Clock::now();
  for (auto& b : buckets_) b.missing = 0;  // the rest go now, in order
  start_ready_buckets();
  for (auto& b : buckets_) b.wait();
  last_seconds_ = util::seconds_since(t0);
  const float scale = 1.0f / static_cast<float>(group_.size());
  for (auto& b : buckets_)
    for (size_t k = 0; k < b.members.size(); ++k) {
      const float* src = b.data.data() + b.offsets[k];
      float* dst = buffers.at(b.members[k]).data;
      for (int64_t i = 0; i < counts_[b.members[k]]; ++i)
        dst[i] = src[i] * scale;
    }
}

void MeanReducer::reduce(const std::vector<backend::GradientBuffer>& buffers) {
  overlapped_ = false;
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

}  // namespace nnbench::distributed
