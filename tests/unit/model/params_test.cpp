// Canonical parameters: they account for every counted parameter, and their
// seeded values depend only on the seed and the parameter's name.
#include "model/params.h"

#include <gtest/gtest.h>

#include <cmath>

#include "../../common/zoo_counts.h"
#include "model/analysis.h"
#include "model/zoo/zoo.h"

namespace nnbench::model {
namespace {

TEST(Params, SpecsAccountForEveryParameter) {
  for (const auto& name : zoo::names()) {
    SCOPED_TRACE(name);
    const Model m = zoo::get(name);
    int64_t n = 0;
    for (const auto& s : param_specs(m)) n += numel(s.shape);
    EXPECT_EQ(n, test::zoo_expected().at(name).params);
  }
}

TEST(Params, SeededByNameNotByOrder) {
  const Model m = zoo::get("mnist-cnn");
  const auto a = init_params(m, 7), b = init_params(m, 7),
             c = init_params(m, 8);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].data, b[i].data);
  EXPECT_NE(a[0].data, c[0].data);
  // Dropping the first layer's parameters leaves the others unchanged.
  Model m2 = m;
  m2.layers[0].bias = false;
  const auto d = init_params(m2, 7);
  EXPECT_EQ(d.back().spec.name, a.back().spec.name);
  EXPECT_EQ(d.back().data, a.back().data);
}

TEST(Params, UniformBoundsFollowFanIn) {
  const Model m = zoo::get("mnist-mlp");
  const auto p = init_params(m, 1);
  ASSERT_EQ(p[0].spec.shape, (Shape{512, 784}));
  const float bound = 1.0f / std::sqrt(784.0f);
  float lo = 1, hi = -1;
  for (float x : p[0].data) lo = std::min(lo, x), hi = std::max(hi, x);
  EXPECT_GE(lo, -bound);
  EXPECT_LE(hi, bound);
  EXPECT_LT(lo, -0.9f * bound);  // actually spread over the range
  EXPECT_GT(hi, 0.9f * bound);
}

TEST(Params, LstmNamesAndShapes) {
  const auto specs = param_specs(zoo::get("imdb-bilstm"));
  std::vector<std::string> names;
  for (const auto& s : specs) names.push_back(s.name);
  const std::vector<std::string> want = {
      "embedding_0.weight",   "lstm.l0.w_ih",         "lstm.l0.w_hh",
      "lstm.l0.b_ih",         "lstm.l0_reverse.w_ih", "lstm.l0_reverse.w_hh",
      "lstm.l0_reverse.b_ih", "dense_1.weight",       "dense_1.bias"};
  EXPECT_EQ(names, want);
  EXPECT_EQ(specs[1].shape, (Shape{256, 128}));
}

}  // namespace
}  // namespace nnbench::model
