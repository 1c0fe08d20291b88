#include "distributed/shard.h"

#include <string>

#include "util/error.h"

namespace nnbench::distributed {
namespace {

host::Tensor rows(const host::Tensor& t, int64_t first, int64_t count) {
  host::Tensor out = t;
  if (t.shape.empty()) return out;
  const int64_t n = t.shape[0];
  const size_t data = t.f.empty() ? t.i.size() : t.f.size();
  const int64_t per_row = n > 0 ? static_cast<int64_t>(data) / n : 0;
  out.shape[0] = count;
  if (!t.f.empty())
    out.f.assign(t.f.begin() + first * per_row,
                 t.f.begin() + (first + count) * per_row);
  if (!t.i.empty())
    out.i.assign(t.i.begin() + first * per_row,
                 t.i.begin() + (first + count) * per_row);
  return out;
}

}  // namespace

host::Batch shard(const host::Batch& global, int rank, int ranks) {
  const int64_t n = global.labels.shape.empty() ? 0 : global.labels.shape[0];
  if (ranks <= 0 || n % ranks != 0)
    throw Error("a global batch of " + std::to_string(n) +
                " does not split evenly over " + std::to_string(ranks) +
                " ranks");
  const int64_t per = n / ranks;
  return {rows(global.input, rank * per, per),
          rows(global.labels, rank * per, per)};
}

}  // namespace nnbench::distributed
