#pragma once
// Prices of cloud instances, from a catalog file (data/prices.json), so every
// cost nnbench reports names its price and where the price came from.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace nnbench::cost {

struct Instance {
  std::string name, provider, pricing, date, source;
  int vcpus = 0, gpus = 0;
  double usd_per_hour = 0;
};

// The catalog shipped with nnbench (data/prices.json in the source tree).
std::string default_catalog_path();
// Throws nnbench::Error naming the file and the entry on malformed input.
std::vector<Instance> load_catalog(const std::string& path);
const Instance& find_instance(const std::vector<Instance>& catalog,
                              const std::string& name);

// The price a run is charged: an instance from the catalog, or a price the
// user gave. For a CPU-only instance the price can be scaled to the vCPUs
// actually used, as the CPU-vs-GPU study priced 8-32 vCPU machines pro rata.
struct Price {
  double usd_per_hour = 0;
  std::string source;  // instance and its source, or "--price-per-hour"
};
Price instance_price(const Instance& i, int vcpus_used = 0);

struct Costs {
  Price price;
  double train_usd = 0;               // time to train x price
  double usd_per_10k_inferences = 0;  // mean latency x 10,000 x price
};

Costs costs(const Price& p, double train_seconds, double mean_latency_seconds);

nlohmann::json to_json(const Costs& c);

}  // namespace nnbench::cost
