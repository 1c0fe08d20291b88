#include "bench/generation.h"

#include <chrono>
#include <random>

#include "bench/cpu_usage.h"
#include "bench/statistics.h"
#include "machine/threads.h"
#include "model/generation.h"

namespace nnbench::bench {
namespace {

results::Percentile percentile(const std::vector<double>& x, double q) {
  return {quantile(x, q), quantile_ci(x, q)};
}

}  // namespace

double steady_seconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::vector<std::vector<int64_t>> make_prompts(int64_t batch, int64_t prompt,
                                               int64_t vocab, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> id(0, vocab - 1);
  std::vector<std::vector<int64_t>> out(batch);
  for (auto& row : out)
    for (int64_t i = 0; i < prompt; ++i) row.push_back(id(rng));
  return out;
}

void time_generation(backend::Generator& g,
                     const std::vector<std::vector<int64_t>>& prompts,
                     results::GenerationRun& out, const Seconds& now) {
  const results::GenerationRequest& a = out.asked;
  const int runs = a.warmup + a.repetitions;
  for (int rep = 0; rep < runs; ++rep) {
    const bool timed = rep >= a.warmup;
    std::vector<int64_t> row0;
    std::vector<double> itl;
    double t = now();
    std::vector<int64_t> next = g.prefill(prompts);
    double t1 = now();
    const double ttft = t1 - t;
    row0.push_back(next.at(0));
    for (int64_t k = 1; k < a.new_tokens; ++k) {
      t = t1;
      next = g.decode(next);
      t1 = now();
      itl.push_back(t1 - t);
      row0.push_back(next.at(0));
    }
    if (!timed) continue;
    if (out.tokens.empty())
      out.tokens = row0;
    else if (row0 != out.tokens)
      throw results::RunError(
          results::State::kFailed,
          "greedy decoding gave other tokens in repetition " +
              std::to_string(rep - a.warmup + 1) + " than in the first");
    out.ttft_seconds.push_back(ttft);
    out.itl_seconds.push_back(std::move(itl));
  }
}

void summarize_generation(results::GenerationRun& r,
                          const std::optional<machine::Bandwidth>& bw) {
  std::vector<double> tpot, all;
  for (const auto& itl : r.itl_seconds) {
    tpot.push_back(mean(itl));
    all.insert(all.end(), itl.begin(), itl.end());
  }
  r.ttft = summarize(r.ttft_seconds);
  r.tpot = summarize(tpot);
  r.itl_p50 = percentile(all, 0.50);
  r.itl_p90 = percentile(all, 0.90);
  r.itl_p99 = percentile(all, 0.99);
  const double batch = static_cast<double>(r.asked.batch);
  r.prefill_tokens_per_second =
      batch * static_cast<double>(r.asked.prompt) / r.ttft.median;
  r.generation_tokens_per_second = batch / r.tpot.median;
  r.ceiling.reset();
  if (bw && bw->triad_gbs > 0 && r.weight_bytes > 0) {
    results::Ceiling c;
    c.bandwidth_gbs = bw->triad_gbs;
    c.threads = bw->threads;
    c.steps_per_second = bw->triad_gbs * 1e9 / r.weight_bytes;
    c.fraction = (1 / r.tpot.median) / c.steps_per_second;
    r.ceiling = c;
  }
}

results::GenerationRun run_generation(backend::Backend& b,
                                      const model::Model& m,
                                      const results::RunRequest& request,
                                      const results::GenerationRequest& g,
                                      const BandwidthAt& bandwidth) {
  results::GenerationRun r;
  r.model = m.name;
  r.backend = b.name();
  r.backend_version = b.version();
  r.requested = request;
  r.asked = g;
  try {
    if (const std::string why = results::generation_request_problem(g);
        !why.empty())
      throw results::RunError(results::State::kInvalidArgs, why);
    r.weight_bytes = model::weight_bytes(m, 4);  // fp32
    backend::Options o = request.options;
    o.threads = machine::resolve_threads(o.threads);
    auto gen = b.generator(m, o, {g.batch, g.prompt, g.new_tokens});
    const auto prompts = make_prompts(g.batch, g.prompt, m.input.vocab, o.seed);
    UsageProbe probe;  // over the warm-up too: one interval per case
    probe.start();
    time_generation(*gen, prompts, r);
    r.effective = gen->effective();
    r.cpu_usage =
        probe.stop(r.effective.threads > 0 ? r.effective.threads : o.threads);
    judge_contention(r.cpu_usage, request.contention.rule, r.validity);
    summarize_generation(
        r,
        bandwidth(r.effective.threads > 0 ? r.effective.threads : o.threads));
    r.state = results::State::kOk;
  } catch (...) {
    r.fail(results::classify(std::current_exception()));
  }
  return r;
}

}  // namespace nnbench::bench
