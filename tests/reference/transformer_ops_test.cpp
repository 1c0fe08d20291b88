// The transformer ops of the oracle against values worked out by hand (the
// expected numbers come from the definitions, evaluated with Python's math
// module, not from these kernels); their gradients are checked against
// central differences in gradcheck_test.cpp.
#include <gtest/gtest.h>

#include <cmath>

#include "engines/reference/network.h"
#include "engines/reference/ops/transformer.h"
#include "model/analysis.h"
#include "model/zoo/builder.h"

namespace nnbench::engines::reference {
namespace {

using model::zoo::Builder;

void expect_near(const std::vector<double>& got,
                 const std::vector<double>& want, double tol = 1e-12) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

TEST(TransformerOps, LayerNormUsesTheBiasedVarianceThenScalesAndShifts) {
  // [1, 2, 3, 4]: mean 2.5, variance 1.25, so x - 2.5 over sqrt(1.25).
  Tensor<double> x({1, 4}), g({4}, 2.0), b({4}, 1.0), y;
  x.data = {1, 2, 3, 4};
  ops::LayerNormState<double> st;
  ops::layer_norm_forward(x, g, b, 0.0, st, y);
  const double a = 1.3416407864998738, c = a / 3;  // 1.5 and 0.5 / sqrt(1.25)
  expect_near(y.data, {1 - 2 * a, 1 - 2 * c, 1 + 2 * c, 1 + 2 * a});
}

TEST(TransformerOps, GeluExactAndTanhForms) {
  Tensor<double> x({3}), y;
  x.data = {1, -1, 2.5};
  ops::gelu_forward(x, false, y);
  expect_near(y.data,
              {0.8413447460685429, -0.15865525393145707, 2.4844758366855597});
  ops::gelu_forward(x, true, y);
  expect_near(y.data,
              {0.8411919906082768, -0.15880800939172324, 2.484915733910001});
}

TEST(TransformerOps, PositionsAddTheFirstRowsOfTheTable) {
  Tensor<double> x({2, 2, 1}), table({3, 1}), y;
  x.data = {1, 2, 3, 4};
  table.data = {10, 20, 30};  // the third position is unused at length 2
  ops::positions_forward(x, table, y);
  expect_near(y.data, {11, 22, 13, 24});
}

// q = k = v = x (identity projections, no biases), so the weights are
// softmaxes of x_i . x_j / sqrt(D).
struct Identity {
  Tensor<double> w_in{{6, 2}}, w_out{{2, 2}};
  Identity() {
    for (int r = 0; r < 6; ++r) w_in[r * 2 + r % 2] = 1;
    w_out.data = {1, 0, 0, 1};
  }
  ops::AttentionParams<double> params() const {
    return {w_in, nullptr, w_out, nullptr};
  }
};

TEST(TransformerOps, AttentionOneHeadPlainAndCausal) {
  Tensor<double> x({1, 2, 2}), y;
  x.data = {1, 0, 0, 1};
  const Identity id;
  ops::AttentionState<double> st;
  // Scores [1, 0] / sqrt(2) per row: weight sigmoid(1 / sqrt(2)) on the
  // position itself.
  const double p = 0.6697615493266569;
  ops::attention_forward(x, id.params(), 1, false, st, y);
  expect_near(y.data, {p, 1 - p, 1 - p, p});
  // Causal: the first position sees only itself.
  ops::attention_forward(x, id.params(), 1, true, st, y);
  expect_near(y.data, {1, 0, 1 - p, p});
}

TEST(TransformerOps, AttentionHeadsReadTheirOwnColumns) {
  // Two heads of width 1: head 0 reads column 0 ([1, 0] over the two
  // positions), head 1 column 1 ([0, 1]). Position 0 of head 0 scores
  // [1, 0] (sigmoid(1) on itself), position 1 scores [0, 0] (a half
  // each); head 1 the other way round.
  Tensor<double> x({1, 2, 2}), y;
  x.data = {1, 0, 0, 1};
  const Identity id;
  ops::AttentionState<double> st;
  const double s = 0.7310585786300049;
  ops::attention_forward(x, id.params(), 2, false, st, y);
  expect_near(y.data, {s, 0.5, 0.5, s});
}

TEST(TransformerOps, AttentionTakesQueryKeyAndValueInThatOrder) {
  // Width 1: q = x, k = 2x, v = 3x (rows of the in projection in order),
  // x = [1, -1]. Scores q_i k_j = 2 x_i x_j: [2, -2] at position 0, [-2, 2]
  // at 1, so each position weighs itself by p = sigmoid(4) and reads
  // 3 (2p - 1) with its own sign. Any other order of the rows gives other
  // numbers (v = 2x: 2 (2p' - 1)).
  Tensor<double> x({1, 2, 1}), w_in({3, 1}), w_out({1, 1}, 1.0), y;
  x.data = {1, -1};
  w_in.data = {1, 2, 3};
  ops::AttentionState<double> st;
  const ops::AttentionParams<double> p{w_in, nullptr, w_out, nullptr};
  const double v = 2.892082740227451;  // 3 (2 sigmoid(4) - 1)
  ops::attention_forward(x, p, 1, false, st, y);
  expect_near(y.data, {v, -v});
  // Causal: position 0 reads only its own value, 3.
  ops::attention_forward(x, p, 1, true, st, y);
  expect_near(y.data, {3, -v});
}

TEST(TransformerOps, TiedLinearReadsTheEmbeddingTable) {
  model::Model m;
  m.name = "tied";
  m.input = {{2}, model::DType::kInt64, 3};
  Builder b(m);
  const int e = b.embedding(-1, 3, 2);
  b.tied_linear(e, e);
  // Shapes and counts: the output is [T, vocab] and only the table counts.
  EXPECT_EQ(model::infer_shapes(m).back(), (model::Shape{2, 3}));
  EXPECT_EQ(model::analyze(m).params, 6);
  Network<double> net(m, 1);
  ASSERT_EQ(net.params().size(), 1u);
  net.params()[0].data = {1, 0, 0, 2, 1, 1};  // rows: tokens 0, 1, 2
  Batch<double> batch;
  batch.ids = Tensor<int64_t>({1, 2});
  batch.ids.data = {1, 2};
  batch.labels = Tensor<int64_t>({1, 2});
  const auto& y = net.forward(batch, false);
  // Token 1 = [0, 2] against rows [1,0], [0,2], [1,1]: 0, 4, 2; token 2 =
  // [1, 1]: 1, 2, 2.
  expect_near(y.data, {0, 4, 2, 1, 2, 2});
}

TEST(TransformerOps, ShapesRefuseWhatCannotRun) {
  model::Model m;
  m.name = "bad";
  m.input.shape = {4, 6};
  Builder b(m);
  b.attention(-1, 4, false);  // 4 heads do not divide 6
  EXPECT_THROW(model::infer_shapes(m), Error);
  model::Model p;
  p.name = "long";
  p.input = {{5}, model::DType::kInt64, 7};
  Builder c(p);
  c.positions(c.embedding(-1, 7, 2), 4);  // 4 positions for 5 tokens
  EXPECT_THROW(model::infer_shapes(p), Error);
  model::Model t;
  t.name = "untied";
  t.input.shape = {3, 2};
  Builder d(t);
  d.tied_linear(d.linear(-1, 2), 0);  // layer 0 is no embedding
  EXPECT_THROW(model::infer_shapes(t), Error);
}

}  // namespace
}  // namespace nnbench::engines::reference
