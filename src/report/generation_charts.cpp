// Generation in the report: time per output token with its interval, time
// to first token, and the share of the memory-bandwidth ceiling.
#include <fmt/core.h>

#include <cmath>

#include "report/chart_parts.h"

namespace nnbench::report::parts {

using nlohmann::json;

Chart generation(const std::vector<Source>& sources) {
  Chart c{"generation",
          "Generation: time per output token",
          "Each case's median time per output token in ms (bars) with its "
          "distribution-free 95 % interval (the thin bar), over its "
          "repetitions; the table adds time to first token, tokens/s and "
          "the share of the memory-bandwidth ceiling (docs/generation.md).",
          {},
          {"case", "TTFT ms", "TPOT ms", "TPOT interval ms", "ITL p90 ms",
           "prefill tok/s", "gen tok/s", "of bandwidth", "validity"},
          {}};
  std::vector<std::string> cats;
  json tpot = json::array(), band = json::array();
  for (const auto& s : sources)
    for (const auto& r : s.generation) {
      if (r.state != results::State::kOk || r.ttft_seconds.empty()) continue;
      const std::string cat = fmt::format(
          "{} {} b{} p{} n{} t{}", r.model,
          series(s, r.backend, many_sources(sources)), r.asked.batch,
          r.asked.prompt, r.asked.new_tokens, r.effective.threads);
      c.rows.push_back(
          {cat, ms(r.ttft.median), ms(r.tpot.median),
           ms(r.tpot.median_ci.lo) + " - " + ms(r.tpot.median_ci.hi),
           ms(r.itl_p90.value),
           fmt::format("{:.1f}", r.prefill_tokens_per_second),
           fmt::format("{:.2f}", r.generation_tokens_per_second),
           r.ceiling ? fmt::format("{:.0f} %", 100 * r.ceiling->fraction) : "-",
           r.validity.summary()});
      cats.push_back(cat);
      tpot.push_back(r.tpot.median * 1e3);
      band.push_back({r.tpot.median_ci.lo * 1e3, r.tpot.median_ci.hi * 1e3});
    }
  if (cats.empty()) return c;
  json ds = json::array();
  ds.push_back({{"label", "TPOT (median)"},
                {"data", tpot},
                {"backgroundColor", shade(0)}});
  ds.push_back({{"label", "95 % interval"},
                {"data", band},
                {"backgroundColor", "rgba(214, 39, 40, 0.55)"}});
  c.config = base_config("bar", {{"labels", cats}, {"datasets", ds}},
                         axis("case"), axis("ms per output token"));
  return c;
}

}  // namespace nnbench::report::parts
