#include "results/distributed.h"

namespace nnbench::results {

using nlohmann::json;

json to_json(const DistributedRequest& d) {
  return {{"engine", d.engine.empty() ? json() : json(d.engine)},
          {"processes", d.processes},
          {"scaling", d.scaling},
          {"overlap", d.overlap},
          {"bucket_bytes", d.bucket_bytes}};
}

DistributedRequest distributed_request_from_json(const json& j) {
  DistributedRequest d;
  if (!j.is_object()) return d;
  const json e = j.value("engine", json());
  d.engine = e.is_string() ? e.get<std::string>() : "";
  d.processes = j.value("processes", 1);
  d.scaling = j.value("scaling", "strong");
  d.overlap = j.value("overlap", false);
  d.bucket_bytes = j.value("bucket_bytes", d.bucket_bytes);
  return d;
}

json to_json(const DistributedRun& d) {
  json ranks = json::array();
  for (const auto& r : d.per_rank)
    ranks.push_back({{"rank", r.rank},
                     {"threads", r.threads},
                     {"step_seconds", r.step_seconds},
                     {"allreduce_seconds", r.allreduce_seconds},
                     {"compute_seconds", r.compute_seconds}});
  return {{"engine", d.engine},
          {"engine_version", d.engine_version},
          {"scaling", d.scaling},
          {"ranks", d.ranks},
          {"local_ranks", d.local_ranks},
          {"global_batch", d.global_batch},
          {"batch_per_rank", d.batch_per_rank},
          {"overlap", d.overlap},
          {"gradient_bytes", d.gradient_bytes},
          {"allreduce_calls_per_step", d.allreduce_calls},
          {"bucket_bytes", d.bucket_bytes},
          {"allreduce_seconds", d.allreduce_seconds},
          {"algorithm_gbytes_per_second", d.algorithm_gbytes_per_second},
          {"bus_gbytes_per_second", d.bus_gbytes_per_second},
          {"per_rank", ranks},
          {"failed_rank", d.failed_rank < 0 ? json() : json(d.failed_rank)}};
}

DistributedRun distributed_run_from_json(const json& j) {
  DistributedRun d;
  d.engine = j.at("engine");
  d.engine_version = j.value("engine_version", "");
  d.scaling = j.at("scaling");
  d.ranks = j.at("ranks");
  d.local_ranks = j.value("local_ranks", d.ranks);
  d.global_batch = j.at("global_batch");
  d.batch_per_rank = j.at("batch_per_rank");
  d.overlap = j.value("overlap", "");
  d.gradient_bytes = j.value("gradient_bytes", int64_t{0});
  d.allreduce_calls = j.value("allreduce_calls_per_step", 0);
  d.bucket_bytes = j.value("bucket_bytes", int64_t{0});
  d.allreduce_seconds = j.value("allreduce_seconds", 0.0);
  d.algorithm_gbytes_per_second = j.value("algorithm_gbytes_per_second", 0.0);
  d.bus_gbytes_per_second = j.value("bus_gbytes_per_second", 0.0);
  for (const auto& r : j.value("per_rank", json::array()))
    d.per_rank.push_back({r.at("rank"), r.value("threads", 0),
                          r.at("step_seconds"), r.at("allreduce_seconds"),
                          r.at("compute_seconds")});
  const json f = j.value("failed_rank", json());
  d.failed_rank = f.is_number() ? f.get<int>() : -1;
  return d;
}

}  // namespace nnbench::results
