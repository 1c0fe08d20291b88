#include "bench/step_loop.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "bench/cpu_usage.h"
#include "bench/parallel.h"
#include "bench/statistics.h"
#include "bench/stopping/criterion.h"
#include "bench/stopping/registry.h"
#include "data/synthetic.h"
#include "machine/environment.h"
#include "machine/threads.h"
#include "model/analysis.h"
#include "model/model_file.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/text.h"

namespace nnbench::bench {
namespace {

using results::State;
using util::Clock;
using util::seconds_since;

// Synthetic batches, fewer when they would take much memory.
// Data-parallel runs make the global batches and keep their shard.
std::vector<host::Batch> make_batches(const model::Model& m,
                                      const results::RunRequest& r,
                                      const Parallel& par) {
  const double limit = 512.0 * (1 << 20);
  const int64_t size = par.global_batch();
  int n = std::max(1, r.distinct_batches);
  while (n > 1 && n * data::batch_bytes(m, size) > limit) --n;
  std::vector<host::Batch> batches;
  for (int i = 0; i < n; ++i)
    batches.push_back(data::synthetic_batch(m, size, r.options.seed + i));
  return par.shard(batches);
}

class Loop {
 public:
  Loop(backend::Executable& exe, const results::RunRequest& r, int n_batches)
      : exe_(exe),
        remote_(exe.self_timed()),
        train_(r.mode == backend::Mode::kTrain),
        n_(n_batches) {}

  // One step, timed by the caller; the same path for warm-up and measurement.
  void step() {
    if (remote_) {
      chunk(1);
      return;
    }
    if (train_)
      exe_.train_step(i_++ % n_);
    else
      exe_.infer(i_++ % n_);
    exe_.synchronize();
  }
  // `n` steps timed by a self-timed backend: their seconds.
  std::vector<double> chunk(int n) {
    auto s = remote_->timed_steps(
        train_ ? backend::Mode::kTrain : backend::Mode::kInfer, i_ % n_, n);
    i_ += n;
    return s;
  }
  bool self_timed() const { return remote_ != nullptr; }
  std::vector<int> processes() const {
    return remote_ ? remote_->processes() : std::vector<int>{};
  }
  int steps() const { return i_; }

 private:
  backend::Executable& exe_;
  backend::SelfTimed* remote_;  // null: timed here
  bool train_;
  int n_, i_ = 0;
};

void check_loss(backend::Executable& exe, int step, double* loss) {
  *loss = exe.last_loss();
  if (!std::isfinite(*loss))
    throw results::RunError(State::kFailed, "loss is " + std::to_string(*loss) +
                                                " after step " +
                                                std::to_string(step));
}

void warm_up(Loop& loop, backend::Executable& exe, const results::RunRequest& r,
             Parallel& par, results::RunResult& res) {
  const auto t0 = Clock::now();
  for (bool done = false; !done;) {
    const auto t = Clock::now();
    loop.step();
    if (loop.steps() == 1 && r.mode == backend::Mode::kTrain)
      check_loss(exe, 1, &res.first_loss);
    done = (loop.steps() >= r.warmup.min_iterations &&
            seconds_since(t0) >= r.warmup.min_seconds) ||
           seconds_since(t0) >= r.warmup.max_seconds;
    double s = seconds_since(t);
    par.agree(&s, &done, false);
  }
  res.warmup_iterations = loop.steps();
  res.warmup_seconds = seconds_since(t0);
}

// The threads the backend actually runs, for judging CPU share.
int effective_threads(const results::RunResult& res,
                      const results::RunRequest& r) {
  if (res.effective.threads > 0) return res.effective.threads;
  return machine::resolve_threads(r.options.threads);
}

// The operating system's view of the measured interval is recorded and
// A self-timed backend's steps in chunks, 1, 2, 4 ... at most 64 steps or
// about a quarter second each: the pipe is crossed once per chunk, and the
// criteria are asked after every sample. nnbench's clock around each chunk
// checks the backend's: its steps cannot take longer than the call did.
void measure_chunks(Loop& loop, const results::RunRequest& r,
                    const stopping::Rule& stop, results::RunResult& res,
                    Clock::time_point t0) {
  results::WorkerClock wc;
  int k = 1;
  for (bool done = false; !done;) {
    // No more steps than a maximum allows, nor, before the minimums hold,
    // than they still need (by iterations, and by time at the mean step):
    // steps past the end of the measurement would be run for nothing.
    const int have = static_cast<int>(res.samples.size());
    int n = std::min(k, r.stop.max_iterations - have);
    const double elapsed = seconds_since(t0);
    if (have < r.stop.min_iterations || elapsed < r.stop.min_seconds) {
      double need = r.stop.min_iterations - have;
      if (have > 0 && elapsed < r.stop.min_seconds)
        need = std::max(need, std::ceil((r.stop.min_seconds - elapsed) /
                                        (wc.step_seconds / have)));
      n = std::min<double>(n, std::max(1.0, need));
    }
    n = std::max(1, n);
    const auto t = Clock::now();
    const auto s = loop.chunk(n);
    const double wall = seconds_since(t);
    double sum = 0;
    for (double x : s) sum += x;
    if (sum > wall * 1.000001 + 1e-6)
      throw results::RunError(
          State::kFailed,
          fmt::format("the backend's {} step times sum to {:.6f} s, more than "
                      "the {:.6f} s nnbench measured around them",
                      s.size(), sum, wall));
    ++wc.chunks;
    wc.wall_seconds += wall;
    wc.step_seconds += sum;
    for (double x : s) {
      res.samples.push_back(x);
      res.stopped_by = stop.ended_by({res.samples, seconds_since(t0)});
      if ((done = !res.stopped_by.empty())) break;
    }
    if (sum / n * 2 * k <= 0.25) k = std::min(2 * k, 64);
  }
  res.worker_clock = wc;
}

// The operating system's view of the measured interval is recorded and
// judged: a run whose threads did not get their CPUs is invalid.
// Ranks of a data-parallel run record the slowest rank's time of each step
// (they run in lockstep) and stop together.
void measure(Loop& loop, const results::RunRequest& r, Parallel& par,
             results::RunResult& res) {
  const stopping::Rule stop = stopping::from_rule(r.stop);
  res.stop_criterion = r.stop.criterion;
  res.stop_parameters = stopping::resolved(r.stop);
  UsageProbe probe(loop.processes());
  probe.start();
  const auto t0 = Clock::now();
  if (loop.self_timed()) {
    measure_chunks(loop, r, stop, res, t0);
  } else {
    for (bool done = false; !done;) {
      const auto t = Clock::now();
      loop.step();
      res.samples.push_back(seconds_since(t));
      res.stopped_by = stop.ended_by({res.samples, seconds_since(t0)});
      done = !res.stopped_by.empty();
      par.agree(&res.samples.back(), &done, true);
    }
  }
  const double elapsed = seconds_since(t0);
  // Ranks stop together on the slowest times; one that did not decide
  // itself says so.
  if (res.stopped_by.empty()) res.stopped_by = "another rank";
  res.cpu_usage = probe.stop(effective_threads(res, r));
  par.exclude_other_ranks(res.cpu_usage, res.validity);
  judge_contention(res.cpu_usage, r.contention.rule, res.validity);
  // A maximum that cut the measurement short of a minimum leaves fewer
  // samples than the rules promise: the statistics are not the ones asked.
  // Only when a maximum ended the loop (every rank of a data-parallel run
  // stops on the same step, on the slowest rank's times).
  const bool cut =
      static_cast<int>(res.samples.size()) >= r.stop.max_iterations ||
      elapsed >= r.stop.max_seconds;
  const auto unmet =
      cut ? stop.unmet({res.samples, elapsed}) : std::vector<std::string>{};
  if (!unmet.empty()) {
    std::string what;
    for (const auto& u : unmet) what += (what.empty() ? "" : ", ") + u;
    res.validity.add(
        "stopped_early",
        fmt::format(
            "a maximum ({}, {:g} s) ended the "
            "measurement after {} in {:.3g} s, before {}",
            util::count(r.stop.max_iterations, "iteration"), r.stop.max_seconds,
            util::count(res.samples.size(), "iteration"), elapsed, what));
  }
}

void finish(const model::Model& m, const results::RunRequest& r,
            const machine::Peak& peak, results::RunResult& res) {
  res.stats = summarize(res.samples);
  const double per_sample = r.mode == backend::Mode::kTrain
                                ? res.cost.train_flops
                                : res.cost.forward_flops;
  res.samples_per_second = static_cast<double>(r.batch) / res.stats.median;
  res.gflops = per_sample * res.samples_per_second / 1e9;
  // The peaks are this machine's CPU's: a run on an accelerator is no
  // fraction of them (left 0, as where no peak was measured).
  if (r.options.device != "cpu") return;
  // Against the peak of the run's own precision: a bf16 run is not a
  // fraction of the fp32 GEMM's rate.
  res.peak_gflops = peak.for_precision(r.options.precision);
  if (res.peak_gflops > 0) res.peak_fraction = res.gflops / res.peak_gflops;
  const double ceiling = r.options.precision == "bf16"
                             ? peak.theoretical.bf16_gflops
                             : peak.theoretical.fp32_gflops;
  if (ceiling > 0) res.theoretical_fraction = res.gflops / ceiling;
}

void run_stages(backend::Backend& b, const model::Model& m,
                const results::RunRequest& r, const machine::Peak& peak,
                Parallel& par, results::RunResult& res) {
  par.check_config(b, m);  // first: every rank reaches it
  if (r.batch <= 0)
    throw results::RunError(State::kInvalidArgs, "batch must be > 0");
  const double need = estimate_memory_bytes(m, r);
  const double have = machine::available_memory_bytes();
  // The estimate is of the memory a step's tensors live in, the host's only
  // on the CPU; on an accelerator its own allocator decides, and its
  // out-of-memory error is the cell's state (oom_source "allocation").
  const bool on_host = r.options.device == "cpu";
  if (r.memory_check && on_host && have > 0 && need > 0.9 * have) {
    // Refused: nothing allocated, nothing run.
    throw results::RunError(
        State::kOom,
        fmt::format("estimated {} needed, {} available (disable with "
                    "--no-memory-check)",
                    util::bytes_text(need), util::bytes_text(have)),
        "estimate");
  }
  // What the description says the backend cannot do is refused before
  // anything is built.
  if (par.active() && r.mode == backend::Mode::kTrain &&
      !b.describe().can.data_parallel)
    throw backend::Unimplemented("data-parallel training (the " + b.name() +
                                 " backend has no gradient reducer)");
  auto t0 = Clock::now();
  const bool train = r.mode == backend::Mode::kTrain;
  backend::Options o = r.options;  // the request keeps what was asked
  o.threads = machine::resolve_threads(o.threads);
  const int64_t batch = par.batch_per_rank();
  auto exe = b.compile(
      m, o,
      train ? backend::Shapes::train(batch) : backend::Shapes::infer(batch));
  par.attach(*exe);
  res.compile_seconds = seconds_since(t0);
  res.effective = exe->effective();
  t0 = Clock::now();
  const auto batches = make_batches(m, r, par);
  exe->load_batches(batches);
  res.data_seconds = seconds_since(t0);
  // Backends may choose kernels per batch size when batches arrive.
  res.effective = exe->effective();
  par.ready(false);
  Loop loop(*exe, r, static_cast<int>(batches.size()));
  warm_up(loop, *exe, r, par, res);
  measure(loop, r, par, res);
  if (r.mode == backend::Mode::kTrain)
    check_loss(*exe, loop.steps(), &res.last_loss);
  finish(m, r, peak, res);
  par.finish(res, effective_threads(res, r));
}

}  // namespace

double estimate_memory_bytes(const model::Model& m,
                             const results::RunRequest& r) {
  const model::Cost c = model::analyze(m);
  const bool train = r.mode == backend::Mode::kTrain;
  // Weights; training adds gradients and momentum buffers.
  const double weights = 4.0 * static_cast<double>(c.params) * (train ? 3 : 1);
  // Training keeps layer outputs and their gradients; inference frees them
  // as it goes, but the largest few coexist: count a quarter as a bound.
  const double acts = 4.0 * c.activation_floats * static_cast<double>(r.batch) *
                      (train ? 2.0 : 0.25);
  const double data = r.distinct_batches * data::batch_bytes(m, r.batch);
  return weights + acts + data;
}

namespace {

results::RunResult describe(backend::Backend& b, const model::Model& m,
                            const results::RunRequest& r) {
  results::RunResult res;
  res.model = m.name;
  res.requested = r;
  res.backend = b.name();
  res.backend_version = b.version();
  res.first_loss = res.last_loss = std::nan("");
  res.model_hash = model::model_hash(m);
  res.cost = model::analyze(m);
  return res;
}

}  // namespace

results::RunResult failed_result(backend::Backend& b, const model::Model& m,
                                 const results::RunRequest& r,
                                 results::State state,
                                 const std::string& message) {
  results::RunResult res = describe(b, m, r);
  res.state = state;
  res.message = message;
  return res;
}

namespace {

results::RunResult run_once(backend::Backend& b, const model::Model& m,
                            const results::RunRequest& r,
                            const machine::Peak& peak,
                            distributed::Group* group) {
  results::RunResult res = describe(b, m, r);
  try {
    Parallel par(group, r);
    try {
      run_stages(b, m, r, peak, par, res);
    } catch (...) {
      // Tell the other ranks, who would wait for this one in the first
      // step; a failure after the checkpoint ends in the engine's error
      // or timeout on the others (or mpirun ends the job).
      if (!par.passed_ready())
        par.ready(true);
      else if (group)
        group->mark_broken();
      throw;
    }
  } catch (...) {
    res.fail(results::classify(std::current_exception()));
  }
  return res;
}

}  // namespace

results::RunResult run(backend::Backend& b, const model::Model& m,
                       const results::RunRequest& r, const machine::Peak& peak,
                       distributed::Group* group) {
  const results::ContentionPolicy& p = r.contention;
  for (int attempt = 1;; ++attempt) {
    results::RunResult res = run_once(b, m, r, peak, group);
    res.attempts = attempt;
    // Only contention is worth a rerun: other reasons would come again.
    bool contended = false;
    for (const auto& why : res.validity.reasons)
      contended = contended || why.reason == "contended";
    // Ranks decide together (one collective per attempt, on every rank):
    // one rank's contended run makes all contended and all retry; other
    // reasons stay each rank's own, so no rank retries alone and waits in
    // a collective the others never join.
    if (group) {
      const bool any = distributed::first_failed_rank(*group, contended) >= 0;
      if (any && !contended)
        res.validity.add("contended",
                         "another rank's threads did not get "
                         "their CPUs (see its output)");
      contended = any;
    }
    if (!contended || p.action != results::ContentionPolicy::Action::kRetry ||
        attempt > p.retries)
      return res;
    std::this_thread::sleep_for(std::chrono::duration<double>(p.pause_seconds));
  }
}

}  // namespace nnbench::bench
