#pragma once
// A test-only backend that computes nothing and does what its script says:
// how long a training step and an inference take (real sleeps, so the
// harness's and the trainer's own clocks see them), the loss of each epoch,
// the validation accuracy each evaluation must come out at, and where to
// fail. It records what it was asked to do and how long its calls really
// took by its own clock, so tests can check the timing rules against time
// measured independently of the code under test.
#include <chrono>
#include <cmath>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "backend/backend.h"
#include "model/analysis.h"
#include "results/request.h"
#include "util/error.h"

namespace nnbench::test {

// What a fake engine says it ran: one thread, fp32, on `device`.
inline backend::Effective effective_on(const std::string& device) {
  backend::Effective e;
  e.threads = 1;
  e.device = device;
  e.precision = "fp32";
  return e;
}

struct Script {
  // Per epoch (index = evaluations already begun); the last value repeats.
  std::vector<double> val_accuracy = {0};  // multiples of 1/rows evaluated
  std::vector<double> loss = {1.0};        // NaN or inf to diverge
  double step_seconds = 0;                 // slept in every train_step
  double infer_seconds = 0;                // slept in every infer
  double first_infer_seconds = 0;          // slept once more in the first infer
  bool oom_in_compile = false;        // compile throws backend::OutOfMemory
  bool bad_alloc_in_step = false;     // train_step throws std::bad_alloc
  std::string throw_in_step;          // train_step throws nnbench::Error
  std::string runtime_error_in_step;  // train_step throws runtime_error
  std::vector<std::string> devices = {"cpu"};  // what describe() lists
};

// What the backend was asked to do, and its own clock's account of it.
struct Record {
  int compiles = 0, train_steps = 0, infers = 0;
  // Seconds spent inside train_step and infer, per epoch, by the backend's
  // own steady_clock (sleep included).
  std::vector<double> train_seconds, infer_seconds;
};

class ScriptedExecutable : public backend::Executable {
 public:
  ScriptedExecutable(const Script& s, Record& r, int64_t classes)
      : s_(s), r_(r), classes_(classes) {}

  void load_batches(const std::vector<host::Batch>& b) override {
    batch_ = b.at(0);
  }

  void train_step(int) override {
    const auto t0 = Clock::now();
    if (s_.bad_alloc_in_step) throw std::bad_alloc();
    if (!s_.throw_in_step.empty()) throw Error(s_.throw_in_step);
    if (!s_.runtime_error_in_step.empty())
      throw std::runtime_error(s_.runtime_error_in_step);
    sleep(s_.step_seconds);
    last_was_train_ = true;
    ++r_.train_steps;
    add(r_.train_seconds, epoch(), t0);
    // Training logits: all zero (class 0 everywhere); not what is scripted.
    output_.shape = {rows(), classes_};
    output_.f.assign(rows() * classes_, 0.0f);
  }

  // Logits whose argmax is right for the first round(acc * labelled rows)
  // rows and wrong for the rest; rows past the labels (padding) get zeros.
  void infer(int) override {
    const auto t0 = Clock::now();
    if (last_was_train_ || r_.infers == 0) ++evaluations_;
    last_was_train_ = false;
    sleep(s_.infer_seconds + (r_.infers == 0 ? s_.first_infer_seconds : 0));
    ++r_.infers;
    const auto& labels = batch_.labels.i;
    const auto n = static_cast<int64_t>(labels.size());
    const auto right =
        static_cast<int64_t>(std::llround(at(s_.val_accuracy, epoch()) * n));
    output_.shape = {rows(), classes_};
    output_.f.assign(rows() * classes_, 0.0f);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t c = i < right ? labels[i] : (labels[i] + 1) % classes_;
      output_.f[i * classes_ + c] = 1.0f;
    }
    add(r_.infer_seconds, epoch(), t0);
  }

  double last_loss() override { return at(s_.loss, epoch()); }
  void set_learning_rate(double) override {}
  void synchronize() override {}
  backend::Effective effective() const override {
    return {1, "cpu", "fp32", "sgd", {{"backend", "scripted"}}};
  }
  host::Tensor output() override { return output_; }
  std::map<std::string, host::Tensor> parameters() override { return {}; }
  std::map<std::string, host::Tensor> gradients() override { return {}; }

 private:
  using Clock = std::chrono::steady_clock;

  static void sleep(double seconds) {
    if (seconds > 0)
      std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  }
  static double at(const std::vector<double>& v, int i) {
    return v.at(std::min<size_t>(i, v.size() - 1));
  }
  static void add(std::vector<double>& v, int i, Clock::time_point t0) {
    if (static_cast<int>(v.size()) <= i) v.resize(i + 1, 0.0);
    v[i] += std::chrono::duration<double>(Clock::now() - t0).count();
  }
  // Training before the first evaluation is epoch 0; an evaluation belongs
  // to the epoch it follows.
  int epoch() const {
    return last_was_train_ ? evaluations_ : std::max(evaluations_ - 1, 0);
  }
  int64_t rows() const { return batch_.input.shape.at(0); }

  const Script& s_;
  Record& r_;
  int64_t classes_;
  host::Batch batch_;
  host::Tensor output_;
  bool last_was_train_ = false;
  int evaluations_ = 0;
};

class ScriptedBackend : public backend::Backend {
 public:
  explicit ScriptedBackend(Script s) : s_(std::move(s)) {}
  std::string name() const override { return "scripted"; }
  std::string version() const override { return "test"; }
  backend::Description describe() const override {
    backend::Description d;
    d.name = name();
    d.can.lr_schedules = true;
    d.devices = s_.devices;
    d.precisions = {"fp32"};
    d.optimizers = {"sgd"};
    return d;
  }
  backend::Support supports(const model::Layer&,
                            const backend::Options& o) const override {
    return backend::supports_options(describe(), o);
  }
  std::unique_ptr<backend::Executable> compile(
      const model::Model& m, const backend::Options&,
      const backend::Shapes&) override {
    ++record.compiles;
    if (s_.oom_in_compile) throw backend::OutOfMemory("scripted: no memory");
    const model::Shape out = model::infer_shapes(m).back();
    return std::make_unique<ScriptedExecutable>(s_, record, out.back());
  }

  Record record;

 private:
  Script s_;
};

// A run of the scripted backend at `batch`: one distinct batch, one
// warm-up step, then `steps` measured steps and no more.
inline results::RunRequest scripted_request(int64_t batch, int steps = 1) {
  results::RunRequest r;
  r.backend = "scripted";
  r.batch = batch;
  r.distinct_batches = 1;
  r.warmup = {1, 0, 1};
  r.stop.min_iterations = steps;
  r.stop.min_seconds = 0;
  r.stop.max_iterations = steps;
  r.stop.max_seconds = 1;
  return r;
}

}  // namespace nnbench::test
