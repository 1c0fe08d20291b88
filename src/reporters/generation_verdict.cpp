// The verdict under a suite's generation table: per cell (model, batch,
// prompt and new tokens, precision, threads: a bf16 engine is not compared
// with an fp32 one), the engine with the lowest median time
// per output token, and whether its 95 % interval clears the runner-up's.
// A run that is not ok and valid has no time to compare: it is named with
// its state instead.
#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "reporters/tables.h"

namespace nnbench::reporters {
namespace {

std::string ms(double s) { return fmt::format("{:.4g} ms", s * 1e3); }

std::string interval(const results::Summary& s) {
  return fmt::format("[{:.4g}, {:.4g}]", s.median_ci.lo * 1e3,
                     s.median_ci.hi * 1e3);
}

bool timed(const results::GenerationRun& r) {
  return r.state == results::State::kOk && r.validity.valid() && r.tpot.n > 0;
}

std::string cell_line(const std::string& cell,
                      const std::vector<const results::GenerationRun*>& runs) {
  std::vector<const results::GenerationRun*> ranked;
  std::string others;
  for (const auto* r : runs) {
    if (timed(*r)) {
      ranked.push_back(r);
    } else {
      const std::string state = r->state == results::State::kOk
                                    ? r->validity.summary()
                                    : results::state_name(r->state);
      others +=
          fmt::format("{}{} {}", others.empty() ? "" : ", ", r->backend, state);
    }
  }
  if (ranked.empty()) return "";
  std::stable_sort(ranked.begin(), ranked.end(), [](auto* a, auto* b) {
    return a->tpot.median < b->tpot.median;
  });
  const auto& first = *ranked[0];
  std::string line =
      fmt::format("{}: fastest per output token {} {} {}", cell, first.backend,
                  ms(first.tpot.median), interval(first.tpot));
  if (ranked.size() > 1) {
    const auto& second = *ranked[1];
    // Intervals that overlap, or that cover the median with too little
    // probability (few repetitions), do not tell the medians apart.
    const bool narrow = first.tpot.median_ci.coverage < 0.9 ||
                        second.tpot.median_ci.coverage < 0.9;
    const bool tie = first.tpot.median_ci.hi >= second.tpot.median_ci.lo;
    if (narrow)
      line += fmt::format(
          ", not told apart from {} {} (too few repetitions for a 90 % "
          "interval)",
          second.backend, ms(second.tpot.median));
    else
      line += tie ? fmt::format(", tied with {} {} {}", second.backend,
                                ms(second.tpot.median), interval(second.tpot))
                  : fmt::format(", {:.2f}x ahead of {} {} {}",
                                second.tpot.median / first.tpot.median,
                                second.backend, ms(second.tpot.median),
                                interval(second.tpot));
  } else {
    line += ", the only engine timed";
  }
  line +=
      fmt::format("; first token {} {}", first.backend, ms(first.ttft.median));
  if (!others.empty()) line += "; no time: " + others;
  return line + "\n";
}

}  // namespace

std::string threads_label(int threads) {
  return threads > 0
             ? fmt::format("{} thread{}", threads, threads > 1 ? "s" : "")
             : "all threads";
}

std::string generation_verdict(
    const std::vector<results::GenerationRun>& runs) {
  using Cell =
      std::tuple<std::string, int64_t, int64_t, int64_t, std::string, int>;
  std::map<Cell, std::vector<const results::GenerationRun*>> cells;
  std::vector<Cell> order;
  for (const auto& r : runs) {
    const Cell c{r.model,
                 r.asked.batch,
                 r.asked.prompt,
                 r.asked.new_tokens,
                 r.requested.options.precision,
                 r.requested.options.threads};
    if (!cells.count(c)) order.push_back(c);
    cells[c].push_back(&r);
  }
  std::string out;
  for (const auto& c : order) {
    const auto& [model, batch, prompt, new_tokens, precision, asked] = c;
    // Every CPU asked (0): named by what ran.
    int threads = asked;
    for (const auto* r : cells[c])
      if (threads == 0 && r->effective.threads > 0)
        threads = r->effective.threads;
    // fp32 unnamed, as everywhere else in the suite's tables.
    const std::string name = fmt::format(
        "{}, batch {}, pp{}/tg{}{}, {}", model, batch, prompt, new_tokens,
        precision.empty() || precision == "fp32" ? "" : ", " + precision,
        threads_label(threads));
    out += cell_line(name, cells[c]);
  }
  return out;
}

}  // namespace nnbench::reporters
