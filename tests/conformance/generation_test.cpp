// KV-cache generation on every engine that generates (in-process and
// framework workers), against the oracle, which recomputes the whole
// sequence for every token: greedy decoding gives the same tokens on all.
#include <gtest/gtest.h>

#include <algorithm>

#include "backend/generator.h"
#include "backend/registry.h"
#include "model/zoo/zoo.h"
#include "util/error.h"
#include "verify/greedy.h"

namespace nnbench {
namespace {

std::vector<std::string> generating() {
  std::vector<std::string> out;
  const auto names = backend::backend_names();
  // A framework engine whose environment is not set up has nothing to run
  // (the conformance suite gives it no cases either).
  for (const char* b : {"torch", "onednn", "pytorch", "tensorflow", "jax",
                        "mxnet", "onnxruntime", "openvino"})
    if (std::find(names.begin(), names.end(), b) != names.end() &&
        backend::make_backend(b)->describe().unavailable.empty())
      out.push_back(b);
  return out;
}

class Generation : public ::testing::TestWithParam<std::string> {};

TEST_P(Generation, GreedyTokensAreTheOraclesOnGpt2Tiny) {
  auto engine = backend::make_backend(GetParam());
  auto oracle = backend::make_backend("reference");
  const model::Model m = model::zoo::get("gpt2-tiny");
  for (uint64_t seed : {1, 2, 3}) {
    backend::Options o;
    o.seed = seed;
    o.threads = 2;
    const auto c = verify::check_greedy_tokens(*oracle, *engine, m, o);
    ASSERT_TRUE(c.has_value());
    EXPECT_TRUE(c->pass) << "seed " << seed << ": " << c->error
                         << " of the tokens differ";
  }
}

TEST_P(Generation, RowsOfABatchAreDecodedApart) {
  // The same prompt alone and as the second row beside another gives the
  // same tokens: rows share no cache entries.
  auto engine = backend::make_backend(GetParam());
  const model::Model m = model::zoo::get("gpt2-tiny");
  backend::Options o;
  o.threads = 2;
  const std::vector<int64_t> a = {5, 9, 1, 300, 44}, b = {17, 2, 2, 8, 511};
  auto alone = engine->generator(m, o, {1, 5, 6});
  auto pair = engine->generator(m, o, {2, 5, 6});
  std::vector<int64_t> x = alone->prefill({b});
  std::vector<int64_t> y = pair->prefill({a, b});
  for (int k = 0; k < 5; ++k) {
    ASSERT_EQ(y.size(), 2u);
    EXPECT_EQ(x.at(0), y[1]) << "token " << k;
    x = alone->decode(x);
    y = pair->decode(y);
  }
}

TEST_P(Generation, RefusesWhatItCannotRun) {
  auto engine = backend::make_backend(GetParam());
  backend::Options o;
  // An encoder: its attention is not causal.
  EXPECT_THROW(engine->generator(model::zoo::get("bert-tiny"), o, {1, 4, 4}),
               backend::Unimplemented);
  // More tokens than gpt2-tiny's 64 learned positions.
  EXPECT_THROW(engine->generator(model::zoo::get("gpt2-tiny"), o, {1, 60, 8}),
               Error);
  auto g = engine->generator(model::zoo::get("gpt2-tiny"), o, {1, 4, 2});
  EXPECT_THROW(g->prefill({{1, 2, 3, 4, 5}}), Error);  // longer than sized
  EXPECT_THROW(g->prefill({{1, 2}, {3, 4}}), Error);   // two rows, sized 1
  // Past the cache it was sized for.
  auto next = g->decode(g->prefill({{1, 2, 3, 4}}));  // 5 of 6 positions
  EXPECT_THROW(g->decode({1, 2}), Error);             // two tokens, one row
  next = g->decode(next);                             // 6 of 6
  EXPECT_THROW(g->decode(next), Error);
}

INSTANTIATE_TEST_SUITE_P(Engines, Generation, ::testing::ValuesIn(generating()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace nnbench
