#include <gtest/gtest.h>

#include "results/generation.h"
#include "results/kinds.h"
#include "scenarios/scenario.h"
#include "scripted_backend.h"

namespace nnbench::scenarios {
namespace {

TEST(GenerationScenario, SettingsNameTheirProblem) {
  const auto s = make_scenario("generation");
  std::string which;
  EXPECT_EQ(s->settings_problem({{"prompt", "512"},
                                 {"new_tokens", "128"},
                                 {"warmup", "0"},
                                 {"repetitions", "3"}},
                                &which),
            "");
  EXPECT_NE(s->settings_problem({{"temperature", "1"}}, &which)
                .find("'temperature' is not one"),
            std::string::npos);
  EXPECT_EQ(which, "temperature");
  EXPECT_NE(
      s->settings_problem({{"prompt", "12x"}}, &which).find("whole number"),
      std::string::npos);
  EXPECT_EQ(which, "prompt");
  EXPECT_NE(s->settings_problem({{"new_tokens", "1"}}, &which)
                .find("new_tokens 1 is outside [2, 65536]"),
            std::string::npos);
  EXPECT_NE(s->settings_problem({{"repetitions", "99999999999"}}, &which)
                .find("repetitions"),
            std::string::npos);
}

TEST(GenerationScenario, ABackendWithoutAGeneratorIsUnimplemented) {
  test::ScriptedBackend b({});
  Case c;
  c.model = "gpt2-tiny";
  c.request.backend = "scripted";
  c.request.batch = 1;
  c.settings = {{"prompt", "4"}, {"new_tokens", "3"}, {"repetitions", "1"}};
  const auto r = make_scenario("generation")->run(b, c, {});
  EXPECT_EQ(r->kind, "generation");
  EXPECT_EQ(r->state, results::State::kUnimplemented) << r->message;
  EXPECT_NE(r->message.find("generation"), std::string::npos) << r->message;
  // Nothing measured: the store's columns stay empty, not zero figures.
  EXPECT_EQ(r->headline().median_seconds, 0);
  const auto j = r->serialize();
  EXPECT_FALSE(j.contains("ttft_seconds"));
  EXPECT_FALSE(j.contains("bandwidth_ceiling"));
}

}  // namespace
}  // namespace nnbench::scenarios
