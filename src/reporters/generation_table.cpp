#include <fmt/core.h>

#include <cmath>

#include "reporters/tables.h"
#include "util/text_table.h"

namespace nnbench::reporters {

namespace {

std::string ms(double s) {
  return std::isfinite(s) ? fmt::format("{:.4g}", s * 1e3) : "-";
}

}  // namespace

std::string generation_table(const std::vector<results::GenerationRun>& runs) {
  util::Table t({"model", "backend", "precision", "batch", "prompt", "new",
                 "threads", "state", "TTFT ms", "95% interval ms", "TPOT ms",
                 "95% interval ms", "ITL p90 ms", "prefill tok/s", "gen tok/s",
                 "of bandwidth", "validity"});
  for (const auto& r : runs) {
    const bool ok = r.state == results::State::kOk && !r.ttft_seconds.empty();
    const auto interval = [&](const results::Summary& s) {
      return ok ? fmt::format("{} - {}", ms(s.median_ci.lo), ms(s.median_ci.hi))
                : "-";
    };
    // What ran where it ran, else what was asked.
    const std::string precision = !r.effective.precision.empty()
                                      ? r.effective.precision
                                      : r.requested.options.precision;
    t.add({r.model, r.backend, precision, std::to_string(r.asked.batch),
           std::to_string(r.asked.prompt), std::to_string(r.asked.new_tokens),
           r.effective.threads > 0 ? std::to_string(r.effective.threads) : "-",
           results::state_name(r.state), ok ? ms(r.ttft.median) : "-",
           interval(r.ttft), ok ? ms(r.tpot.median) : "-", interval(r.tpot),
           ok ? ms(r.itl_p90.value) : "-",
           ok ? fmt::format("{:.1f}", r.prefill_tokens_per_second) : "-",
           ok ? fmt::format("{:.2f}", r.generation_tokens_per_second) : "-",
           ok && r.ceiling ? fmt::format("{:.0f} %", 100 * r.ceiling->fraction)
                           : "-",
           r.validity.summary()});
  }
  return t.str();
}

}  // namespace nnbench::reporters
