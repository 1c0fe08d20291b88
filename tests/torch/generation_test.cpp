// LibTorch's KV-cache generation against the oracle, which recomputes the
// whole sequence for every token.
#include <gtest/gtest.h>

#include "backend/generator.h"
#include "backend/registry.h"
#include "model/zoo/zoo.h"
#include "util/error.h"
#include "verify/greedy.h"

namespace nnbench {
namespace {

TEST(TorchGeneration, GreedyTokensAreTheOraclesOnGpt2Tiny) {
  auto torch = backend::make_backend("torch");
  auto oracle = backend::make_backend("reference");
  const model::Model m = model::zoo::get("gpt2-tiny");
  for (uint64_t seed : {1, 2, 3}) {
    backend::Options o;
    o.seed = seed;
    o.threads = 1;
    const auto c = verify::check_greedy_tokens(*oracle, *torch, m, o);
    ASSERT_TRUE(c.has_value());
    EXPECT_TRUE(c->pass) << "seed " << seed << ": " << c->error
                         << " of the tokens differ";
  }
}

TEST(TorchGeneration, RowsOfABatchAreDecodedApart) {
  // The same prompt alone and as the second row beside another gives the
  // same tokens: rows share no cache entries.
  auto torch = backend::make_backend("torch");
  const model::Model m = model::zoo::get("gpt2-tiny");
  backend::Options o;
  o.threads = 1;
  const std::vector<int64_t> a = {5, 9, 1, 300, 44}, b = {17, 2, 2, 8, 511};
  auto alone = torch->generator(m, o, {1, 5, 6});
  auto pair = torch->generator(m, o, {2, 5, 6});
  std::vector<int64_t> x = alone->prefill({b});
  std::vector<int64_t> y = pair->prefill({a, b});
  for (int k = 0; k < 5; ++k) {
    ASSERT_EQ(y.size(), 2u);
    EXPECT_EQ(x.at(0), y[1]) << "token " << k;
    x = alone->decode(x);
    y = pair->decode(y);
  }
}

TEST(TorchGeneration, RefusesWhatItCannotRun) {
  auto torch = backend::make_backend("torch");
  backend::Options o;
  // An encoder: its attention is not causal.
  EXPECT_THROW(torch->generator(model::zoo::get("bert-tiny"), o, {1, 4, 4}),
               backend::Unimplemented);
  // More tokens than gpt2-tiny's 64 learned positions.
  EXPECT_THROW(torch->generator(model::zoo::get("gpt2-tiny"), o, {1, 60, 8}),
               Error);
  // Past the cache it was sized for.
  auto g = torch->generator(model::zoo::get("gpt2-tiny"), o, {1, 4, 2});
  auto next = g->decode(g->prefill({{1, 2, 3, 4}}));  // 5 of 6 positions
  next = g->decode(next);                             // 6 of 6
  EXPECT_THROW(g->decode(next), Error);
}

}  // namespace
}  // namespace nnbench
