// nnbench generate as a user runs it: what cannot generate is a usage error
// before anything runs; a generation writes its record.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_util.h"

namespace nnbench_cli_test {
namespace {

using nlohmann::json;

TEST_F(Cli, GenerateRefusesWhatCannotGenerateBeforeItRuns) {
  const std::string out = path("never.json");
  // An encoder: its attention sees later tokens.
  expect_usage_error(
      nnbench("generate --model bert-tiny --backend torch --out " + out),
      "not causal");
  // gpt2-tiny learns 64 positions: llama-bench's pp512 does not fit.
  expect_usage_error(
      nnbench("generate --model gpt2-tiny --backend torch --out " + out),
      "positions");
  expect_usage_error(nnbench("generate --model gpt2-tiny --new-tokens 1"),
                     "--new-tokens");
  expect_usage_error(nnbench("generate --model gpt2-tiny --batch 1025"),
                     "--batch");
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(Cli, GenerateWritesItsRecord) {
  const std::string out = path("gen.json");
  const Outcome o = nnbench(
      "generate --model gpt2-tiny --backend torch --prompt 8 --new-tokens 4 "
      "--repetitions 2 --warmup 0 --threads 1 --contention-max-load 4 "
      "--contention-max-steal 1 --out " +
      out);
  ASSERT_EQ(o.code, 0) << o.output;
  EXPECT_NE(o.output.find("TTFT ms"), std::string::npos) << o.output;
  const json j = json::parse(slurp(out));
  const json* rec = nullptr;
  for (const auto& r : j.at("results"))
    if (r.value("kind", "") == "generation") rec = &r;
  ASSERT_NE(rec, nullptr) << j.dump(1);
  EXPECT_EQ((*rec)["state"], "ok");
  EXPECT_EQ((*rec)["ttft_seconds_raw"].size(), 2u);
  EXPECT_EQ((*rec)["itl_seconds_raw"][0].size(), 3u);  // 4 new tokens
  EXPECT_EQ((*rec)["tokens"].size(), 4u);
  EXPECT_EQ((*rec)["generation"]["prompt_tokens"], 8);
}

}  // namespace
}  // namespace nnbench_cli_test
