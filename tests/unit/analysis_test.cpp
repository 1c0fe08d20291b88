// Shape inference rules that the zoo relies on, checked on tiny models.
#include "model/analysis.h"

#include <gtest/gtest.h>

#include "model/zoo/builder.h"
#include "util/error.h"

namespace nnbench::model {
namespace {

Model image_model(Shape input) {
  Model m;
  m.name = "t";
  m.input.shape = std::move(input);
  return m;
}

TEST(Analysis, CeilModePoolingDropsAWindowStartingInPadding) {
  Model m = image_model({3, 32, 32});
  zoo::Builder b(m);
  b.max_pool(-1, 3, 2, 0, /*ceil_mode=*/true);  // 32 -> 16 (cuda-convnet)
  b.max_pool(b.last(), 3, 2, 0, false);         // 16 -> 7
  b.max_pool(b.last(), 3, 2, 1, true);          // 7 -> 4
  const auto s = infer_shapes(m);
  EXPECT_EQ(s[0], (Shape{3, 16, 16}));
  EXPECT_EQ(s[1], (Shape{3, 7, 7}));
  EXPECT_EQ(s[2], (Shape{3, 4, 4}));
}

TEST(Analysis, ConvParamsAndFlops) {
  Model m = image_model({4, 8, 8});
  zoo::Builder b(m);
  b.groups(2).conv(-1, 6, 3, 1, 1);
  const Cost c = analyze(m);
  EXPECT_EQ(c.params, 6 * 2 * 3 * 3 + 6);
  // 6x8x8 outputs, each 2*2*9 FLOPs of multiply-adds plus a bias add.
  EXPECT_DOUBLE_EQ(c.forward_flops, 6 * 8 * 8 * (2.0 * 2 * 9 + 1));
  EXPECT_DOUBLE_EQ(c.train_flops, 3 * c.forward_flops);
}

TEST(Analysis, LstmParamsFollowTheBiasConvention) {
  Model m;
  m.name = "t";
  m.input = {{10}, DType::kInt64, 100};
  Layer e;
  e.name = "e";
  e.op = Op::kEmbedding;
  e.vocab = 100;
  e.out = 8;
  Layer l;
  l.name = "l";
  l.op = Op::kLstm;
  l.out = 4;
  l.num_layers = 2;
  l.bidirectional = true;
  m.layers = {e, l};
  const int64_t one = 2 * (4 * 4 * (8 + 4) + 16) + 2 * (4 * 4 * (8 + 4) + 16);
  EXPECT_EQ(analyze(m).params, 800 + one);
  m.layers[1].lstm_biases = 2;
  EXPECT_EQ(analyze(m).params, 800 + one + 4 * 16);
  EXPECT_EQ(infer_shapes(m).back(), (Shape{10, 8}));
  m.layers[1].sequences = false;
  EXPECT_EQ(infer_shapes(m).back(), (Shape{8}));
}

TEST(Analysis, MismatchesNameTheLayer) {
  Model m = image_model({3, 8, 8});
  zoo::Builder b(m);
  const int a = b.conv(-1, 4, 3, 1, 1, "left");
  const int c = b.conv(-1, 5, 3, 1, 1, "right");
  Layer sum;
  sum.op = Op::kAdd;
  b.add(sum, {a, c}, "sum");
  try {
    infer_shapes(m);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("layer 'sum' (add)"),
              std::string::npos)
        << e.what();
  }
}

TEST(Analysis, TokenInputsNeedAnEmbedding) {
  Model m;
  m.name = "t";
  m.input = {{10}, DType::kInt64, 100};
  zoo::Builder b(m);
  b.linear(-1, 4, "fc");
  EXPECT_THROW(infer_shapes(m), Error);
}

TEST(Analysis, ForwardReferencesAreRejected) {
  Model m = image_model({3, 8, 8});
  zoo::Builder b(m);
  b.relu(-1);
  m.layers[0].inputs = {0};
  EXPECT_THROW(infer_shapes(m), Error);
}

}  // namespace
}  // namespace nnbench::model
