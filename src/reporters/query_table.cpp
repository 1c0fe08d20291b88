#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "reporters/tables.h"
#include "util/text_table.h"

namespace nnbench::reporters {

namespace {

std::string ms(double s) {
  return std::isfinite(s) ? fmt::format("{:.4g}", s * 1e3) : "-";
}

}  // namespace

std::string inference_table(const std::vector<results::InferenceRun>& runs) {
  util::Table t({"model", "backend", "precision", "scenario",
                 "copies x threads", "state", "LoadGen", "p-latency ms",
                 "95% interval ms", "samples/s", "accuracy", "$ per 10k",
                 "validity"});
  for (const auto& r : runs) {
    const bool failed = results::is_failure(r.state);
    const int p = static_cast<int>(std::lround(r.percentile * 100));
    // What ran where the engine said; what was asked for a run that
    // never started.
    const std::string precision = !r.effective.precision.empty()
                                      ? r.effective.precision
                                      : r.requested.options.precision;
    t.add({r.model, r.backend, precision, r.kind,
           fmt::format("{} x {}", r.instances,
                       r.effective.threads > 0
                           ? std::to_string(r.effective.threads)
                           : "?"),
           results::state_name(r.state),
           failed || r.mode == "accuracy"
               ? "-"
               : (r.loadgen_valid ? "VALID" : "INVALID"),
           failed || !std::isfinite(r.percentile_latency)
               ? "-"
               : fmt::format("p{} {}", p, ms(r.percentile_latency)),
           r.latency_samples > 0
               ? fmt::format("{} - {}", ms(r.percentile_ci.lo),
                             ms(r.percentile_ci.hi))
               : "-",
           std::isfinite(r.samples_per_second) && !failed
               ? fmt::format("{:.1f}", r.samples_per_second)
               : "-",
           std::isfinite(r.accuracy) ? fmt::format("{:.2f} %", r.accuracy * 100)
                                     : "-",
           std::isfinite(r.usd_per_10k) ? fmt::format("{:.5f}", r.usd_per_10k)
                                        : "-",
           r.validity.summary()});
  }
  std::string out = t.str();
  // Token latencies: what the table's whole-sample columns cannot show.
  for (const auto& r : runs) {
    if (!r.tokens || results::is_failure(r.state)) continue;
    const auto& k = *r.tokens;
    const int p = static_cast<int>(std::lround(r.percentile * 100));
    out += fmt::format(
        "{} {} tokens (prompt {}, {} new): TTFT p{} {} ms (bound {} ms), "
        "TPOT p{} {} ms (bound {} ms), {} tokens/s\n",
        r.model, r.backend, k.prompt, k.new_tokens, p, ms(k.ttft),
        ms(k.ttft_bound), p, ms(k.tpot), ms(k.tpot_bound),
        std::isfinite(k.tokens_per_second)
            ? fmt::format("{:.1f}", k.tokens_per_second)
            : "-");
  }
  return out;
}

}  // namespace nnbench::reporters
