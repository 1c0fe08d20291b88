#include "bench/generation.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "bench/cpu_usage.h"
#include "bench/statistics.h"
#include "data/synthetic.h"
#include "machine/environment.h"
#include "machine/threads.h"
#include "model/analysis.h"
#include "model/generation.h"

namespace nnbench::bench {
namespace {

results::Percentile percentile(const std::vector<double>& x, double q) {
  return {quantile(x, q), quantile_ci(x, q)};
}

// One timed repetition; greedy decoding of the same prompts must give the
// first repetition's tokens again.
void add_repetition(double ttft, std::vector<double> itl,
                    std::vector<int64_t> tokens, results::GenerationRun& out) {
  const size_t rep = out.ttft_seconds.size() + 1;
  if (itl.size() + 1 != static_cast<size_t>(out.asked.new_tokens) ||
      tokens.size() != static_cast<size_t>(out.asked.new_tokens))
    throw results::RunError(
        results::State::kFailed,
        "repetition " + std::to_string(rep) + " gave " +
            std::to_string(tokens.size()) + " tokens and " +
            std::to_string(itl.size()) + " inter-token times, not " +
            std::to_string(out.asked.new_tokens) + " and one fewer");
  if (out.tokens.empty())
    out.tokens = tokens;
  else if (tokens != out.tokens)
    throw results::RunError(results::State::kFailed,
                            "greedy decoding gave other tokens in repetition " +
                                std::to_string(rep) + " than in the first");
  out.ttft_seconds.push_back(ttft);
  out.itl_seconds.push_back(std::move(itl));
}

void take_times(backend::GenerationTimes t, results::GenerationRun& out) {
  const size_t reps = static_cast<size_t>(out.asked.repetitions);
  if (t.ttft.size() != reps || t.itl.size() != reps || t.tokens.size() != reps)
    throw results::RunError(results::State::kFailed,
                            "the generator timed " +
                                std::to_string(t.ttft.size()) +
                                " repetitions, not " + std::to_string(reps));
  for (size_t i = 0; i < reps; ++i)
    add_repetition(t.ttft[i], std::move(t.itl[i]), std::move(t.tokens[i]), out);
}

}  // namespace

void check_generation_memory(const model::Model& m,
                             const results::GenerationRequest& g,
                             const results::RunRequest& request, int copies) {
  // The host's memory bounds a generation on the host only (the weights
  // and cache of one on a GPU live there; its own allocator says oom).
  const std::string& device = request.options.device;
  if (!request.memory_check || !(device.empty() || device == "cpu")) return;
  double cache = 0;
  const auto shapes = model::infer_shapes(m);
  for (size_t i = 0; i < m.layers.size(); ++i)
    if (m.layers[i].op == model::Op::kAttention)
      cache += 2.0 * 4.0 * double(g.batch) * double(g.prompt + g.new_tokens) *
               double(shapes[i].back());
  const double need = copies * (cache + 4.0 * double(model::analyze(m).params));
  const double have = machine::available_memory_bytes();
  if (have > 0 && need > have)
    throw results::RunError(results::State::kOom,
                            "estimated " + std::to_string(need / 1e9) +
                                " GB (KV cache " + std::to_string(cache / 1e9) +
                                " GB and the weights) exceed the " +
                                std::to_string(have / 1e9) + " GB available",
                            "estimate");
}

double steady_seconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void time_generation(backend::Generator& g,
                     const std::vector<std::vector<int64_t>>& prompts,
                     results::GenerationRun& out, const Seconds& now,
                     const std::function<void()>& between) {
  const results::GenerationRequest& a = out.asked;
  if (!between) {
    if (auto t = g.timed(prompts, a.new_tokens, a.warmup, a.repetitions)) {
      take_times(std::move(*t), out);
      return;
    }
  }
  bool first_measured = false;
  // An engine that times itself, with measurements between the timed
  // generations: one call a repetition (the warm-up's last generation is
  // timed by it and dropped, so as many generations run as in one call).
  // A plain engine answers no call, at no cost.
  if (between &&
      (a.warmup == 0 || g.timed(prompts, a.new_tokens, a.warmup - 1, 1))) {
    between();
    first_measured = true;
    for (int rep = 0; rep < a.repetitions; ++rep) {
      auto t = g.timed(prompts, a.new_tokens, 0, 1);
      if (!t && rep == 0 && a.warmup == 0) break;  // a plain engine
      if (!t || t->ttft.size() != 1 || t->itl.size() != 1 ||
          t->tokens.size() != 1)
        throw results::RunError(results::State::kFailed,
                                "the generator did not time repetition " +
                                    std::to_string(rep + 1) +
                                    " alone as asked");
      add_repetition(t->ttft[0], std::move(t->itl[0]), std::move(t->tokens[0]),
                     out);
      between();
    }
    if (static_cast<int>(out.ttft_seconds.size()) == a.repetitions) return;
  }
  const int runs = a.warmup + a.repetitions;
  for (int rep = 0; rep < runs; ++rep) {
    const bool timed = rep >= a.warmup;
    if (between && rep == a.warmup && !first_measured) between();
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
    add_repetition(ttft, std::move(itl), std::move(row0), out);
    if (between) between();
  }
}

void summarize_generation(results::GenerationRun& r,
                          const std::vector<machine::Bandwidth>& measured,
                          const std::vector<double>& between) {
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
  const machine::Bandwidth* best = nullptr;
  for (const auto& b : measured)
    if (b.read_gbs > 0 && (!best || b.read_gbs > best->read_gbs)) best = &b;
  if (!best || r.weight_bytes <= 0) return;
  results::Ceiling c;
  c.bandwidth_gbs = best->read_gbs;
  c.threads = best->threads;
  c.pages = best->pages;
  for (const auto& b : measured)
    if (b.read_gbs > 0) c.measured_gbs.push_back(b.read_gbs);
  for (double gbs : between)
    if (gbs > 0 && std::isfinite(gbs)) {
      c.between_gbs.push_back(gbs);
      c.bandwidth_gbs = std::max(c.bandwidth_gbs, gbs);
    }
  c.steps_per_second = c.bandwidth_gbs * 1e9 / r.weight_bytes;
  c.fraction = (1 / r.tpot.median) / c.steps_per_second;
  r.ceiling = c;
}

namespace {

// Why a finished run has no ceiling, for its record.
std::string no_ceiling_reason(const results::GenerationRun& r,
                              const std::string& asked, bool host,
                              bool ran_on_host) {
  if (ran_on_host != host)
    return "asked for " + (host ? std::string("cpu") : asked) +
           ", the engine ran on " +
           (ran_on_host ? std::string("cpu") : r.effective.device) +
           ": the bandwidth measured was not of the memory it read";
  if (r.weight_bytes <= 0) return "no weight bytes for this precision";
  if (host) return "the host's read bandwidth could not be measured";
  return "the " + r.backend + " engine did not measure the bandwidth of " +
         r.effective.device + " (it measures none, or it failed)";
}

}  // namespace

results::GenerationRun run_generation(backend::Backend& b,
                                      const model::Model& m,
                                      const results::RunRequest& request,
                                      const results::GenerationRequest& g,
                                      const BandwidthAt& bandwidth,
                                      const ReadProbeAt& probe_at) {
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
    r.weight_bytes = model::weight_bytes(m, request.options.precision);
    check_generation_memory(m, g, request, 1);
    backend::Options o = request.options;
    o.threads = machine::resolve_threads(o.threads);
    int threads = o.threads;
    const int read_threads = threads;  // the probe's, between repetitions
    // The host's bandwidth bounds a generation on the host only; measured
    // before and after, as it moves on a shared machine (a missing one is
    // no ceiling rather than no record).
    const bool host =
        request.options.device.empty() || request.options.device == "cpu";
    std::vector<machine::Bandwidth> measured;
    std::vector<double> between;  // read GB/s before and after each timed rep
    const auto measure = [&](int at) {
      try {
        if (auto bw = bandwidth(at)) measured.push_back(*bw);
      } catch (const std::exception&) {
      }
    };
    // A device's bandwidth is its engine's to measure, before and after
    // too; one it cannot measure leaves the run without a ceiling.
    std::vector<machine::Bandwidth> on_device;
    const auto measure_device = [&](backend::Generator& gen) {
      if (host) return;
      try {
        if (auto d = gen.device_bandwidth()) {
          machine::Bandwidth bw;
          bw.read_gbs = d->read_gbs;
          bw.array_bytes = d->array_bytes;
          bw.passes = d->passes;
          bw.method = d->method;
          bw.seconds = d->seconds;
          on_device.push_back(bw);
        }
      } catch (const std::exception&) {
      }
    };
    {
      auto gen = b.generator(m, o, {g.batch, g.prompt, g.new_tokens});
      if (host) measure(threads);  // only for an engine that generates
      measure_device(*gen);
      const auto prompts =
          data::synthetic_prompts(g.batch, g.prompt, m.input.vocab, o.seed);
      // The host's read bandwidth between the repetitions too, at the
      // threads asked (dropped below with the first measurement where the
      // engine ran at others); one that fails leaves the run without them.
      std::function<double()> read;
      if (host && probe_at) try {
          read = probe_at(threads, r.weight_bytes);
        } catch (const std::exception&) {
        }
      const auto read_between = [&] {
        try {
          between.push_back(read());
        } catch (const std::exception&) {
          between.push_back(0);
        }
      };
      UsageProbe probe(gen->processes());  // over the warm-up too
      probe.start();
      time_generation(
          *gen, prompts, r, steady_seconds,
          read ? std::function<void()>(read_between) : std::function<void()>());
      r.effective = gen->effective();
      if (r.effective.threads > 0) threads = r.effective.threads;
      r.cpu_usage = probe.stop(threads);
      measure_device(*gen);
    }  // the generator's memory freed before the host's second measurement
    judge_contention(r.cpu_usage, request.contention.rule, r.validity);
    // Where the engine says it ran decides, once: measurements of the
    // other memory than the one it read its weights from bound nothing.
    const bool ran_on_host =
        r.effective.device.empty() || r.effective.device == "cpu";
    if (ran_on_host != host) {
      measured.clear();
    } else if (host) {
      // At the threads the engine ran (its record's): a measurement before
      // at another count does not apply.
      std::erase_if(measured, [&](const machine::Bandwidth& bw) {
        return bw.threads != threads;
      });
      if (read_threads != threads) between.clear();
      measure(threads);
    } else {
      measured = on_device;
    }
    summarize_generation(r, measured, between);
    if (r.ceiling && !host) r.ceiling->device = r.effective.device;
    if (!r.ceiling)
      r.no_ceiling =
          no_ceiling_reason(r, request.options.device, host, ran_on_host);
    r.state = results::State::kOk;
  } catch (...) {
    r.fail(results::classify(std::current_exception()));
  }
  return r;
}

}  // namespace nnbench::bench
