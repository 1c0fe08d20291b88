// A run on an accelerator is judged by the accelerator: neither the host's
// memory estimate nor the CPU's GEMM peaks apply to it.
#include <gtest/gtest.h>

#include "bench/step_loop.h"
#include "model/zoo/zoo.h"
#include "scripted_backend.h"

namespace nnbench::bench {
namespace {

using test::Script;
using test::ScriptedBackend;

results::RunRequest request(int64_t batch, const std::string& device) {
  results::RunRequest r = test::scripted_request(batch, 2);
  r.options.device = device;
  return r;
}

Script on_cuda() {
  Script s;
  s.devices = {"cpu", "cuda:0"};
  return s;
}

// fcn-s at batch 10^9 is refused on the CPU by its estimate (about 100 TB
// of inputs: runner_oom_test); on cuda:0 the backend is asked, and what its
// allocator says is the cell's state.
TEST(Device, AnAcceleratorIsNotJudgedByHostMemory) {
  Script s = on_cuda();
  s.oom_in_compile = true;  // what a device's allocator says at this size
  ScriptedBackend b(s);
  const auto r = run(b, model::zoo::get("fcn-s"),
                     request(1'000'000'000, "cuda:0"), machine::Peak{});
  EXPECT_EQ(r.state, results::State::kOom) << r.message;
  EXPECT_EQ(r.oom_source, "allocation");
  EXPECT_EQ(b.record.compiles, 1);
}

// The same steps against the same peaks: a fraction on the CPU, none on
// the accelerator.
TEST(Device, CpuPeaksAreNoMeasureOfAnAccelerator) {
  machine::Peak peak;
  peak.gflops = 100;
  peak.theoretical.fp32_gflops = 200;
  Script s = on_cuda();
  s.step_seconds = 0.01;
  for (const std::string device : {"cpu", "cuda:0"}) {
    ScriptedBackend b(s);
    const auto r =
        run(b, model::zoo::get("mnist-mlp"), request(64, device), peak);
    ASSERT_EQ(r.state, results::State::kOk) << device << ": " << r.message;
    EXPECT_GT(r.gflops, 0) << device;
    if (device == "cpu") {
      EXPECT_NEAR(r.peak_fraction, r.gflops / 100, 1e-12);
      EXPECT_NEAR(r.theoretical_fraction, r.gflops / 200, 1e-12);
    } else {
      EXPECT_EQ(r.peak_fraction, 0);
      EXPECT_EQ(r.peak_gflops, 0);
      EXPECT_EQ(r.theoretical_fraction, 0);
    }
  }
}

}  // namespace
}  // namespace nnbench::bench
