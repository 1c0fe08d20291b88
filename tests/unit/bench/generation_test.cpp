// The generation harness on a fake generator whose every call advances a
// fake clock by a known time: the figures are then exact, computed here by
// hand.
#include "bench/generation.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "data/synthetic.h"
#include "model/generation.h"
#include "model/zoo/zoo.h"
#include "results/kinds.h"

namespace nnbench::bench {
namespace {

// Prefill takes 0.2 s; the k-th decoding step of a generation 0.04 s when
// k is a multiple of 4, else 0.01 s. Row 0's tokens are 7, then k; with
// `drift`, the third generation's third token differs.
class FakeGenerator : public backend::Generator {
 public:
  FakeGenerator(double& clock, bool drift) : clock_(clock), drift_(drift) {}
  std::vector<int64_t> prefill(
      const std::vector<std::vector<int64_t>>& prompts) override {
    ++prefills;
    rows = static_cast<int64_t>(prompts.size());
    k_ = 0;
    clock_ += 0.2;
    return std::vector<int64_t>(rows, 7);
  }
  std::vector<int64_t> decode(const std::vector<int64_t>& tokens) override {
    EXPECT_EQ(static_cast<int64_t>(tokens.size()), rows);
    ++k_;
    clock_ += k_ % 4 == 0 ? 0.04 : 0.01;
    const int64_t token = drift_ && prefills == 3 && k_ == 2 ? 99 : k_;
    return std::vector<int64_t>(rows, token);
  }
  backend::Effective effective() const override { return {1, "cpu", "fp32"}; }
  int prefills = 0;
  int64_t rows = 0;

 private:
  double& clock_;
  bool drift_;
  int64_t k_ = 0;
};

results::GenerationRun asked() {
  results::GenerationRun r;
  r.asked = {
      .batch = 2, .prompt = 16, .new_tokens = 9, .warmup = 1, .repetitions = 3};
  return r;
}

TEST(Generation, TimesEachTokenOnTheClock) {
  double clock = 100;
  FakeGenerator g(clock, false);
  auto r = asked();
  time_generation(g, data::synthetic_prompts(2, 16, 50, 1), r,
                  [&] { return clock; });
  EXPECT_EQ(g.prefills, 4);  // one warm-up, three timed
  ASSERT_EQ(r.ttft_seconds.size(), 3u);
  ASSERT_EQ(r.itl_seconds.size(), 3u);
  for (int rep = 0; rep < 3; ++rep) {
    EXPECT_NEAR(r.ttft_seconds[rep], 0.2, 1e-9);
    ASSERT_EQ(r.itl_seconds[rep].size(), 8u);
    for (int k = 1; k <= 8; ++k)
      EXPECT_NEAR(r.itl_seconds[rep][k - 1], k % 4 == 0 ? 0.04 : 0.01, 1e-9);
  }
  EXPECT_EQ(r.tokens, (std::vector<int64_t>{7, 1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST(Generation, FiguresFromTheTimes) {
  double clock = 0;
  FakeGenerator g(clock, false);
  auto r = asked();
  time_generation(g, data::synthetic_prompts(2, 16, 50, 1), r,
                  [&] { return clock; });
  r.weight_bytes = 4e9;
  machine::Bandwidth bw;
  bw.read_gbs = 20;
  bw.threads = 2;
  summarize_generation(r, {bw});
  EXPECT_NEAR(r.ttft.median, 0.2, 1e-9);
  // Each generation: six steps of 0.01 and two of 0.04, mean 0.0175.
  EXPECT_NEAR(r.tpot.median, 0.0175, 1e-9);
  EXPECT_EQ(r.tpot.n, 3);
  // 24 latencies, 18 of 0.01 then 6 of 0.04: type 7's p50 at rank 12.5 of
  // 24 is 0.01, p90 at 21.7 is 0.04.
  EXPECT_NEAR(r.itl_p50.value, 0.01, 1e-9);
  EXPECT_NEAR(r.itl_p90.value, 0.04, 1e-9);
  EXPECT_NEAR(r.itl_p99.value, 0.04, 1e-9);
  EXPECT_NEAR(r.prefill_tokens_per_second, 2 * 16 / 0.2, 1e-6);
  EXPECT_NEAR(r.generation_tokens_per_second, 2 / 0.0175, 1e-6);
  ASSERT_TRUE(r.ceiling.has_value());
  EXPECT_NEAR(r.ceiling->steps_per_second, 20e9 / 4e9, 1e-9);
  EXPECT_NEAR(r.ceiling->fraction, (1 / 0.0175) / 5, 1e-9);
  EXPECT_EQ(r.ceiling->threads, 2);
  // Measured before and after: the higher is the ceiling (the machine gave
  // that much), both are recorded.
  machine::Bandwidth slow = bw;
  slow.read_gbs = 12;
  summarize_generation(r, {slow, bw});
  ASSERT_TRUE(r.ceiling.has_value());
  EXPECT_DOUBLE_EQ(r.ceiling->bandwidth_gbs, 20);
  EXPECT_EQ(r.ceiling->measured_gbs, (std::vector<double>{12, 20}));
  EXPECT_NEAR(r.ceiling->fraction, (1 / 0.0175) / 5, 1e-9);
  // Without a bandwidth there is no ceiling, not a zero one.
  summarize_generation(r, {});
  EXPECT_FALSE(r.ceiling.has_value());
}

TEST(Generation, TokensThatChangeBetweenRepetitionsFail) {
  double clock = 0;
  FakeGenerator g(clock, true);
  auto r = asked();
  try {
    time_generation(g, data::synthetic_prompts(2, 16, 50, 1), r,
                    [&] { return clock; });
    FAIL() << "expected a RunError";
  } catch (const results::RunError& e) {
    EXPECT_EQ(e.state, results::State::kFailed);
    EXPECT_NE(std::string(e.what()).find("repetition 2"), std::string::npos)
        << e.what();
  }
}

TEST(Generation, PromptsAreSeededAndInTheVocabulary) {
  const auto a = data::synthetic_prompts(3, 40, 7, 5),
             b = data::synthetic_prompts(3, 40, 7, 5);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, data::synthetic_prompts(3, 40, 7, 6));
  ASSERT_EQ(a.size(), 3u);
  for (const auto& row : a) {
    ASSERT_EQ(row.size(), 40u);
    for (int64_t t : row) EXPECT_TRUE(t >= 0 && t < 7) << t;
  }
}

TEST(Generation, RecordRoundTripsThroughItsKind) {
  double clock = 0;
  FakeGenerator g(clock, false);
  auto r = asked();
  r.model = "m";
  r.backend = "b";
  r.state = results::State::kOk;
  time_generation(g, data::synthetic_prompts(2, 16, 50, 1), r,
                  [&] { return clock; });
  r.weight_bytes = 4e9;
  machine::Bandwidth bw;
  bw.read_gbs = 20;
  summarize_generation(r, {bw});
  const auto back = results::record_from_json(r.serialize());
  const auto& g2 = results::as<results::GenerationRun>(*back);
  EXPECT_EQ(g2.kind, "generation");
  EXPECT_EQ(g2.tokens, r.tokens);
  EXPECT_EQ(g2.itl_seconds, r.itl_seconds);
  EXPECT_DOUBLE_EQ(g2.tpot.median, r.tpot.median);
  EXPECT_DOUBLE_EQ(g2.itl_p90.value, r.itl_p90.value);
  EXPECT_DOUBLE_EQ(g2.itl_p50.ci.hi, r.itl_p50.ci.hi);
  EXPECT_DOUBLE_EQ(g2.ceiling->fraction, r.ceiling->fraction);
  EXPECT_EQ(g2.ceiling->measured_gbs, r.ceiling->measured_gbs);
  EXPECT_EQ(g2.ceiling->kernel, "read");
  // A record written before the kernel was named used the triad.
  auto old = r.serialize();
  old["bandwidth_ceiling"].erase("kernel");
  EXPECT_EQ(results::as<results::GenerationRun>(*results::record_from_json(old))
                .ceiling->kernel,
            "triad");
  EXPECT_EQ(g2.asked.prompt, 16);
  // The store's columns: time per output token and generation tokens/s.
  EXPECT_DOUBLE_EQ(g2.headline().median_seconds, r.tpot.median);
  EXPECT_DOUBLE_EQ(g2.headline().samples_per_second,
                   r.generation_tokens_per_second);
}

// A generator on a GPU: its memory's bandwidth is its engine's to measure
// (4000 GB/s before the generations, 4800 after), never the host's; or
// an engine that measures none, or whose measurement fails.
enum class DeviceMeasures { kYes, kNone, kThrows };

class OnDevice : public FakeGenerator {
 public:
  OnDevice(double& clock, int& asked, DeviceMeasures measures)
      : FakeGenerator(clock, false), asked_(asked), measures_(measures) {}
  backend::Effective effective() const override {
    backend::Effective e;
    e.threads = 1;
    e.device = "cuda:0";
    e.precision = "fp32";
    return e;
  }
  std::optional<backend::DeviceBandwidth> device_bandwidth() override {
    ++asked_;
    if (measures_ == DeviceMeasures::kNone) return std::nullopt;
    if (measures_ == DeviceMeasures::kThrows)
      throw std::runtime_error("out of device memory");
    backend::DeviceBandwidth bw;
    bw.read_gbs = asked_ == 1 ? 4000 : 4800;
    return bw;
  }

 private:
  int& asked_;
  DeviceMeasures measures_;
};

class DeviceBackend : public backend::Backend {
 public:
  DeviceBackend(double& clock, int& asked,
                DeviceMeasures measures = DeviceMeasures::kYes)
      : clock_(clock), asked_(asked), measures_(measures) {}
  std::string name() const override { return "device"; }
  std::string version() const override { return "test"; }
  backend::Description describe() const override { return {}; }
  backend::Support supports(const model::Layer&,
                            const backend::Options&) const override {
    return backend::Support::yes();
  }
  std::unique_ptr<backend::Executable> compile(
      const model::Model&, const backend::Options&,
      const backend::Shapes&) override {
    return nullptr;
  }
  std::unique_ptr<backend::Generator> generator(
      const model::Model&, const backend::Options&,
      const backend::GenerationShape&) override {
    return std::make_unique<OnDevice>(clock_, asked_, measures_);
  }

 private:
  double& clock_;
  int& asked_;
  DeviceMeasures measures_;
};

// The host's bandwidth, 30 GB/s, counting the times it is asked.
BandwidthAt host_bandwidth(int& asked) {
  return [&asked](int threads) {
    ++asked;
    machine::Bandwidth bw;
    bw.read_gbs = 30;
    bw.threads = threads;
    return std::optional(bw);
  };
}

TEST(Generation, OnADeviceTheCeilingIsTheDevicesBandwidth) {
  double clock = 0;
  int device_asked = 0, host_asked = 0;
  DeviceBackend b(clock, device_asked);
  const model::Model m = model::zoo::get("gpt2-tiny");
  results::RunRequest request;
  request.options.device = "cuda:0";
  request.options.threads = 1;
  const auto r =
      run_generation(b, m, request, asked().asked, host_bandwidth(host_asked));
  ASSERT_EQ(r.state, results::State::kOk) << r.message;
  EXPECT_EQ(host_asked, 0);
  EXPECT_EQ(device_asked, 2);  // before and after the generations
  ASSERT_TRUE(r.ceiling.has_value());
  EXPECT_EQ(r.ceiling->device, "cuda:0");
  EXPECT_DOUBLE_EQ(r.ceiling->bandwidth_gbs, 4800);
  EXPECT_EQ(r.ceiling->measured_gbs, (std::vector<double>{4000, 4800}));
  EXPECT_EQ(r.ceiling->threads, 0);
  EXPECT_DOUBLE_EQ(r.ceiling->steps_per_second,
                   4800e9 / model::weight_bytes(m, 4.0));
  // Through the record and back.
  const auto back = results::record_from_json(r.serialize());
  EXPECT_EQ(results::as<results::GenerationRun>(*back).ceiling->device,
            "cuda:0");
  EXPECT_FALSE(r.serialize().contains("no_bandwidth_ceiling"));
}

// gpt2-tiny generated by the device backend, asked for `device`, one
// thread, the host's bandwidth 30 GB/s; counts the times each is asked.
results::GenerationRun on_device_backend(const std::string& device,
                                         DeviceMeasures measures,
                                         int& device_asked, int& host_asked) {
  double clock = 0;
  DeviceBackend b(clock, device_asked, measures);
  results::RunRequest request;
  request.options.device = device;
  request.options.threads = 1;
  return run_generation(b, model::zoo::get("gpt2-tiny"), request, asked().asked,
                        host_bandwidth(host_asked));
}

// A device engine that measures nothing, or fails to: no ceiling (never
// the host's), the record saying why, and the run itself kept.
TEST(Generation, ADeviceNotMeasuredLeavesNoCeilingAndSaysWhy) {
  for (const auto measures : {DeviceMeasures::kNone, DeviceMeasures::kThrows}) {
    int device_asked = 0, host_asked = 0;
    const auto r =
        on_device_backend("cuda:0", measures, device_asked, host_asked);
    ASSERT_EQ(r.state, results::State::kOk) << r.message;
    EXPECT_EQ(host_asked, 0);
    EXPECT_EQ(device_asked, 2);
    EXPECT_FALSE(r.ceiling.has_value());
    EXPECT_EQ(r.no_ceiling,
              "the device engine did not measure the bandwidth of cuda:0 "
              "(it measures none, or it failed)");
    const auto back = results::as<results::GenerationRun>(
        *results::record_from_json(r.serialize()));
    EXPECT_FALSE(back.ceiling.has_value());
    EXPECT_EQ(back.no_ceiling, r.no_ceiling);
  }
}

// Asked for the host, an engine that says it ran on a GPU: the host's
// measurements bound nothing it read (no ceiling, and why), and the
// device is never asked, as on any run asked for the host.
TEST(Generation, AnEngineOffTheAskedMemoryGetsNoCeiling) {
  int device_asked = 0, host_asked = 0;
  const auto r =
      on_device_backend("cpu", DeviceMeasures::kYes, device_asked, host_asked);
  ASSERT_EQ(r.state, results::State::kOk) << r.message;
  EXPECT_EQ(device_asked, 0);
  EXPECT_GE(host_asked, 1);
  EXPECT_FALSE(r.ceiling.has_value());
  EXPECT_EQ(r.no_ceiling,
            "asked for cpu, the engine ran on cuda:0: the bandwidth measured "
            "was not of the memory it read");
}

TEST(Generation, RequestBoundsNameTheField) {
  results::GenerationRequest g;
  EXPECT_EQ(results::generation_request_problem(g), "");
  g.new_tokens = 1;
  EXPECT_NE(results::generation_request_problem(g).find("new_tokens 1"),
            std::string::npos);
  g = {};
  g.batch = results::kMaxGenerationBatch + 1;
  EXPECT_NE(results::generation_request_problem(g).find("batch"),
            std::string::npos);
}

}  // namespace
}  // namespace nnbench::bench
