#include "train/latency.h"

#include <chrono>

#include "bench/statistics.h"
#include "data/loader.h"
#include "train/adapt.h"
#include "train/trainer.h"
#include "util/clock.h"

namespace nnbench::train {

Latency measure_latency(backend::Executable& exe, const data::Split& test,
                        const model::Model& m, int64_t max_items) {
  const bool binary = m.loss == model::Loss::kSigmoidBinaryCrossEntropy;
  using util::Clock;
  data::LoaderOptions lo;
  lo.batch = 1;
  lo.shuffle = false;
  data::Loader loader(test, lo);
  Latency l;
  // Warm-up: the first items, untimed and unscored; the timed pass below
  // still covers the whole set from its first item.
  loader.start_epoch(0);
  while (l.warmup_items < kLatencyWarmupItems) {
    auto item = loader.next();
    if (!item) break;
    reshape_inputs(*item, m);
    exe.load_batches({*item});
    exe.infer(0);
    exe.synchronize();
    ++l.warmup_items;
  }
  loader.start_epoch(0);
  std::vector<double> seconds;
  Score s;
  while (auto item = loader.next()) {
    reshape_inputs(*item, m);
    exe.load_batches({*item});
    const auto t0 = Clock::now();
    exe.infer(0);
    exe.synchronize();
    seconds.push_back(util::seconds_since(t0));
    score(exe.output(), item->labels, binary, s);
    if (max_items > 0 && static_cast<int64_t>(seconds.size()) >= max_items)
      break;
  }
  l.items = static_cast<int64_t>(seconds.size());
  if (l.items == 0) return l;
  l.mean = bench::mean(seconds);
  l.p50 = bench::quantile(seconds, 0.5);
  l.p90 = bench::quantile(seconds, 0.9);
  l.p99 = bench::quantile(seconds, 0.99);
  l.max = *std::max_element(seconds.begin(), seconds.end());
  l.accuracy = double(s.correct) / s.count;
  return l;
}

}  // namespace nnbench::train
