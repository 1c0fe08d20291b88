// LoadGen's token-latency mode (server): a generator with known times per
// prompt and per token, VALID within the bounds and below capacity,
// INVALID naming the bound it misses.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "backend/generator.h"
#include "inference/loadgen_run.h"
#include "inference/settings.h"
#include "model/zoo/zoo.h"
#include "scripted_backend.h"
#include "util/error.h"

namespace nnbench::inference {
namespace {

void sleep_for(double seconds) {
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

class SleepingGenerator : public backend::Generator {
 public:
  SleepingGenerator(double prompt, double token)
      : prompt_(prompt), token_(token) {}
  std::vector<int64_t> prefill(
      const std::vector<std::vector<int64_t>>& prompts) override {
    sleep_for(prompt_);
    return std::vector<int64_t>(prompts.size(), 1);
  }
  std::vector<int64_t> decode(const std::vector<int64_t>& tokens) override {
    sleep_for(token_);
    return tokens;
  }
  backend::Effective effective() const override {
    return test::effective_on("cpu");
  }

 private:
  double prompt_, token_;
};

class SleepingBackend : public test::ScriptedBackend {
 public:
  SleepingBackend(double prompt, double token)
      : ScriptedBackend(test::Script{}), prompt_(prompt), token_(token) {}
  std::unique_ptr<backend::Generator> generator(
      const model::Model& m, const backend::Options&,
      const backend::GenerationShape& shape) override {
    shape_ = shape;
    return std::make_unique<SleepingGenerator>(prompt_, token_);
  }
  backend::GenerationShape shape_;

 private:
  double prompt_, token_;
};

// 1 ms to the first token, 0.5 ms for each of the 2 after: 2 ms a sample,
// about 500 samples/s on one copy.
results::InferenceRun serve(double qps, double ttft_ms, double tpot_ms,
                            double seconds) {
  SleepingBackend b(0.001, 0.0005);
  Settings s;
  s.scenario = Scenario::kServer;
  for (const auto& [k, v] :
       std::map<std::string, std::string>{{"token_latencies", "true"},
                                          {"prompt", "8"},
                                          {"new_tokens", "3"},
                                          {"ttft_ms", std::to_string(ttft_ms)},
                                          {"tpot_ms", std::to_string(tpot_ms)},
                                          {"performance_samples", "4"}})
    apply_setting(s, k, v);
  s.target_qps = qps;
  s.min_queries = 50;
  s.min_duration_seconds = seconds;
  results::RunRequest r;
  r.backend = "scripted";
  r.options.threads = 1;
  r.contention.rule.max_excess_load = 4;  // ctest runs beside other tests
  r.contention.rule.max_steal_fraction = 1;
  auto out = run(b, model::zoo::get("gpt2-tiny"), "gpt2-tiny", r, s, {});
  EXPECT_EQ(b.shape_.prompt, 8);
  EXPECT_EQ(b.shape_.new_tokens, 3);
  return out;
}

TEST(TokenLatencies, ValidBelowCapacityWithinTheBounds) {
  // Half the capacity for 2 s: past the 459 queries LoadGen's early
  // stopping needs at p99 with none over the bound.
  const auto r = serve(250, 50, 20, 2);
  ASSERT_EQ(r.state, results::State::kOk) << r.message;
  EXPECT_TRUE(r.loadgen_valid) << r.loadgen_summary;
  ASSERT_TRUE(r.tokens.has_value());
  const auto& t = *r.tokens;
  EXPECT_EQ(t.prompt, 8);
  EXPECT_EQ(t.new_tokens, 3);
  EXPECT_DOUBLE_EQ(t.ttft_bound, 0.05);
  EXPECT_DOUBLE_EQ(t.tpot_bound, 0.02);
  // Never under one prompt's or one token's sleep; under the bounds at
  // half the capacity.
  EXPECT_GE(t.ttft, 0.001);
  EXPECT_LT(t.ttft, 0.05);
  EXPECT_GE(t.tpot, 0.0005);
  EXPECT_LT(t.tpot, 0.02);
  EXPECT_GE(t.ttft_mean, 0.001);
  // Tokens/s as completed: 3 tokens a sample at about 250 samples/s.
  EXPECT_GT(t.tokens_per_second, 3 * 250 * 0.5);
  EXPECT_LT(t.tokens_per_second, 3 * 250 * 1.5);
  EXPECT_TRUE(r.validity.valid()) << r.validity.summary();
}

TEST(TokenLatencies, ATokenSlowerThanItsBoundIsInvalid) {
  const auto r = serve(250, 50, 0.2, 1);
  ASSERT_EQ(r.state, results::State::kOk) << r.message;
  EXPECT_FALSE(r.loadgen_valid);
  ASSERT_FALSE(r.loadgen_reasons.empty());
  EXPECT_NE(r.loadgen_reasons[0].find("TPOT"), std::string::npos)
      << r.loadgen_reasons[0];
  EXPECT_FALSE(r.validity.valid());
}

TEST(TokenLatencies, ArrivalsAboveCapacityMissTheFirstTokenBound) {
  // Twice the capacity: the queue only grows, and with it the wait for a
  // first token; each later token still takes its 0.5 ms.
  const auto r = serve(1000, 50, 20, 1);
  ASSERT_EQ(r.state, results::State::kOk) << r.message;
  EXPECT_FALSE(r.loadgen_valid);
  ASSERT_TRUE(r.tokens.has_value());
  EXPECT_GT(r.tokens->ttft, 0.05);
  EXPECT_LT(r.tokens->tpot, 0.02);
  ASSERT_FALSE(r.loadgen_reasons.empty());
  EXPECT_NE(r.loadgen_reasons[0].find("TTFT"), std::string::npos)
      << r.loadgen_reasons[0];
}

TEST(TokenLatencies, SettingsOutsideTheServerOrWithoutTheModeAreErrors) {
  Settings s;
  apply_setting(s, "token_latencies", "true");
  EXPECT_THROW(check(s), Error);  // single-stream
  Settings t;
  t.scenario = Scenario::kServer;
  t.target_qps = 1;
  apply_setting(t, "prompt", "16");
  EXPECT_THROW(check(t), Error);  // prompt without token_latencies
  EXPECT_THROW(apply_setting(t, "new_tokens", "1"), Error);
  EXPECT_THROW(apply_setting(t, "ttft_ms", "0"), Error);
  EXPECT_THROW(apply_setting(t, "prompt", "65537"), Error);
}

TEST(TokenLatencies, AModelThatDoesNotGenerateIsUnimplemented) {
  SleepingBackend b(0.001, 0.001);
  Settings s;
  s.scenario = Scenario::kServer;
  s.target_qps = 10;
  apply_setting(s, "token_latencies", "true");
  results::RunRequest r;
  r.backend = "scripted";
  const auto out = run(b, model::zoo::get("bert-tiny"), "bert-tiny", r, s, {});
  EXPECT_EQ(out.state, results::State::kUnimplemented) << out.message;
}

}  // namespace
}  // namespace nnbench::inference
