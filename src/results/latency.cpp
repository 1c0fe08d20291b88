#include "results/latency.h"

namespace nnbench::results {

nlohmann::json to_json(const Latency& l) {
  return {{"items", l.items},
          {"warmup_items", l.warmup_items},
          {"batch", 1},
          {"mean_seconds", l.mean},
          {"p50_seconds", l.p50},
          {"p90_seconds", l.p90},
          {"p99_seconds", l.p99},
          {"max_seconds", l.max},
          {"percentile_method",
           "linear interpolation between order statistics (Hyndman-Fan "
           "type 7, numpy's default)"},
          {"accuracy", l.accuracy}};
}

Latency latency_from_json(const nlohmann::json& j) {
  Latency l;
  l.items = j.at("items");
  l.warmup_items = j.at("warmup_items");
  l.mean = j.at("mean_seconds");
  l.p50 = j.at("p50_seconds");
  l.p90 = j.at("p90_seconds");
  l.p99 = j.at("p99_seconds");
  l.max = j.at("max_seconds");
  l.accuracy = j.at("accuracy");
  return l;
}

}  // namespace nnbench::results
