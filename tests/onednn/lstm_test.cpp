// LSTM layers on oneDNN against the oracle (the reference backend): same
// seeded weights and batch; the output, and after two training steps (the
// second would see a gradient oneDNN added to the first one's) the loss,
// every gradient and every parameter; and an inference-only build's output.
#include <gtest/gtest.h>

#include "backend/registry.h"
#include "compare.h"
#include "data/synthetic.h"
#include "host/tensor_file.h"
#include "model/zoo/builder.h"
#include "util/temp_dir.h"

namespace nnbench::onednn_test {
namespace {

using model::zoo::Builder;
using model::zoo::LstmOptions;

backend::Options options(const std::string& precision) {
  backend::Options o;
  o.threads = 2;
  o.seed = 7;
  o.precision = precision;
  return o;
}

// Token ids through an embedding, or float features straight from the
// model input (no gradient below the LSTM), then the LSTM and a head: on
// the mean over steps, on the last step, or a linear on every step (the
// PTB language model's, lstm-ptb).
model::Model lstm_model(const std::string& name, LstmOptions lstm, bool tokens,
                        bool per_step) {
  model::Model m;
  m.name = name;
  m.input.shape = tokens ? model::Shape{6} : model::Shape{6, 3};
  if (tokens) {
    m.input.dtype = model::DType::kInt64;
    m.input.vocab = 13;
  }
  Builder b(m);
  int x = tokens ? b.embedding(-1, 13, 5) : -1;
  x = b.lstm(x, 4, lstm, "lstm");
  if (lstm.sequences && !per_step) x = b.seq_mean(x);
  b.linear(x, 3, "head");
  return m;
}

struct Case {
  std::string name;
  LstmOptions lstm;
  bool tokens = true;
  bool per_step = false;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::vector<Case> cases() {
  return {
      {"bidirectional_2layer_two_biases",
       {.num_layers = 2, .bidirectional = true, .biases = 2}},
      {"bidirectional_last_step", {.bidirectional = true, .sequences = false}},
      {"unidirectional_3layer_last_step_two_biases",
       {.num_layers = 3, .sequences = false, .biases = 2}},
      {"unidirectional_from_input", {}, false},
      {"bidirectional_2layer_last_step_from_input",
       {.num_layers = 2, .bidirectional = true, .sequences = false},
       false},
      {"ptb_like_2layer_per_step_head", {.num_layers = 2}, true, true},
  };
}

bool bf16_supported() {
  const auto p = backend::make_backend("onednn")->describe().precisions;
  return std::find(p.begin(), p.end(), "bf16") != p.end();
}

class Lstm : public ::testing::TestWithParam<Case> {
 protected:
  model::Model model() const {
    const Case& p = GetParam();
    return lstm_model(p.name, p.lstm, p.tokens, p.per_step);
  }
  void check_training(const std::string& precision, double tolerance,
                      double grad_tolerance) {
    const model::Model m = model();
    const auto batch = data::synthetic_batch(m, 3, 5);
    const StepResult want = run_step(*backend::make_backend(backend::kOracle),
                                     m, options("fp32"), batch, 2);
    const StepResult got = run_step(*backend::make_backend("onednn"), m,
                                    options(precision), batch, 2);
    EXPECT_EQ(got.output.shape, want.output.shape);
    EXPECT_LT(relative_error(got.output, want.output), tolerance);
    EXPECT_NEAR(got.loss, want.loss, tolerance * std::abs(want.loss));
    const Tolerance t = [&](const std::string&) { return grad_tolerance; };
    expect_close(got.grads, want.grads, t, "gradient");
    expect_close(got.params, want.params, t, "parameter");
  }
};

TEST_P(Lstm, TrainsLikeTheOracleFp32) { check_training("fp32", 1e-4, 1e-3); }

// bf16 rounds every activation and weight the primitive reads (2^-8); the
// bound is agreement_test.cpp's for smooth nets (an LSTM has no ReLU).
TEST_P(Lstm, TrainsLikeTheOracleBf16) {
  if (!bf16_supported()) GTEST_SKIP() << "no bf16 on this CPU";
  check_training("bf16", 5e-2, 5e-2);
}

TEST_P(Lstm, InferenceOnlyBuildLikeTheOracle) {
  const model::Model m = model();
  const auto batch = data::synthetic_batch(m, 3, 5);
  auto infer = [&](const char* name) {
    auto exe = backend::make_backend(name)->compile(m, options("fp32"),
                                                    backend::Shapes::infer(3));
    exe->load_batches({batch});
    exe->infer(0);
    exe->synchronize();
    return exe->output();
  };
  const host::Tensor want = infer(backend::kOracle);
  const host::Tensor got = infer("onednn");
  EXPECT_EQ(got.shape, want.shape);
  EXPECT_LT(relative_error(got, want), 1e-4);
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return info.param.name;
}

INSTANTIATE_TEST_SUITE_P(Layers, Lstm, ::testing::ValuesIn(cases()), case_name);

// int8 leaves the LSTM in fp32 inside an int8 build, and the record says
// so; the linear on every step after it is quantized (one int8 product).
TEST(LstmInt8, RunsTheLstmInFp32AndSaysSo) {
  model::Model m = lstm_model("int8", {.num_layers = 2}, false, true);
  const auto batch = data::synthetic_batch(m, 3, 5);
  util::TempDir dir("nnbench-lstm-int8-test");
  backend::Options o = options("int8");
  o.calibration = dir.file("calibration");
  host::write_tensors(o.calibration, {{"input", batch.input}});
  auto exe =
      backend::make_backend("onednn")->compile(m, o, backend::Shapes::infer(3));
  exe->load_batches({batch});
  exe->infer(0);
  exe->synchronize();
  const std::string int8 = exe->effective().extras.at("int8");
  EXPECT_NE(int8.find("; 1 quantized here"), std::string::npos) << int8;
  EXPECT_NE(int8.find("not quantized (fp32): lstm (lstm)"), std::string::npos)
      << int8;
  auto oracle = backend::make_backend(backend::kOracle)
                    ->compile(m, options("fp32"), backend::Shapes::infer(3));
  oracle->load_batches({batch});
  oracle->infer(0);
  // The head's int8 rounding only (the LSTM in fp32 matches to 1e-4).
  EXPECT_LT(relative_error(exe->output(), oracle->output()), 1e-2);
}

}  // namespace
}  // namespace nnbench::onednn_test
