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

// A grouped conv: 6 filters of 4/2 = 2 channels x 3x3 = 108 weights + 6
// biases = 114. Output 6x8x8 = 384 values, each 2 x 18 multiply-add FLOPs
// + 1 bias add = 37: 14,208 FLOPs; training: forward and the weight
// gradient, 2 x 14,208 = 28,416 (the data needs no gradient).
TEST(Analysis, ConvParamsAndFlops) {
  Model m = image_model({4, 8, 8});
  zoo::Builder b(m);
  b.groups(2).conv(-1, 6, 3, 1, 1);
  const Cost c = analyze(m);
  EXPECT_EQ(c.params, 114);
  EXPECT_DOUBLE_EQ(c.forward_flops, 14'208);
  EXPECT_DOUBLE_EQ(c.train_flops, 28'416);
}

// Every counted op of a small CNN, by hand (docs/models.md conventions):
//   conv 2->3, 3x3, pad 1, bias: 3x4x4 = 48 outputs x (2 x 2 x 9 + 1) =
//     1,776 FLOPs; 3 x 2 x 9 + 3 = 57 parameters
//   batch norm: 2 per output, 96; scale and shift of 3 channels, 6 params
//   relu: 1 per output, 48
//   max pool 2x2 stride 2: 3x2x2 = 12 outputs x 4 window elements = 48
//   flatten: 0
//   linear 12 -> 5 with bias: 5 x (2 x 12 + 1) = 125; 12 x 5 + 5 = 65
// Forward 1,776 + 96 + 48 + 48 + 125 = 2,093; 128 parameters. Training:
// the conv reads the data (forward + weight gradient: 2 x 1,776 = 3,552),
// batch norm and linear have weights and an input that needs a gradient
// (3 x 96 = 288, 3 x 125 = 375), relu and pool only the input gradient
// (2 x 48 = 96 each): 4,407. Activations kept: 48 + 48 + 48 + 12 + 12 + 5
// = 173 floats.
TEST(Analysis, SmallCnnFlopsLayerByLayer) {
  Model m = image_model({2, 4, 4});
  zoo::Builder b(m);
  int x = b.relu(b.batch_norm(b.conv(-1, 3, 3, 1, 1)));
  b.linear(b.flatten(b.max_pool(x, 2, 2)), 5);
  const Cost c = analyze(m);
  EXPECT_EQ(c.params, 128);
  EXPECT_DOUBLE_EQ(c.forward_flops, 2'093);
  EXPECT_DOUBLE_EQ(c.train_flops, 4'407);
  EXPECT_DOUBLE_EQ(c.activation_floats, 173);
}

// LRN of size 3 costs size + 3 = 6 per output: 4x2x2 = 16 outputs, 96.
// Average pool 2x2 to 4x1x1: 4 outputs x 4 = 16. Softmax 3 per output on
// 4 values: 12. No parameters. Forward 96 + 16 + 12 = 124.
TEST(Analysis, NormalisationPoolingAndSoftmaxFlops) {
  Model m = image_model({4, 2, 2});
  zoo::Builder b(m);
  const int x = b.flatten(b.avg_pool(b.lrn(-1, 3, 1e-4, 0.75), 2, 2));
  Layer softmax;
  softmax.op = Op::kSoftmax;
  b.add(softmax, {x}, "softmax");
  const Cost c = analyze(m);
  EXPECT_EQ(c.params, 0);
  EXPECT_DOUBLE_EQ(c.forward_flops, 124);
}

// A linear layer on a sequence applies to every step: input [3,5], 4
// outputs with bias: 3 steps x 4 x (2 x 5 + 1) = 132 FLOPs; 5 x 4 + 4 = 24
// parameters, shared by the steps.
TEST(Analysis, LinearOnASequenceCountsEveryStep) {
  Model m = image_model({3, 5});
  zoo::Builder b(m);
  b.linear(-1, 4);
  const Cost c = analyze(m);
  EXPECT_EQ(c.params, 24);
  EXPECT_DOUBLE_EQ(c.forward_flops, 132);
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
  // Embedding 100 x 8 = 800. Each LSTM layer and direction: 4 gates x 4
  // units x (8 inputs + 4 recurrent) = 192 weights + 4 x 4 = 16 biases =
  // 208; layer 2 reads both directions' 4 units, 8 again: 4 x 208 = 832.
  EXPECT_EQ(analyze(m).params, 1'632);
  // A second bias vector (cuDNN, PyTorch): 16 more per layer and
  // direction, 64 in all.
  m.layers[1].lstm_biases = 2;
  EXPECT_EQ(analyze(m).params, 1'696);
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
