// Which cloud instance a machine is (machine/instance.h): named by the user
// and priced from the catalog, or told by a metadata service, here a local
// server speaking each provider's protocol; a service that is absent or
// silent costs at most the deadline and records nothing.
#include "machine/instance.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "http_server.h"
#include "util/error.h"

namespace nnbench::machine {
namespace {

class Instance : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("NNBENCH_INSTANCE");
    unsetenv("NNBENCH_PRICES");
  }
  void TearDown() override {
    unsetenv("NNBENCH_METADATA");
    unsetenv("NNBENCH_INSTANCE");
    unsetenv("NNBENCH_PRICES");
  }
};

TEST_F(Instance, AwsAnswersWithASessionTokenAndThePriceComesFromTheCatalog) {
  std::optional<MachineInstance> i;
  std::string seen;
  {
    Server s(2, [](const std::string& req) {
      if (req.rfind("PUT /latest/api/token ", 0) == 0) return http_ok("T0KEN");
      const bool good =
          req.rfind("GET /latest/meta-data/instance-type ", 0) == 0 &&
          req.find("X-aws-ec2-metadata-token: T0KEN\r\n") != std::string::npos;
      return good ? http_ok("p3.2xlarge\n")
                  : std::string("HTTP/1.1 401 Unauthorized\r\n\r\n");
    });
    setenv("NNBENCH_METADATA", s.endpoint("aws").c_str(), 1);
    i = detect_instance();
    seen = s.seen();
  }
  ASSERT_TRUE(i) << seen;
  EXPECT_EQ(i->name, "aws-p3.2xlarge");
  EXPECT_EQ(i->source, "aws metadata");
  ASSERT_TRUE(i->catalog);
  EXPECT_EQ(i->catalog->usd_per_hour, 3.06);  // data/prices.json's entry
  EXPECT_NE(seen.find("X-aws-ec2-metadata-token-ttl-seconds: 60"),
            std::string::npos);
}

TEST_F(Instance, GceAndAzureAreAskedTheirWayAndATypeNotInTheCatalogHasNoPrice) {
  {
    Server s(1, [](const std::string& req) {
      return req.find("Metadata-Flavor: Google\r\n") != std::string::npos
                 ? http_ok("projects/42/machineTypes/n2-standard-8")
                 : std::string("HTTP/1.1 403 Forbidden\r\n\r\n");
    });
    setenv("NNBENCH_METADATA", s.endpoint("gce").c_str(), 1);
    const auto i = detect_instance();
    ASSERT_TRUE(i);
    EXPECT_EQ(i->name, "gce-n2-standard-8");
    EXPECT_FALSE(i->catalog);
    EXPECT_TRUE(to_json(i)["usd_per_hour"].is_null());  // never 0
  }
  {
    Server s(1, [](const std::string& req) {
      return req.find("Metadata: true\r\n") != std::string::npos &&
                     req.find("/metadata/instance/compute/vmSize") !=
                         std::string::npos
                 ? http_ok("Standard_D8s_v5")
                 : std::string("HTTP/1.1 400 Bad Request\r\n\r\n");
    });
    setenv("NNBENCH_METADATA", s.endpoint("azure").c_str(), 1);
    const auto i = detect_instance();
    ASSERT_TRUE(i);
    EXPECT_EQ(i->name, "azure-Standard_D8s_v5");
  }
}

TEST_F(Instance, ASilentOrAbsentServiceRecordsNothingWithinTheDeadline) {
  {
    Server s(2, [](const std::string&) { return std::string(); });
    setenv("NNBENCH_METADATA", s.endpoint("aws").c_str(), 1);
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_FALSE(detect_instance());
    const double ms = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - t0)
                          .count();
    // Two requests (token, type), each cut at the deadline.
    EXPECT_LT(ms, 2 * kMetadataDeadlineMs + 400);
  }
  // A closed port: refused at once.
  const int probe = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  bind(probe, reinterpret_cast<sockaddr*>(&a), len);
  getsockname(probe, reinterpret_cast<sockaddr*>(&a), &len);
  const std::string closed =
      "gce=127.0.0.1:" + std::to_string(ntohs(a.sin_port));
  close(probe);
  setenv("NNBENCH_METADATA", closed.c_str(), 1);
  EXPECT_FALSE(detect_instance());
  setenv("NNBENCH_METADATA", "none", 1);
  EXPECT_FALSE(detect_instance());
}

TEST_F(Instance, ANamedInstanceWinsAndAnUnknownNameIsRefusedNamingTheKnown) {
  setenv("NNBENCH_METADATA", "none", 1);
  name_instance("aws-c5.18xlarge", "");
  const auto i = detect_instance();
  ASSERT_TRUE(i);
  EXPECT_EQ(i->name, "aws-c5.18xlarge");
  EXPECT_EQ(i->source, "--instance");
  ASSERT_TRUE(i->catalog);
  EXPECT_EQ(to_json(i)["vcpus"], 72);
  try {
    name_instance("aws-p9.huge", "");
    FAIL() << "an unknown instance was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown instance 'aws-p9.huge'"),
              std::string::npos);
    EXPECT_NE(std::string(e.what()).find("aws-p3.2xlarge"), std::string::npos);
  }
}

}  // namespace
}  // namespace nnbench::machine
