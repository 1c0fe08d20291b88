// Generation: a prompt, then new tokens one at a time on the KV cache
// (bench/generation.h), with time to first token, time per output token,
// inter-token percentiles and the fraction of the memory-bandwidth ceiling.
// Settings: prompt, new_tokens, warmup, repetitions (llama-bench's pp512 /
// tg128 by default); the batch is the request's.
#include "bench/generation.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>

#include "machine/cpu.h"
#include "machine/environment.h"
#include "model/analysis.h"
#include "model/model_file.h"
#include "model/zoo/zoo.h"
#include "scenarios/scenario.h"
#include "util/error.h"
#include "util/text.h"

namespace nnbench::scenarios {
namespace {

// A setting's whole-number value; `field` names it in the error.
int64_t whole(const std::string& text, const std::string& field) {
  double x = 0;
  if (!util::parse_number(text, x) || x != std::floor(x) || std::fabs(x) > 9e15)
    throw Error("setting '" + field + "' must be a whole number, not '" + text +
                "'");
  return static_cast<int64_t>(x);
}

// A count that must fit its bound before it is narrowed to an int.
int small(int64_t v, const std::string& field, int lo, int hi) {
  if (v < lo || v > hi)
    throw Error(field + " " + std::to_string(v) + " is outside [" +
                std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return static_cast<int>(v);
}

// The request a case's settings and batch make; throws nnbench::Error
// naming an unknown setting, a bad value or one out of bounds.
results::GenerationRequest request_of(
    const std::map<std::string, std::string>& settings, int64_t batch) {
  results::GenerationRequest g;
  g.batch = batch;
  for (const auto& [k, v] : settings) {
    if (k == "prompt")
      g.prompt = whole(v, k);
    else if (k == "new_tokens")
      g.new_tokens = whole(v, k);
    else if (k == "warmup")
      g.warmup = small(whole(v, k), k, 0, results::kMaxGenerationWarmup);
    else if (k == "repetitions")
      g.repetitions =
          small(whole(v, k), k, 1, results::kMaxGenerationRepetitions);
    else
      throw Error("setting '" + k +
                  "' is not one the generation scenario takes (prompt, "
                  "new_tokens, warmup, repetitions)");
  }
  if (const auto why = results::generation_request_problem(g); !why.empty())
    throw Error(why);
  return g;
}

// The arrays' size: four times the last-level caches (stream_array_bytes).
int64_t array_bytes() {
  return machine::stream_array_bytes(machine::describe_cpu({}),
                                     machine::available_memory_bytes());
}

// Measured anew each time: on a shared machine the bandwidth moves within
// minutes, so a run's ceiling comes from measurements around it.
machine::Bandwidth bandwidth_at(int threads) {
  return machine::measure_bandwidth(threads, array_bytes());
}

// The same read kernel on an array of the same rule's size, made once a
// run. None where the weights are smaller than that array: a read would
// then evict caches that hold the weights between repetitions (so the
// next time to first token would be a cold one), and a ceiling means
// nothing for weights the caches hold anyway (docs/generation.md).
std::function<double()> read_probe_at(int threads, double weight_bytes) {
  const int64_t bytes = array_bytes();
  if (weight_bytes < static_cast<double>(bytes)) return {};
  auto probe = std::make_shared<machine::ReadProbe>(threads, bytes);
  return [probe] { return probe->measure(); };
}

class Generation : public Scenario {
 public:
  std::string name() const override { return "generation"; }
  bool infers_only() const override { return true; }
  std::string summary() const override {
    return "a prompt, then tokens one at a time: time to first token, per "
           "output token, percentiles, fraction of the bandwidth ceiling";
  }
  std::unique_ptr<results::Record> run(backend::Backend& b, const Case& c,
                                       const Context& ctx) override {
    auto out = std::make_unique<results::GenerationRun>();
    try {
      if (ctx.group)
        throw results::RunError(results::State::kInvalidArgs,
                                "the generation scenario runs one process");
      if (c.model.empty() == c.model_file.empty())
        throw Error("give exactly one of a model name or a model file");
      const model::Model m = c.model.empty()
                                 ? model::load_model_file(c.model_file)
                                 : model::zoo::get(c.model);
      const auto g = request_of(c.settings, c.request.batch);
      *out = bench::run_generation(
          b, m, c.request, g,
          [](int threads) -> std::optional<machine::Bandwidth> {
            return bandwidth_at(threads);
          },
          read_probe_at);
    } catch (...) {
      *out = results::GenerationRun{};
      out->model = c.model.empty() ? c.model_file : c.model;
      out->backend = b.name();
      out->backend_version = b.version();
      out->requested = c.request;
      out->fail(results::classify(std::current_exception()));
    }
    return out;
  }
  std::string settings_problem(
      const std::map<std::string, std::string>& settings,
      std::string* which) const override {
    for (const auto& [k, v] : settings) {
      try {
        request_of({{k, v}}, 1);
      } catch (const Error& e) {
        *which = k;
        return e.what();
      }
    }
    return "";
  }
  std::string request_problem(
      const results::RunRequest& r,
      const std::set<std::string>& given) const override {
    if (given.count("mode") && r.mode != backend::Mode::kInfer)
      return "--scenario generation runs inference, not --mode " +
             backend::mode_name(r.mode);
    if (r.batch < 1 || r.batch > results::kMaxGenerationBatch)
      return "--batch " + std::to_string(r.batch) + " is outside [1, " +
             std::to_string(results::kMaxGenerationBatch) + "] for generation";
    return "";
  }
  // Forward work of every token of every generation at 50 GFLOP/s, plus
  // the bandwidth measurement and start-up.
  double estimate_seconds(const Case& c) const override {
    try {
      const model::Model m = model::zoo::get(c.model);
      const auto g = request_of(c.settings, c.request.batch);
      const double per_token = model::analyze(m).forward_flops /
                               static_cast<double>(m.input.shape.at(0));
      const double tokens = static_cast<double>(g.batch) *
                            static_cast<double>(g.prompt + g.new_tokens) *
                            (g.warmup + g.repetitions);
      return 3.0 + per_token * tokens / 50e9;
    } catch (const Error&) {
      return -1;
    }
  }
  std::string notes(const results::Record& rec) const override {
    const auto* r = dynamic_cast<const results::GenerationRun*>(&rec);
    if (!r || r->state != results::State::kOk) return "";
    const size_t tokens =
        r->ttft_seconds.size() * static_cast<size_t>(r->asked.new_tokens - 1);
    std::string out = fmt::format(
        "generation, batch {}, prompt {} tokens, {} new: inter-token p50 "
        "{:.3f} ms [{:.3f}, {:.3f}], p90 {:.3f} ms, p99 {:.3f} ms ({} tokens "
        "over {} repetitions{})\n",
        r->asked.batch, r->asked.prompt, r->asked.new_tokens,
        r->itl_p50.value * 1e3, r->itl_p50.ci.lo * 1e3, r->itl_p50.ci.hi * 1e3,
        r->itl_p90.value * 1e3, r->itl_p99.value * 1e3, tokens,
        r->ttft_seconds.size(),
        tokens < 368 ? "; p99's 95 % interval needs 368 tokens" : "");
    if (r->ceiling) {
      const auto& c = *r->ceiling;
      const auto& m = c.measured_gbs;
      const auto& b = c.between_gbs;
      std::string measured =
          fmt::format("{:.1f} GB/s measured {}", fmt::join(m, ", "),
                      m.size() > 1 ? "before and after" : "once");
      if (!b.empty())
        measured += fmt::format(
            ", and {} quick reads of {:.1f} to {:.1f} GB/s around the "
            "repetitions",
            b.size(), *std::min_element(b.begin(), b.end()),
            *std::max_element(b.begin(), b.end()));
      if (m.size() + b.size() > 1) measured = "the best of " + measured;
      const std::string where =
          c.device.empty()
              ? fmt::format("{} thread{}", c.threads, c.threads == 1 ? "" : "s")
              : "on " + c.device + ", the engine's own";
      out += fmt::format(
          "bandwidth ceiling: {:.1f} GB/s ({}, {}; {}) over {:.1f} "
          "MB of weights = {:.1f} steps/s; this run {:.1f} steps/s, {:.0f} % "
          "of it\n",
          c.bandwidth_gbs, c.kernel, where, measured, r->weight_bytes / 1e6,
          c.steps_per_second, 1 / r->tpot.median, 100 * c.fraction);
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<Scenario> make_generation() {
  return std::make_unique<Generation>();
}

}  // namespace nnbench::scenarios
