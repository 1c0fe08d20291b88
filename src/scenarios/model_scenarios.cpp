// Throughput and batch-1 latency on synthetic data: the runner's loop
// (bench/step_loop.h) on a model from the zoo or a model file.
#include <fmt/core.h>

#include "bench/step_loop.h"
#include "model/model_file.h"
#include "model/zoo/zoo.h"
#include "scenarios/scenario.h"
#include "util/error.h"

namespace nnbench::scenarios {
namespace {

model::Model model_of(const Case& c) {
  if (c.model.empty() == c.model_file.empty())
    throw Error("give exactly one of a model name or a model file");
  return c.model.empty() ? model::load_model_file(c.model_file)
                         : model::zoo::get(c.model);
}

std::unique_ptr<results::RunResult> record_of(const Case& c,
                                              const std::string& kind) {
  auto r = std::make_unique<results::RunResult>();
  r->kind = kind;
  r->model = c.model.empty() ? c.model_file : c.model;
  r->backend = c.request.backend;
  r->requested = c.request;
  r->state = results::State::kFailed;
  return r;
}

// A record for a case that failed before the runner could start (an
// unknown model, a setting this scenario does not take).
std::unique_ptr<results::RunResult> refused(backend::Backend& b, const Case& c,
                                            const std::string& kind) {
  auto r = record_of(c, kind);
  r->backend = b.name();
  r->backend_version = b.version();
  r->fail(results::classify(std::current_exception()));
  return r;
}

std::unique_ptr<results::Record> refused_now(backend::Backend& b, const Case& c,
                                             const std::string& kind,
                                             const std::string& why) {
  try {
    throw results::RunError(results::State::kInvalidArgs, why);
  } catch (...) {
    return refused(b, c, kind);
  }
}

std::unique_ptr<results::Record> run_model(backend::Backend& b, const Case& c,
                                           const results::RunRequest& r,
                                           const Context& ctx,
                                           const std::string& kind) {
  try {
    if (!c.settings.empty())
      throw Error("setting '" + c.settings.begin()->first +
                  "' is not one the " + kind + " scenario takes");
    const model::Model m = model_of(c);
    auto out = std::make_unique<results::RunResult>(
        bench::run(b, m, r, ctx.peak, ctx.group));
    out->kind = kind;
    return out;
  } catch (...) {
    return refused(b, c, kind);
  }
}

class Throughput : public Scenario {
 public:
  std::string name() const override { return "throughput"; }
  std::string summary() const override {
    return "time per mini-batch and samples/s at the requested batch, mode "
           "and threads (synthetic data)";
  }
  std::unique_ptr<results::Record> run(backend::Backend& b, const Case& c,
                                       const Context& ctx) override {
    return run_model(b, c, c.request, ctx, name());
  }
  std::unique_ptr<results::Record> empty_record(const Case& c) const override {
    return record_of(c, name());
  }
};

// Single-stream latency: one sample at a time, inference only; the
// record's stats give the median and the p90/p99 tail.
class Latency : public Scenario {
 public:
  std::string name() const override { return "latency"; }
  bool infers_only() const override { return true; }
  std::string summary() const override {
    return "batch-1 inference latency: median, p90, p99 (synthetic data)";
  }
  std::unique_ptr<results::Record> run(backend::Backend& b, const Case& c,
                                       const Context& ctx) override {
    if (ctx.group)
      return refused_now(b, c, name(),
                         "the latency scenario runs one process (batch 1)");
    results::RunRequest r = c.request;
    r.mode = backend::Mode::kInfer;
    r.batch = 1;
    return run_model(b, c, r, ctx, name());
  }
  std::unique_ptr<results::Record> empty_record(const Case& c) const override {
    return record_of(c, name());
  }
  // The batch and mode are this scenario's: a user who set others meant
  // the throughput scenario.
  std::string request_problem(
      const results::RunRequest& r,
      const std::set<std::string>& given) const override {
    std::string wrong;
    if (given.count("batch") && r.batch != 1)
      wrong = "--batch " + std::to_string(r.batch);
    if (given.count("mode") && r.mode != backend::Mode::kInfer)
      wrong += (wrong.empty() ? "" : " and ") + std::string("--mode ") +
               backend::mode_name(r.mode);
    if (wrong.empty()) return "";
    return "--scenario latency measures batch-1 inference, not " + wrong +
           " (the throughput scenario takes those)";
  }
  std::string notes(const results::Record& rec) const override {
    const auto* r = dynamic_cast<const results::RunResult*>(&rec);
    if (!r || r->state != results::State::kOk) return "";
    return fmt::format(
        "latency, batch 1: p50 {:.3f} ms, p90 {:.3f} ms, p99 {:.3f} ms "
        "({} samples; percentiles interpolated linearly, type 7)\n",
        r->stats.median * 1e3, r->stats.p90 * 1e3, r->stats.p99 * 1e3,
        r->stats.n);
  }
};

}  // namespace

std::unique_ptr<Scenario> make_throughput() {
  return std::make_unique<Throughput>();
}
std::unique_ptr<Scenario> make_latency() { return std::make_unique<Latency>(); }

}  // namespace nnbench::scenarios
