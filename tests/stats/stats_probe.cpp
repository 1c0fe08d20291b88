// Prints nnbench's statistics for the cases on stdin, for scipy_oracle.py
// to check against SciPy. In: a JSON array of {"a": [...], "b": [...],
// "q": 0.9, "resamples": N}. Out: one JSON array of results.
#include <iostream>
#include <nlohmann/json.hpp>

#include "bench/statistics.h"
#include "compare/tests.h"

int main() {
  using nlohmann::json;
  namespace c = nnbench::compare;
  const json in = json::parse(std::cin);
  json out = json::array();
  for (const auto& t : in) {
    const std::vector<double> a = t.at("a"), b = t.at("b");
    const auto mw = c::mann_whitney_u(a, b);
    const auto q = nnbench::bench::quantile_ci(a, t.at("q"), 0.95);
    const auto ci = c::bootstrap_ratio_ci(
        a, b,
        [](const std::vector<double>& x) { return nnbench::bench::median(x); },
        0.95, t.at("resamples"), 7);
    out.push_back({{"u", mw.u},
                   {"p", mw.p},
                   {"quantile_ci", {q.lo, q.hi, q.coverage}},
                   {"median_ratio_ci", {ci.lo, ci.hi}}});
  }
  std::cout << out.dump() << "\n";
}
