#include "scaling/ring_model.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "util/error.h"

namespace nnbench::scaling {

Link fit_two_rank(const std::vector<Sample>& samples) {
  std::set<double> sizes;
  for (const auto& s : samples) sizes.insert(s.bytes);
  if (sizes.size() < 2)
    throw Error("fit_two_rank: needs all-reduce times at two or more sizes");
  // Weighted by 1 / seconds^2: relative errors count, so the microsecond
  // times of small messages (which set alpha) are not drowned by the
  // milliseconds of large ones (which set beta).
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& s : samples) {
    const double w = s.seconds > 0 ? 1 / (s.seconds * s.seconds) : 0;
    n += w;
    sx += w * s.bytes;
    sy += w * s.seconds;
    sxx += w * s.bytes * s.bytes;
    sxy += w * s.bytes * s.seconds;
  }
  const double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  const double intercept = (sy - slope * sx) / n;
  return {intercept / 2, slope};
}

double allreduce_seconds(const Link& l, int ranks, double bytes) {
  if (ranks <= 1) return 0;
  const double p = ranks;
  return 2 * (p - 1) * l.alpha + 2 * (p - 1) / p * bytes * l.beta;
}

namespace {

double step_seconds(const Workload& w, const Link& l, Scaling s, int ranks) {
  const double compute =
      s == Scaling::kStrong ? w.compute_seconds / ranks : w.compute_seconds;
  const double comm = allreduce_seconds(l, ranks, w.gradient_bytes);
  return w.overlap ? std::max(compute, comm) : compute + comm;
}

}  // namespace

Prediction predict(const Workload& w, const Link& l, Scaling s, int ranks) {
  if (ranks < 1) throw Error("predict: ranks must be >= 1");
  Prediction p;
  p.ranks = ranks;
  p.step_seconds = step_seconds(w, l, s, ranks);
  const double samples = s == Scaling::kStrong ? w.batch : w.batch * ranks;
  p.samples_per_second = samples / p.step_seconds;
  const double one = step_seconds(w, l, s, 1);
  p.speedup = p.samples_per_second / (w.batch / one);
  p.efficiency = p.speedup / ranks;
  return p;
}

double error_percent(double predicted, double measured) {
  return (predicted - measured) / measured * 100;
}

}  // namespace nnbench::scaling
