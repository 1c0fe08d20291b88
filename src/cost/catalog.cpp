#include "cost/catalog.h"

#include <fmt/core.h>

#include <cstdlib>
#include <fstream>

#include "util/error.h"
#include "util/paths.h"

namespace nnbench::cost {
namespace {

Instance parse(const nlohmann::json& j, const std::string& where) {
  Instance i;
  try {
    i.name = j.at("name");
    i.provider = j.at("provider");
    i.vcpus = j.at("vcpus");
    i.gpus = j.at("gpus");
    i.usd_per_hour = j.at("usd_per_hour");
    i.pricing = j.at("pricing");
    i.date = j.at("date");
    i.source = j.at("source");
    if (j.contains("pro_rata_vcpus")) {
      if (!j["pro_rata_vcpus"].is_boolean())
        throw Error(where + ": pro_rata_vcpus must be true or false");
      i.pro_rata_vcpus = j["pro_rata_vcpus"];
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error(where + ": " + e.what());
  }
  if (i.usd_per_hour <= 0) throw Error(where + ": usd_per_hour must be > 0");
  if (i.pro_rata_vcpus && i.vcpus <= 0)
    throw Error(where + ": pro_rata_vcpus needs vcpus > 0");
  return i;
}

}  // namespace

std::string default_catalog_path() {
  if (const char* env = std::getenv("NNBENCH_PRICES"); env && *env) return env;
  const std::string p = util::shipped_path("prices.json", "data/prices.json");
  return p.empty() ? "share/nnbench/prices.json (not found beside nnbench)" : p;
}

std::vector<Instance> load_catalog(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(path + ": cannot open price catalog");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(path + ": not valid JSON: " + e.what());
  }
  if (!j.contains("instances") || !j["instances"].is_array())
    throw Error(path + ": missing array 'instances'");
  std::vector<Instance> out;
  for (size_t k = 0; k < j["instances"].size(); ++k)
    out.push_back(parse(j["instances"][k],
                        path + ": instances[" + std::to_string(k) + "]"));
  return out;
}

const Instance& find_instance(const std::vector<Instance>& catalog,
                              const std::string& name) {
  std::string known;
  for (const auto& i : catalog) {
    if (i.name == name) return i;
    known += " " + i.name;
  }
  throw Error("unknown instance '" + name + "'; in the catalog:" + known);
}

Price instance_price(const Instance& i, int vcpus_used) {
  Price p{i.usd_per_hour,
          fmt::format("{} ({}, {} {}, ${:.3f}/h): {}", i.name, i.provider,
                      i.pricing, i.date, i.usd_per_hour, i.source)};
  if (i.pro_rata_vcpus && vcpus_used > 0 && vcpus_used < i.vcpus) {
    p.usd_per_hour = i.usd_per_hour * vcpus_used / i.vcpus;
    p.source += fmt::format("; scaled to {} of {} vCPUs, as its source priced",
                            vcpus_used, i.vcpus);
  }
  return p;
}

Costs costs(const Price& p, const std::optional<PricedTime>& train,
            const std::string& why_not, double mean_latency_seconds) {
  Costs c;
  c.price = p;
  c.train_priced = train.has_value();
  c.train_usd = train ? train->seconds / 3600.0 * p.usd_per_hour : 0;
  c.train_basis = train ? train->basis : why_not;
  c.usd_per_10k_inferences =
      mean_latency_seconds * 10000.0 / 3600.0 * p.usd_per_hour;
  return c;
}

nlohmann::json to_json(const Costs& c) {
  using nlohmann::json;
  return {
      {"usd_per_hour", c.price.usd_per_hour},
      {"price_source", c.price.source},
      {"train_usd", c.train_priced ? json(c.train_usd) : json()},
      {"train_basis", c.train_basis},
      {"usd_per_10k_inferences",
       c.usd_per_10k_inferences > 0 ? json(c.usd_per_10k_inferences) : json()}};
}

std::optional<Price> asked_price(double usd_per_hour,
                                 const std::string& instance,
                                 const std::string& catalog, int vcpus_used) {
  if (usd_per_hour > 0) return Price{usd_per_hour, "--price-per-hour"};
  if (instance.empty()) return std::nullopt;
  return instance_price(find_instance(load_catalog(catalog), instance),
                        vcpus_used);
}

}  // namespace nnbench::cost
