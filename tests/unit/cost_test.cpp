// The shipped price catalog and the cost arithmetic.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cost/catalog.h"
#include "util/error.h"

namespace nnbench::cost {
namespace {

TEST(Cost, ShippedCatalogHasTheStudiesPrices) {
  const auto c = load_catalog(default_catalog_path());
  EXPECT_DOUBLE_EQ(find_instance(c, "gce-k80-n1-standard-1").usd_per_hour,
                   0.745);
  EXPECT_DOUBLE_EQ(
      find_instance(c, "gce-n1-highcpu-64-preemptible").usd_per_hour, 0.509);
  for (const auto& i : c) EXPECT_FALSE(i.source.empty()) << i.name;
  EXPECT_THROW(find_instance(c, "nope"), Error);
}

TEST(Cost, CpuInstancesScaleProRataToVcpusUsed) {
  const auto c = load_catalog(default_catalog_path());
  const Price p =
      instance_price(find_instance(c, "gce-n1-highcpu-64-preemptible"), 8);
  EXPECT_DOUBLE_EQ(p.usd_per_hour, 0.509 / 8);
  EXPECT_NE(p.source.find("scaled to 8 of 64 vCPUs"), std::string::npos);
  // GPU instances are not scaled.
  EXPECT_DOUBLE_EQ(
      instance_price(find_instance(c, "gce-k80-n1-standard-1"), 8).usd_per_hour,
      0.745);
}

TEST(Cost, TrainAndInferenceCosts) {
  const Costs k = costs({3.6, "x"}, 1800, 0.002);
  EXPECT_DOUBLE_EQ(k.train_usd, 1.8);
  EXPECT_DOUBLE_EQ(k.usd_per_10k_inferences, 0.002 * 10000 / 3600 * 3.6);
}

TEST(Cost, MalformedCatalogNamesFileAndEntry) {
  const auto path =
      (std::filesystem::temp_directory_path() / "nnbench_prices.json").string();
  std::ofstream(path) << R"({"instances": [{"name": "x"}]})";
  try {
    load_catalog(path);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path + ": instances[0]"),
              std::string::npos)
        << e.what();
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace nnbench::cost
