#include "model/generation.h"

#include <gtest/gtest.h>

#include "model/analysis.h"
#include "model/zoo/zoo.h"
#include "util/error.h"

namespace nnbench::model {
namespace {

TEST(GenerationModel, DecodersGenerateEncodersSayWhyNot) {
  EXPECT_EQ(generation_problem(zoo::get("gpt2-tiny")), "");
  EXPECT_EQ(generation_problem(zoo::get("gpt2-small")), "");
  // BERT's attention sees later tokens.
  const std::string bert = generation_problem(zoo::get("bert-tiny"));
  EXPECT_NE(bert.find("not causal"), std::string::npos) << bert;
  // An image model reads no token ids.
  EXPECT_NE(generation_problem(zoo::get("mnist-mlp")).find("token ids"),
            std::string::npos);
  // The PTB LSTM carries state across positions.
  const std::string lstm = generation_problem(zoo::get("lstm-ptb"));
  EXPECT_NE(lstm.find("lstm"), std::string::npos) << lstm;
}

TEST(GenerationModel, SequenceLengthWithinTheLearnedPositions) {
  // gpt2-tiny learns 64 positions (zoo_counts.h: its 64*64 table).
  const Model m = zoo::get("gpt2-tiny");
  EXPECT_EQ(infer_shapes(with_sequence(m, 64)).back(), (Shape{64, 512}));
  EXPECT_EQ(infer_shapes(with_sequence(m, 5)).back(), (Shape{5, 512}));
  EXPECT_THROW(with_sequence(m, 65), Error);
}

TEST(GenerationModel, WeightBytesCountTheTiedTableOnceAndNoPositions) {
  // gpt2-tiny: 136,960 parameters (zoo_counts.h), of which the positions'
  // 64*64 = 4,096 are read a row at a time; the token table (512*64) is
  // read whole by the tied head, once. fp32: 4 bytes each.
  EXPECT_DOUBLE_EQ(weight_bytes(zoo::get("gpt2-tiny"), 4),
                   (136'960.0 - 4'096.0) * 4);
  // GPT-2 small: 124,439,808 less the 1024*768 positions.
  EXPECT_DOUBLE_EQ(weight_bytes(zoo::get("gpt2-small"), 4),
                   (124'439'808.0 - 786'432.0) * 4);
  // At a generation's precision: 2 bytes at bf16, 1 at int8.
  EXPECT_DOUBLE_EQ(weight_bytes(zoo::get("gpt2-small"), "fp32"),
                   (124'439'808.0 - 786'432.0) * 4);
  EXPECT_DOUBLE_EQ(weight_bytes(zoo::get("gpt2-small"), "bf16"),
                   (124'439'808.0 - 786'432.0) * 2);
  EXPECT_DOUBLE_EQ(weight_bytes(zoo::get("gpt2-small"), "int8"),
                   124'439'808.0 - 786'432.0);
}

}  // namespace
}  // namespace nnbench::model
