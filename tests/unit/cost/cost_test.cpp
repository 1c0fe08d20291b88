// The shipped price catalog and the cost arithmetic, against prices and
// products worked out by hand.
#include <gtest/gtest.h>
#include <unistd.h>

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

// Only the CPU-vs-GPU study priced vCPUs pro rata; the shipped catalog
// marks that entry and no other.
TEST(Cost, OnlyTheStudysGceCpuEntryIsProRata) {
  for (const auto& i : load_catalog(default_catalog_path()))
    EXPECT_EQ(i.pro_rata_vcpus, i.name == "gce-n1-highcpu-64-preemptible")
        << i.name;
}

TEST(Cost, ProRataEntriesScaleToTheVcpusUsed) {
  const auto c = load_catalog(default_catalog_path());
  const Instance& gce = find_instance(c, "gce-n1-highcpu-64-preemptible");
  // $0.509/h for 64 vCPUs; 8 of them: 0.509 / 8 = $0.063625/h.
  const Price p = instance_price(gce, 8);
  EXPECT_DOUBLE_EQ(p.usd_per_hour, 0.063625);
  EXPECT_NE(p.source.find("scaled to 8 of 64 vCPUs"), std::string::npos);
  // All of them, more than there are, or unknown (0): the whole price.
  EXPECT_DOUBLE_EQ(instance_price(gce, 64).usd_per_hour, 0.509);
  EXPECT_DOUBLE_EQ(instance_price(gce, 96).usd_per_hour, 0.509);
  EXPECT_DOUBLE_EQ(instance_price(gce, 0).usd_per_hour, 0.509);
}

TEST(Cost, OtherEntriesAreNeverScaled) {
  const auto c = load_catalog(default_catalog_path());
  // A CPU-only instance whose source priced the whole machine.
  const Price cpu = instance_price(find_instance(c, "aws-c5.18xlarge"), 8);
  EXPECT_DOUBLE_EQ(cpu.usd_per_hour, 3.06);
  EXPECT_EQ(cpu.source.find("scaled"), std::string::npos) << cpu.source;
  EXPECT_DOUBLE_EQ(
      instance_price(find_instance(c, "gce-k80-n1-standard-1"), 8).usd_per_hour,
      0.745);
}

// 1800 s at $3.60/h is half an hour: $1.80. A mean latency of 2 ms over
// 10,000 inferences is 20 s = 1/180 h: 3.60 / 180 = $0.02.
TEST(Cost, TrainAndInferenceCosts) {
  const Costs k =
      costs({3.6, "x"}, PricedTime{1800, "time to target"}, "", 0.002);
  ASSERT_TRUE(k.train_priced);
  EXPECT_DOUBLE_EQ(k.train_usd, 1.8);
  EXPECT_EQ(k.train_basis, "time to target");
  EXPECT_DOUBLE_EQ(k.usd_per_10k_inferences, 0.02);
  const auto j = to_json(k);
  EXPECT_DOUBLE_EQ(j["train_usd"].get<double>(), 1.8);
  EXPECT_DOUBLE_EQ(j["usd_per_10k_inferences"].get<double>(), 0.02);
}

// A run that missed its target has no training cost: null in the JSON,
// with the reason in its place; no latency, no inference cost.
TEST(Cost, NoTrainingCostWithoutAPricedTime) {
  const Costs k = costs({3.6, "x"}, std::nullopt,
                        "no training cost: target not reached", 0);
  EXPECT_FALSE(k.train_priced);
  const auto j = to_json(k);
  EXPECT_TRUE(j["train_usd"].is_null());
  EXPECT_EQ(j["train_basis"], "no training cost: target not reached");
  EXPECT_TRUE(j["usd_per_10k_inferences"].is_null());
}

class CatalogFile : public ::testing::Test {
 protected:
  void TearDown() override { std::filesystem::remove(path_); }
  std::string write(const std::string& text) {
    std::ofstream(path_) << text;
    return path_;
  }
  // The error of loading `text`, or "" if it loaded.
  std::string error_of(const std::string& text) {
    try {
      load_catalog(write(text));
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  // One file per test process: ctest runs these tests in parallel.
  const std::string path_ =
      (std::filesystem::temp_directory_path() /
       ("nnbench_prices_test_" + std::to_string(::getpid()) + ".json"))
          .string();
};

constexpr char kEntry[] =
    R"("name": "x", "provider": "p", "vcpus": 4, "gpus": 0,
       "usd_per_hour": 1.0, "pricing": "on-demand", "date": "2024",
       "source": "s")";

TEST_F(CatalogFile, MalformedEntryNamesFileAndEntry) {
  const std::string e = error_of(R"({"instances": [{"name": "x"}]})");
  EXPECT_NE(e.find(path_ + ": instances[0]"), std::string::npos) << e;
}

TEST_F(CatalogFile, ProRataMustBeABooleanNamedInTheError) {
  const std::string e = error_of(std::string(R"({"instances": [{)") + kEntry +
                                 R"(, "pro_rata_vcpus": "yes"}]})");
  EXPECT_NE(e.find(path_ + ": instances[0]: pro_rata_vcpus"), std::string::npos)
      << e;
}

TEST_F(CatalogFile, ProRataIsOptionalAndReadWhenGiven) {
  const auto c = load_catalog(write(std::string(R"({"instances": [{)") +
                                    kEntry + R"(}, {)" + kEntry +
                                    R"(, "pro_rata_vcpus": true}]})"));
  ASSERT_EQ(c.size(), 2u);
  EXPECT_FALSE(c[0].pro_rata_vcpus);
  EXPECT_TRUE(c[1].pro_rata_vcpus);
  EXPECT_DOUBLE_EQ(instance_price(c[0], 1).usd_per_hour, 1.0);
  EXPECT_DOUBLE_EQ(instance_price(c[1], 1).usd_per_hour, 0.25);  // 1 of 4
}

}  // namespace
}  // namespace nnbench::cost
