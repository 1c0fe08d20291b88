#include "train/trainer.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>

#include "data/loader.h"
#include "host/tensor_file.h"
#include "machine/threads.h"
#include "model/model_file.h"
#include "model/zoo/zoo.h"
#include "results/result.h"
#include "train/adapt.h"
#include "train/latency.h"
#include "train/progress.h"
#include "util/clock.h"
#include "util/error.h"

namespace nnbench::train {
namespace {

using util::Clock;

bool binary_loss(const model::Model& m) {
  return m.loss == model::Loss::kSigmoidBinaryCrossEntropy;
}

// Pads a short last batch with zero rows to `rows`, so that it runs on the
// executable compiled for the evaluation batch; returns the real row count.
int64_t pad_rows(host::Tensor& t, int64_t rows) {
  const int64_t have = t.shape.at(0);
  if (have >= rows) return have;
  const auto grow = [&](auto& v) { v.resize(v.size() / have * rows); };
  t.f.empty() ? grow(t.i) : grow(t.f);
  t.shape[0] = rows;
  return have;
}

// Full validation set, in eval mode; returns {loss, accuracy}.
std::pair<double, double> evaluate(backend::Executable& exe,
                                   const data::Split& test, const Task& t,
                                   const model::Model& m) {
  const bool binary = binary_loss(m);
  data::LoaderOptions lo;
  lo.batch = t.eval_batch;
  lo.shuffle = false;
  data::Loader loader(test, lo);
  loader.start_epoch(0);
  Score s;
  while (auto b = loader.next()) {
    reshape_inputs(*b, m);
    const int64_t real = pad_rows(b->input, t.eval_batch);
    exe.load_batches({*b});
    exe.infer(0);
    exe.synchronize();
    host::Tensor logits = exe.output();
    logits.f.resize(logits.f.size() / t.eval_batch * real);  // drop padding
    // A model with NaN in it would score chance, not fail.
    backend::check_finite("the validation output", logits.f.data(),
                          logits.f.size());
    score(logits, b->labels, binary, s);
  }
  return {s.loss_sum / s.count, double(s.correct) / s.count};
}

std::string effective_threads(const TrainRun& r) {
  return std::to_string(r.effective.threads > 0 ? r.effective.threads : 1);
}

class Run {
 public:
  Run(backend::Executable& exe, const Task& t, const data::Dataset& d,
      const TrainOptions& o, int epochs, const model::Model& m, TrainRun& r,
      Progress& progress)
      : progress_(progress),
        exe_(exe),
        t_(t),
        d_(d),
        o_(o),
        epochs_(epochs),
        r_(r),
        m_(m),
        binary_(binary_loss(m)),
        threads_(std::max(1, std::atoi(effective_threads(r).c_str()))),
        start_(Clock::now()) {
    r.start_unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  }

  // The framework's own loop over the epoch's batches: assembled before
  // the clock (the loop's own data handling is inside it), at the one rate
  // the schedule gives this epoch.
  void framework_epoch(int e, data::Loader& loader) {
    EpochRow row;
    row.epoch = e + 1;
    loader.start_epoch(e);
    const int64_t steps = loader.batches_per_epoch();
    row.lr = learning_rate(t_.schedule, e, epochs_);
    for (int64_t k = 1; k < steps; ++k) {
      if (learning_rate(t_.schedule, e + double(k) / steps, epochs_) != row.lr)
        throw results::RunError(
            results::State::kInvalidArgs,
            "the framework's own loop runs an epoch at one learning rate; " +
                t_.name + "'s schedule changes it within epoch " +
                std::to_string(e + 1) + " (use --loop steps)");
    }
    std::vector<host::Batch> batches;
    batches.reserve(static_cast<size_t>(steps));
    while (auto b = loader.next()) {
      reshape_inputs(*b, m_);
      batches.push_back(std::move(*b));
    }
    exe_.set_learning_rate(row.lr);
    progress_.say(
        fmt::format("epoch {}/{}: the framework's own loop over {} "
                    "batches",
                    e + 1, epochs_, batches.size()));
    backend::SelfTimed* remote = exe_.self_timed();
    if (!remote)
      throw backend::Unimplemented(
          "the framework's own training loop (framework engines have one; "
          "nnbench's own engines run the harness's steps)");
    bench::UsageProbe probe(remote->processes());
    probe.start();
    const backend::FrameworkEpoch f = remote->framework_epoch(batches);
    r_.cpu_usage.add(probe.stop(threads_));
    batches.clear();
    if (f.loss && !std::isfinite(*f.loss))
      throw results::RunError(
          results::State::kFailed,
          "loss is not finite in epoch " + std::to_string(e + 1));
    loop_ = f.loop;
    row.epoch_seconds = f.seconds;
    row.data_wait_seconds = 0;  // nnbench's loader finished before the loop
    row.loss = f.loss.value_or(std::nan(""));
    row.accuracy = f.accuracy.value_or(std::nan(""));
    finish(row);
  }

  void epoch(int e, data::Loader& loader) {
    EpochRow row;
    row.epoch = e + 1;
    loader.start_epoch(e);
    const double wait0 = loader.wait_seconds();
    const int64_t steps = loader.batches_per_epoch();
    Score s;
    double loss_sum = 0;
    int64_t n = 0;
    // A worker's CPU is the run's.
    bench::UsageProbe probe(backend::worker_processes(exe_));
    probe.start();
    const auto t0 = Clock::now();
    while (auto b = loader.next()) {
      row.lr = learning_rate(t_.schedule, e + double(n) / steps, epochs_);
      exe_.set_learning_rate(row.lr);
      reshape_inputs(*b, m_);
      exe_.load_batches({*b});
      exe_.train_step(0);
      const double loss = exe_.last_loss();
      if (!std::isfinite(loss))
        throw results::RunError(results::State::kFailed,
                                "loss is " + std::to_string(loss) +
                                    " in epoch " + std::to_string(e + 1));
      loss_sum += loss;
      score(exe_.output(), b->labels, binary_, s);
      ++n;
      progress_.step(e + 1, epochs_, n, steps, t0);
    }
    row.epoch_seconds = util::seconds_since(t0);
    r_.cpu_usage.add(probe.stop(threads_));
    row.data_wait_seconds = loader.wait_seconds() - wait0;
    row.loss = loss_sum / std::max<int64_t>(n, 1);
    row.accuracy = double(s.correct) / std::max<int64_t>(s.count, 1);
    finish(row);
  }

  // The framework's loop in its own words; "" for the harness's steps.
  const std::string& loop() const { return loop_; }

 private:
  // Validation, the epoch's times and its row.
  void finish(EpochRow& row) {
    const int e = row.epoch - 1;
    progress_.say(fmt::format("epoch {}/{}: evaluating", e + 1, epochs_));
    const auto e0 = Clock::now();
    std::tie(row.val_loss, row.val_accuracy) = evaluate(exe_, d_.test, t_, m_);
    row.eval_seconds = util::seconds_since(e0);
    r_.total_train_seconds += row.epoch_seconds;
    r_.total_eval_seconds += row.eval_seconds;
    row.wall_seconds = util::seconds_since(start_);
    row.train_seconds = r_.total_train_seconds +
                        (o_.include_eval_time ? r_.total_eval_seconds : 0);
    r_.epochs.push_back(row);
    r_.final_val_accuracy = row.val_accuracy;
  }

  Progress& progress_;
  backend::Executable& exe_;
  const Task& t_;
  const data::Dataset& d_;
  const TrainOptions& o_;
  int epochs_;
  TrainRun& r_;
  const model::Model& m_;
  bool binary_;
  int threads_;  // the backend's, for the CPU share
  std::string loop_;
  Clock::time_point start_;
};

void train_loop(backend::Backend& b, const Task& t, const data::Dataset& d,
                const TrainOptions& o, TrainRun& r) {
  const model::Model m = adapt_model(model::zoo::get(t.model), d);
  r.model = m.name;
  r.model_hash = model::model_hash(m);
  backend::Options bo = t.optimizer;
  bo.seed = o.seed;
  bo.device = o.device;
  bo.threads = machine::resolve_threads(o.threads);
  bo.precision = o.precision;
  bo.learning_rate = learning_rate(t.schedule, 0, 1);
  // Every batch size the run uses is compiled here, before any clock.
  backend::Shapes shapes{t.batch, {t.eval_batch}};
  if (o.latency) shapes.infer_batches.push_back(1);
  if (t.schedule.kind != "constant" && !b.describe().can.lr_schedules)
    throw backend::Unimplemented("learning-rate schedule '" + t.schedule.kind +
                                 "' (the " + b.name() +
                                 " backend cannot change the rate)");
  const auto t0 = Clock::now();
  if (!o.save_weights.empty() && !b.describe().can.running_stats)
    for (const auto& l : m.layers)
      if (l.op == model::Op::kBatchNorm)
        throw results::RunError(
            results::State::kUnimplemented,
            "--save-weights: " + l.name + " is batch norm, whose running " +
                "statistics the " + b.name() +
                " backend does not give (the trained model's answers would " +
                "differ without them)");
  auto exe = b.compile(m, bo, shapes);
  r.init_seconds = util::seconds_since(t0);
  r.effective = exe->effective();
  const int epochs = o.epochs > 0 ? o.epochs : t.epochs;
  data::LoaderOptions lo;
  lo.batch = t.batch;
  lo.seed = o.seed;
  lo.augment = t.augment;
  lo.drop_last = true;  // fixed shapes: backends compile for one batch size
  data::Loader loader(d.train, lo);
  Progress progress(o.progress);  // erased when the run ends, however
  Run run(*exe, t, d, o, epochs, m, r, progress);
  const bool framework_loop = o.loop == "framework";
  using results::State;
  r.state = r.target > 0 ? State::kNotConverged : State::kCompleted;
  for (int e = 0; e < epochs; ++e) {
    if (framework_loop)
      run.framework_epoch(e, loader);
    else
      run.epoch(e, loader);
    const EpochRow& row = r.epochs.back();
    if (r.target > 0 && row.val_accuracy >= r.target) {
      r.state = State::kConverged;
      r.time_to_target = row.train_seconds;
      break;
    }
    // Checked at epoch ends only: an epoch, once begun, runs to its end.
    if (o.max_seconds > 0 && row.train_seconds >= o.max_seconds &&
        e + 1 < epochs) {
      // A fixed-epoch run cut short is not "completed": it trained fewer
      // epochs than asked, and must not be priced as a whole run.
      if (r.state == State::kCompleted) r.state = State::kStopped;
      r.message = fmt::format(
          "time budget of {} s used up after {} of {} epochs ({:.3f} s)",
          o.max_seconds, e + 1, epochs, row.train_seconds);
      break;
    }
  }
  progress.clear();
  bench::judge_contention(r.cpu_usage, o.contention, r.validity);
  if (o.latency) r.latency = measure_latency(*exe, d.test, m, o.latency_items);
  r.effective = exe->effective();  // what ran, read after the run
  if (!run.loop().empty()) r.effective.extras["training_loop"] = run.loop();
  if (!o.save_weights.empty()) {
    auto saved = exe->parameters();
    for (auto& [name, t] : exe->running_stats()) saved[name] = std::move(t);
    try {
      host::write_tensors(o.save_weights, saved);
      r.effective.extras["saved_weights"] = o.save_weights;
    } catch (const IoError& e) {
      // The measurement is done and stands (as when --out cannot be
      // written): the record says what was lost, saved_weights stays
      // absent, and the command exits 3 (cli/cmd_train.cpp).
      r.message += (r.message.empty() ? "" : "; ") +
                   std::string("the trained parameters were not saved: ") +
                   e.what();
    }
  }
}

}  // namespace

void score(const host::Tensor& logits, const host::Tensor& labels, bool binary,
           Score& s) {
  const int64_t rows = static_cast<int64_t>(labels.i.size());
  const int64_t k = static_cast<int64_t>(logits.f.size()) / rows;
  for (int64_t r = 0; r < rows; ++r) {
    const float* z = logits.f.data() + r * k;
    const int64_t y = labels.i[r];
    if (binary) {
      // Stable log(1 + exp(-z)) for y = 1, log(1 + exp(z)) for y = 0.
      const double x = y ? z[0] : -z[0];
      s.loss_sum += std::max(-x, 0.0) + std::log1p(std::exp(-std::abs(x)));
      s.correct += (z[0] > 0) == (y == 1);
    } else {
      int64_t best = 0;
      double mx = z[0];
      for (int64_t c = 1; c < k; ++c)
        if (z[c] > mx) mx = z[c], best = c;
      double sum = 0;
      for (int64_t c = 0; c < k; ++c) sum += std::exp(z[c] - mx);
      s.loss_sum += std::log(sum) + mx - z[y];
      s.correct += best == y;
    }
    ++s.count;
  }
}

TrainRun train_task(backend::Backend& b, const Task& t, const data::Dataset& d,
                    const TrainOptions& o) {
  TrainRun r;
  r.task = t.name;
  r.backend = b.name();
  r.backend_version = b.version();
  r.seed = o.seed;
  r.target = o.target >= 0 ? o.target : t.target;
  r.synthetic_data = d.synthetic;
  r.loop = o.loop;
  try {
    if (o.loop != "steps" && o.loop != "framework")
      throw results::RunError(
          results::State::kInvalidArgs,
          "loop '" + o.loop + "' is not steps or framework");
    if (d.synthetic && r.target > 0)
      throw results::RunError(results::State::kInvalidArgs,
                              time_to_accuracy_needs_real_data(t.name));
    train_loop(b, t, d, o, r);
  } catch (...) {
    r.fail(results::classify(std::current_exception()));
  }
  return r;
}

}  // namespace nnbench::train
