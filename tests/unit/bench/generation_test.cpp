// The generation harness on a fake generator whose every call advances a
// fake clock by a known time: the figures are then exact, computed here by
// hand.
#include "bench/generation.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "bench/statistics.h"
#include "data/synthetic.h"
#include "model/generation.h"
#include "model/zoo/zoo.h"
#include "results/kinds.h"
#include "scripted_backend.h"

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
  backend::Effective effective() const override {
    return test::effective_on("cpu");
  }
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

// The quick reads between repetitions are more measurements of what the
// machine gave: the best of them all is the ceiling, each is recorded.
TEST(Generation, TheReadsBetweenRepetitionsCanRaiseTheCeiling) {
  auto r = asked();
  r.ttft_seconds = {0.2, 0.2, 0.2};
  // TPOT 0.1, 0.2 and 0.4 s: the median 5 steps/s.
  r.itl_seconds = {std::vector<double>(8, 0.1), std::vector<double>(8, 0.2),
                   std::vector<double>(8, 0.4)};
  r.weight_bytes = 1e9;  // a GB/s allows as many steps/s
  machine::Bandwidth bw;
  bw.read_gbs = 20;
  bw.threads = 2;
  summarize_generation(r, {bw}, {16, 40, 0, 12});
  ASSERT_TRUE(r.ceiling.has_value());
  EXPECT_DOUBLE_EQ(r.ceiling->bandwidth_gbs, 40);
  EXPECT_DOUBLE_EQ(r.ceiling->steps_per_second, 40);
  EXPECT_NEAR(r.ceiling->fraction, 5.0 / 40, 1e-12);
  EXPECT_EQ(r.ceiling->measured_gbs, (std::vector<double>{20}));
  // A read that failed (0) is not one.
  EXPECT_EQ(r.ceiling->between_gbs, (std::vector<double>{16, 40, 12}));
  EXPECT_EQ(r.ceiling->threads, 2);
  const auto back = results::as<results::GenerationRun>(
      *results::record_from_json(r.serialize()));
  EXPECT_EQ(back.ceiling->between_gbs, r.ceiling->between_gbs);
  // Below the whole measurements they change nothing but the record.
  summarize_generation(r, {bw}, {16, 8});
  EXPECT_DOUBLE_EQ(r.ceiling->bandwidth_gbs, 20);
  EXPECT_NEAR(r.ceiling->fraction, 5.0 / 20, 1e-12);
  // Without a whole measurement there is no ceiling: the reads alone are
  // not one (they bound nothing the record can name the threads of).
  summarize_generation(r, {}, {16, 40});
  EXPECT_FALSE(r.ceiling.has_value());
  // A record written before them has none.
  summarize_generation(r, {bw});
  EXPECT_FALSE(r.serialize()["bandwidth_ceiling"].contains("between_gbs"));
}

// Measurements between repetitions happen outside the times: right before
// the first timed repetition and after each, none around the warm-up.
TEST(Generation, MeasuresBetweenRepetitionsOutsideTheTimes) {
  double clock = 0;
  FakeGenerator g(clock, false);
  auto r = asked();
  std::vector<double> at;  // the clock at each measurement
  time_generation(
      g, data::synthetic_prompts(2, 16, 50, 1), r, [&] { return clock; },
      [&] {
        at.push_back(clock);
        clock += 5;  // a slow measurement: in no time of the run
      });
  EXPECT_EQ(g.prefills, 4);
  // Each generation: 0.2 s prefill and 6 x 0.01 + 2 x 0.04 s of steps.
  const double gen = 0.34;
  ASSERT_EQ(at.size(), 4u);
  for (int i = 0; i < 4; ++i)
    EXPECT_NEAR(at[i], (i + 1) * gen + 5 * i, 1e-9) << i;
  ASSERT_EQ(r.ttft_seconds.size(), 3u);
  for (int rep = 0; rep < 3; ++rep) {
    EXPECT_NEAR(r.ttft_seconds[rep], 0.2, 1e-9);
    EXPECT_NEAR(mean(r.itl_seconds[rep]), 0.0175, 1e-9);
  }
}

// Without a warm-up a plain engine is read before its first generation
// once, not twice (it is first asked whether it times itself).
TEST(Generation, WithoutAWarmUpAPlainEngineIsReadOnceBeforeItsFirst) {
  double clock = 0;
  FakeGenerator g(clock, false);
  auto r = asked();
  r.asked.warmup = 0;
  std::vector<double> at;
  time_generation(
      g, data::synthetic_prompts(2, 16, 50, 1), r, [&] { return clock; },
      [&] { at.push_back(clock); });
  EXPECT_EQ(g.prefills, 3);
  ASSERT_EQ(at.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(at[i], 0.34 * i, 1e-9) << i;
  ASSERT_EQ(r.ttft_seconds.size(), 3u);
}

// An engine that times itself (a framework worker), called as the harness
// asks: once with all repetitions, or one repetition a call with the
// measurements between the calls; `partial` answers the first call only.
class SelfTimed : public FakeGenerator {
 public:
  SelfTimed(double& clock, bool partial)
      : FakeGenerator(clock, false), partial_(partial) {}
  std::optional<backend::GenerationTimes> timed(
      const std::vector<std::vector<int64_t>>&, int64_t new_tokens, int warmup,
      int repetitions) override {
    calls.push_back({warmup, repetitions});
    log.push_back("call");
    if (partial_ && calls.size() > 1) return std::nullopt;
    backend::GenerationTimes t;
    for (int rep = 0; rep < repetitions; ++rep) {
      t.ttft.push_back(0.2);
      t.itl.emplace_back(new_tokens - 1, 0.01 * (rep + 1));
      t.tokens.emplace_back(new_tokens, 3);
    }
    return t;
  }
  std::vector<std::pair<int, int>> calls;  // warmup, repetitions
  std::vector<std::string> log;            // "call"s, and "read"s

 private:
  bool partial_;
};

TEST(Generation, AnEngineThatTimesItselfIsAskedOneRepetitionACall) {
  double clock = 0;
  SelfTimed whole(clock, false);
  auto r = asked();
  time_generation(whole, data::synthetic_prompts(2, 16, 50, 1), r);
  EXPECT_EQ(whole.calls, (std::vector<std::pair<int, int>>{{1, 3}}));
  ASSERT_EQ(r.itl_seconds.size(), 3u);
  EXPECT_NEAR(r.itl_seconds[2][0], 0.03, 1e-12);

  SelfTimed one(clock, false);
  r = asked();
  int measured = 0;
  time_generation(one, data::synthetic_prompts(2, 16, 50, 1), r, steady_seconds,
                  [&] { ++measured; });
  // The warm-up's last generation timed and dropped: four generations, as
  // in one call; every timed one its call's first repetition.
  EXPECT_EQ(one.calls,
            (std::vector<std::pair<int, int>>{{0, 1}, {0, 1}, {0, 1}, {0, 1}}));
  EXPECT_EQ(measured, 4);
  ASSERT_EQ(r.itl_seconds.size(), 3u);
  for (const auto& itl : r.itl_seconds) EXPECT_NEAR(itl[0], 0.01, 1e-12);
  EXPECT_EQ(r.tokens, std::vector<int64_t>(9, 3));

  // Two warm-ups: one untimed and one timed and dropped in the first call;
  // none: the reads around every call.
  for (int warmup : {2, 0}) {
    SelfTimed self(clock, false);
    r = asked();
    r.asked.warmup = warmup;
    time_generation(self, data::synthetic_prompts(2, 16, 50, 1), r,
                    steady_seconds, [&] { self.log.push_back("read"); });
    std::vector<std::pair<int, int>> want(3, {0, 1});
    std::vector<std::string> order{"read", "call", "read", "call",
                                   "read", "call", "read"};
    if (warmup > 0) {
      want.insert(want.begin(), {warmup - 1, 1});
      order.insert(order.begin(), "call");
    }
    EXPECT_EQ(self.calls, want) << warmup;
    EXPECT_EQ(self.log, order) << warmup;
    EXPECT_EQ(r.ttft_seconds.size(), 3u);
  }

  SelfTimed partial(clock, true);
  r = asked();
  try {
    time_generation(partial, data::synthetic_prompts(2, 16, 50, 1), r,
                    steady_seconds, [] {});
    FAIL() << "expected a RunError";
  } catch (const results::RunError& e) {
    EXPECT_EQ(e.state, results::State::kFailed);
    EXPECT_NE(std::string(e.what()).find("repetition 1 alone"),
              std::string::npos)
        << e.what();
  }
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
    return test::effective_on("cuda:0");
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

// A backend generating on the host with FakeGenerator (one thread).
class HostBackend : public DeviceBackend {
 public:
  HostBackend(double& clock, int& asked)
      : DeviceBackend(clock, asked), clock_(clock) {}
  std::unique_ptr<backend::Generator> generator(
      const model::Model&, const backend::Options&,
      const backend::GenerationShape&) override {
    return std::make_unique<FakeGenerator>(clock_, false);
  }

 private:
  double& clock_;
};

// On the host the probe is made once at the run's threads and read before
// the first repetition and after each; the best read can be the ceiling.
TEST(Generation, OnTheHostTheBandwidthIsReadBetweenRepetitions) {
  double clock = 0;
  int device_asked = 0, host_asked = 0, made = 0;
  HostBackend b(clock, device_asked);
  results::RunRequest request;
  request.options.threads = 1;
  const std::vector<double> reads{24, 36, 27, 33};
  size_t next = 0;
  const ReadProbeAt probe_at = [&](int threads, double weight_bytes) {
    ++made;
    EXPECT_EQ(threads, 1);
    EXPECT_DOUBLE_EQ(weight_bytes,
                     model::weight_bytes(model::zoo::get("gpt2-tiny"), 4.0));
    return std::function<double()>([&] { return reads.at(next++); });
  };
  const auto r =
      run_generation(b, model::zoo::get("gpt2-tiny"), request, asked().asked,
                     host_bandwidth(host_asked), probe_at);
  ASSERT_EQ(r.state, results::State::kOk) << r.message;
  EXPECT_EQ(made, 1);
  EXPECT_EQ(next, 4u);
  EXPECT_EQ(host_asked, 2);  // the whole measurement before and after
  EXPECT_EQ(device_asked, 0);
  ASSERT_TRUE(r.ceiling.has_value());
  EXPECT_EQ(r.ceiling->between_gbs, reads);
  EXPECT_EQ(r.ceiling->measured_gbs, (std::vector<double>{30, 30}));
  EXPECT_DOUBLE_EQ(r.ceiling->bandwidth_gbs, 36);
  EXPECT_NEAR(r.ceiling->fraction,
              (1 / r.tpot.median) / (36e9 / r.weight_bytes), 1e-12);

  // A probe that cannot be made: the whole measurements alone.
  host_asked = 0;
  const auto without = run_generation(
      b, model::zoo::get("gpt2-tiny"), request, asked().asked,
      host_bandwidth(host_asked), [](int, double) -> std::function<double()> {
        throw std::runtime_error("no");
      });
  ASSERT_EQ(without.state, results::State::kOk) << without.message;
  ASSERT_TRUE(without.ceiling.has_value());
  EXPECT_TRUE(without.ceiling->between_gbs.empty());
  EXPECT_DOUBLE_EQ(without.ceiling->bandwidth_gbs, 30);
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
