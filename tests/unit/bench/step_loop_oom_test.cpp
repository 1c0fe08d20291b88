// An oom result says whether memory really ran out or the run was refused
// on its estimate before anything was allocated (docs/results.md).
#include <gtest/gtest.h>

#include <fstream>

#include "bench/step_loop.h"
#include "model/zoo/zoo.h"
#include "scripted_backend.h"

namespace nnbench::bench {
namespace {

using test::Script;
using test::ScriptedBackend;

results::RunRequest request(int64_t batch) {
  return test::scripted_request(batch);
}

// fcn-s at batch 10^9: 4-byte inputs alone (26752 per sample) are about
// 100 TB, beyond any machine's memory, so the estimate refuses the run and
// the backend is never asked to compile.
TEST(OomSource, EstimateRefusesBeforeAnyAllocation) {
  if (!std::ifstream("/proc/meminfo")) GTEST_SKIP() << "no /proc/meminfo";
  ScriptedBackend b(Script{});
  const auto r =
      run(b, model::zoo::get("fcn-s"), request(1'000'000'000), machine::Peak{});
  EXPECT_EQ(r.state, results::State::kOom);
  EXPECT_EQ(r.oom_source, "estimate");
  EXPECT_EQ(b.record.compiles, 0);
  EXPECT_NE(r.message.find("estimated"), std::string::npos) << r.message;
  EXPECT_EQ(results::to_json(r)["oom_source"], "estimate");
}

TEST(OomSource, BackendOutOfMemoryIsAnAllocationFailure) {
  Script s;
  s.oom_in_compile = true;
  ScriptedBackend b(s);
  const auto r =
      run(b, model::zoo::get("mnist-mlp"), request(2), machine::Peak{});
  EXPECT_EQ(r.state, results::State::kOom);
  EXPECT_EQ(r.oom_source, "allocation");
  EXPECT_EQ(b.record.compiles, 1);
}

TEST(OomSource, BadAllocInAStepIsAnAllocationFailure) {
  Script s;
  s.bad_alloc_in_step = true;
  ScriptedBackend b(s);
  const auto r =
      run(b, model::zoo::get("mnist-mlp"), request(2), machine::Peak{});
  EXPECT_EQ(r.state, results::State::kOom);
  EXPECT_EQ(r.oom_source, "allocation");
}

// Written and read back; null where the state is not oom.
TEST(OomSource, RoundTripsThroughJson) {
  results::RunResult r;
  r.state = results::State::kOom;
  r.oom_source = "estimate";
  EXPECT_EQ(results::run_result_from_json(results::to_json(r)).oom_source,
            "estimate");
  r.state = results::State::kOk;
  r.oom_source.clear();
  const auto j = results::to_json(r);
  EXPECT_TRUE(j["oom_source"].is_null());
  EXPECT_EQ(results::run_result_from_json(j).oom_source, "");
}

}  // namespace
}  // namespace nnbench::bench
