#pragma once
// Prices of cloud instances, from a catalog file (data/prices.json), so every
// cost nnbench reports names its price and where the price came from.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace nnbench::cost {

struct Instance {
  std::string name, provider, pricing, date, source;
  int vcpus = 0, gpus = 0;
  double usd_per_hour = 0;
  // The entry's source priced fewer vCPUs of this machine pro rata (the
  // CPU-vs-GPU study's GCE instances), so a run on fewer threads may be
  // charged that share. Optional in the file ("pro_rata_vcpus"), false by
  // default: no other price is scaled.
  bool pro_rata_vcpus = false;
};

// The catalog shipped with nnbench (data/prices.json in the source tree).
std::string default_catalog_path();
// Throws nnbench::Error naming the file and the entry on malformed input.
std::vector<Instance> load_catalog(const std::string& path);
const Instance& find_instance(const std::vector<Instance>& catalog,
                              const std::string& name);

// The price a run is charged: an instance from the catalog, or a price the
// user gave. An entry marked pro_rata_vcpus is scaled to the vCPUs actually
// used, as the CPU-vs-GPU study priced 8-32 vCPU machines; others never are.
struct Price {
  double usd_per_hour = 0;
  std::string source;  // instance and its source, or "--price-per-hour"
};
Price instance_price(const Instance& i, int vcpus_used = 0);
// What the command line asked: a price an hour (> 0) wins, else the
// catalog instance named (read from `catalog`), else none.
std::optional<Price> asked_price(double usd_per_hour,
                                 const std::string& instance,
                                 const std::string& catalog, int vcpus_used);

// The training time a price applies to, and what it is the time of. A run
// that did not reach its target has none: its time is not the cost of
// training (cli/train_report.cpp says why instead).
struct PricedTime {
  double seconds = 0;
  std::string basis;  // e.g. "time to target, mean of 3 runs (MLPerf)"
};

struct Costs {
  Price price;
  bool train_priced = false;  // false: no training cost (see train_basis)
  double train_usd = 0;       // priced seconds x price
  std::string train_basis;    // what was priced, or why nothing was
  double usd_per_10k_inferences = 0;  // mean latency x 10,000 x price
};

// `train` absent: no training cost, `why_not` says why.
Costs costs(const Price& p, const std::optional<PricedTime>& train,
            const std::string& why_not, double mean_latency_seconds);

nlohmann::json to_json(const Costs& c);

}  // namespace nnbench::cost
