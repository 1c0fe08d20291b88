// Training's faults that must not cost the result or pass as one (issue
// 29): a --save-weights file that cannot be written once the training is
// done keeps the measured run; a validation output that is not a number
// fails the run naming it; and the progress line's wording.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <memory>

#include "scripted_backend.h"
#include "tiny_data.h"
#include "train/progress.h"
#include "train/trainer.h"

namespace nnbench::train {
namespace {

using test::Script;
using test::ScriptedBackend;

Task task(int epochs) {
  Task t;
  t.name = "scripted";
  t.dataset = "tiny";
  t.model = "mnist-mlp";
  t.batch = 4;
  t.eval_batch = 8;
  t.schedule = {"constant", 0.1};
  t.target = 0;
  t.epochs = epochs;
  return t;
}

// Was: state failed, the two epochs' figures lost to a file write.
TEST(TrainFaults, AnUnwritableSaveWeightsFileKeepsTheMeasuredRun) {
  ScriptedBackend b(Script{});
  TrainOptions o;
  o.save_weights = "/nonexistent-nnbench-folder/w.bin";
  const TrainRun r = train_task(b, task(2), test::tiny_dataset(), o);
  EXPECT_EQ(results::state_name(r.state), "completed") << r.message;
  EXPECT_EQ(r.epochs.size(), 2u);
  EXPECT_EQ(r.effective.extras.count("saved_weights"), 0u);
  EXPECT_NE(r.message.find("/nonexistent-nnbench-folder/w.bin"),
            std::string::npos)
      << r.message;
}

TEST(TrainFaults, AWrittenSaveWeightsFileIsRecorded) {
  ScriptedBackend b(Script{});
  TrainOptions o;
  const auto p = std::filesystem::temp_directory_path() /
                 ("nnbench_saved_" + std::to_string(::getpid()) + ".w");
  o.save_weights = p.string();
  const TrainRun r = train_task(b, task(1), test::tiny_dataset(), o);
  EXPECT_EQ(results::state_name(r.state), "completed") << r.message;
  EXPECT_EQ(r.effective.extras.at("saved_weights"), p.string());
  EXPECT_TRUE(std::filesystem::exists(p));
  std::filesystem::remove(p);
}

// The scripted backend, its inference outputs NaN: a model whose answers
// are not numbers, which argmax would score as class 0.
class NanInference : public ScriptedBackend {
 public:
  NanInference() : ScriptedBackend(Script{}) {}
  std::unique_ptr<backend::Executable> compile(
      const model::Model& m, const backend::Options& o,
      const backend::Shapes& s) override {
    struct Exe : backend::Executable {
      std::unique_ptr<backend::Executable> e;
      bool inferred = false;
      void load_batches(const std::vector<host::Batch>& b) override {
        e->load_batches(b);
      }
      void infer(int i) override { e->infer(i), inferred = true; }
      void train_step(int i) override { e->train_step(i), inferred = false; }
      double last_loss() override { return e->last_loss(); }
      void set_learning_rate(double lr) override { e->set_learning_rate(lr); }
      void synchronize() override { e->synchronize(); }
      backend::Effective effective() const override { return e->effective(); }
      host::Tensor output() override {
        host::Tensor t = e->output();
        if (inferred) t.f.back() = std::nanf("");
        return t;
      }
      std::map<std::string, host::Tensor> parameters() override { return {}; }
      std::map<std::string, host::Tensor> gradients() override { return {}; }
    };
    auto x = std::make_unique<Exe>();
    x->e = ScriptedBackend::compile(m, o, s);
    return x;
  }
};

// Was: completed, the validation accuracy scored on NaN.
TEST(TrainFaults, ANonFiniteValidationOutputFailsTheRunNamingIt) {
  NanInference b;
  const TrainRun r = train_task(b, task(2), test::tiny_dataset(), {});
  EXPECT_EQ(results::state_name(r.state), "failed") << r.message;
  EXPECT_NE(r.message.find("validation output holds nan"), std::string::npos)
      << r.message;
}

// 45 of 469 steps in 10 s: 4.5 steps/s, 424 steps left take 94.2 s.
TEST(Progress, TheLineSaysWhereTheEpochIsItsRateAndTheTimeLeft) {
  EXPECT_EQ(progress_line(2, 10, 45, 469, 10.0),
            "epoch 2/10: 45/469 steps, 4.5 steps/s, epoch ends in 1 min 34 s");
  EXPECT_EQ(progress_line(1, 3, 0, 469, 0.0), "epoch 1/3: 0/469 steps");
  EXPECT_EQ(progress_line(1, 1, 100, 100, 2.0),
            "epoch 1/1: 100/100 steps, 50.0 steps/s, epoch ends in 0.0 s");
}

TEST(Progress, DurationsReadAsAPersonWouldSayThem) {
  EXPECT_EQ(duration_text(0.42), "0.4 s");
  EXPECT_EQ(duration_text(42.4), "42 s");
  EXPECT_EQ(duration_text(200), "3 min 20 s");
  EXPECT_EQ(duration_text(7500), "2 h 05 min");
}

}  // namespace
}  // namespace nnbench::train
