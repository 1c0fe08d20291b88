// The shared part of Backend::supports: options against a description.
#include <gtest/gtest.h>

#include "backend/backend.h"

namespace nnbench::backend {
namespace {

Description described(std::string name, std::vector<std::string> devices,
                      std::vector<std::string> precisions) {
  Description d;
  d.name = std::move(name);
  d.devices = std::move(devices);
  d.precisions = std::move(precisions);
  d.optimizers = {"sgd"};
  return d;
}

Description gpu_backend() {
  return described("x", {"cpu", "cuda:0", "cuda:1"}, {"fp32", "bf16"});
}

TEST(Support, OptionsAreCheckedAgainstTheDescription) {
  Options o;
  EXPECT_TRUE(supports_options(gpu_backend(), o));
  o.device = "cuda";  // any listed cuda:N
  EXPECT_TRUE(supports_options(gpu_backend(), o));
  o.device = "cuda:1";
  EXPECT_TRUE(supports_options(gpu_backend(), o));
  o.device = "cuda:2";
  const Support s = supports_options(gpu_backend(), o);
  EXPECT_FALSE(s);
  EXPECT_EQ(s.why, "device cuda:2 (x has: cpu, cuda:0, cuda:1)");
  o.device = "cpu";
  o.precision = "fp16";
  EXPECT_EQ(supports_options(gpu_backend(), o).why,
            "precision fp16 (x runs: fp32, bf16)");
  o.precision = "bf16";
  o.optimizer = "adam";
  EXPECT_EQ(supports_options(gpu_backend(), o).why,
            "optimizer 'adam' (x runs: sgd)");
}

TEST(Support, CpuOnlyBackendRefusesCuda) {
  Options o;
  o.device = "cuda";
  EXPECT_FALSE(supports_options(described("y", {"cpu"}, {"fp32"}), o));
}

}  // namespace
}  // namespace nnbench::backend
