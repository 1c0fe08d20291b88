#include "compare/compare.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "bench/statistics.h"
#include "compare/tests.h"

namespace nnbench::compare {

std::string verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kFaster:
      return "faster";
    case Verdict::kSlower:
      return "slower";
    case Verdict::kNoChange:
      return "no change";
    case Verdict::kInconclusive:
      return "inconclusive";
  }
  return "?";
}

std::vector<double> samples_of(const Side& s, bool by_repetition) {
  std::vector<double> out;
  for (const auto& r : s.repetitions) {
    if (r.empty()) continue;
    if (by_repetition)
      out.push_back(bench::median(r));
    else
      out.insert(out.end(), r.begin(), r.end());
  }
  return out;
}

Verdict decide(int reps_a, int reps_b, int n_a, int n_b, double p, double ratio,
               const Options& o, std::string* why) {
  if (reps_a < o.min_repetitions || reps_b < o.min_repetitions) {
    *why = fmt::format(
        "{} and {} repetitions; at least {} a side needed (one process's "
        "iterations do not show how much processes differ)",
        reps_a, reps_b, o.min_repetitions);
    return Verdict::kInconclusive;
  }
  if (n_a < o.min_samples || n_b < o.min_samples) {
    *why = fmt::format("{} and {} samples; at least {} a side needed", n_a, n_b,
                       o.min_samples);
    return Verdict::kInconclusive;
  }
  if (p >= o.alpha) {
    *why = fmt::format("not significant (p = {:.3g} >= {})", p, o.alpha);
    return Verdict::kNoChange;
  }
  if (std::abs(ratio - 1) <= o.noise) {
    *why = fmt::format(
        "significant (p = {:.3g}) but within the {:g} % noise "
        "threshold",
        p, o.noise * 100);
    return Verdict::kNoChange;
  }
  *why = fmt::format("p = {:.3g}", p);
  return ratio < 1 ? Verdict::kFaster : Verdict::kSlower;
}

namespace {

// bench::quantile's value (linear interpolation, numpy's default) by
// selection instead of a sort: the bootstrap takes thousands of them, of
// samples that can hold tens of thousands of iterations.
double select_quantile(std::vector<double> x, double q) {
  const double h = q * static_cast<double>(x.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(h));
  std::nth_element(x.begin(), x.begin() + lo, x.end());
  const double a = x[lo];
  if (lo + 1 >= x.size()) return a;
  const double b = *std::min_element(x.begin() + lo + 1, x.end());
  return a + (h - static_cast<double>(lo)) * (b - a);
}

double p90(const std::vector<double>& x) { return select_quantile(x, 0.9); }
double med(const std::vector<double>& x) { return select_quantile(x, 0.5); }

}  // namespace

Comparison compare_case(const std::string& key, const Side& a, const Side& b,
                        const Options& o) {
  Comparison c;
  c.key = key;
  c.reps_a = static_cast<int>(a.repetitions.size());
  c.reps_b = static_cast<int>(b.repetitions.size());
  const bool by_rep = c.reps_a >= 2 && c.reps_b >= 2;
  c.unit = by_rep ? "repetitions" : "iterations";
  const auto sa = samples_of(a, by_rep), sb = samples_of(b, by_rep);
  c.n_a = static_cast<int>(sa.size());
  c.n_b = static_cast<int>(sb.size());
  if (!sa.empty()) c.median_a = med(sa);
  if (!sb.empty()) c.median_b = med(sb);
  if (sa.empty() || sb.empty()) {
    c.why = "no samples on one side";
    return c;
  }
  c.ratio = c.median_b / c.median_a;
  c.p90_ratio = p90(sb) / p90(sa);
  c.p = mann_whitney_u(sa, sb).p;
  c.verdict = decide(c.reps_a, c.reps_b, c.n_a, c.n_b, c.p, c.ratio, o, &c.why);
  c.ratio_ci = bootstrap_ratio_ci(sa, sb, med, 0.95, o.resamples, o.seed);
  c.p90_ratio_ci = bootstrap_ratio_ci(sa, sb, p90, 0.95, o.resamples, o.seed);
  c.p90_a = bench::quantile_ci(sa, 0.9);
  c.p90_b = bench::quantile_ci(sb, 0.9);
  c.p99_a = bench::quantile_ci(sa, 0.99);
  c.p99_b = bench::quantile_ci(sb, 0.99);
  return c;
}

Result compare_all(const Cases& a, const Cases& b, const Options& o) {
  Result r;
  std::map<std::string, const Side*> in_b;
  for (const auto& [k, s] : b) in_b[k] = &s;
  std::map<std::string, bool> seen;
  for (const auto& [k, s] : a) {
    seen[k] = true;
    const auto it = in_b.find(k);
    if (it == in_b.end())
      r.only_a.push_back(k);
    else
      r.cases.push_back(compare_case(k, s, *it->second, o));
  }
  for (const auto& [k, s] : b)
    if (!seen.count(k)) r.only_b.push_back(k);
  return r;
}

namespace {

nlohmann::json interval(const results::Interval& i) {
  return {{"lo", i.lo}, {"hi", i.hi}, {"coverage", i.coverage}};
}

std::string ci_cell(const results::Interval& i) {
  return fmt::format("{:.3f}-{:.3f}", i.lo, i.hi);
}

std::string ms_ci(const results::Interval& i) {
  return fmt::format("{:.3f}-{:.3f} ({:.0f}%)", i.lo * 1e3, i.hi * 1e3,
                     i.coverage * 100);
}

}  // namespace

nlohmann::json to_json(const Result& r, const Options& o) {
  nlohmann::json cases = nlohmann::json::array();
  using nlohmann::json;
  for (const auto& c : r.cases) {
    // A side without samples measured nothing: its figures and every
    // ratio are null, never 0.
    const bool a = c.n_a > 0, b = c.n_b > 0, both = a && b;
    cases.push_back(
        {{"case", c.key},
         {"unit", c.unit},
         {"repetitions_a", c.reps_a},
         {"repetitions_b", c.reps_b},
         {"n_a", c.n_a},
         {"n_b", c.n_b},
         {"median_a_seconds", a ? json(c.median_a) : json()},
         {"median_b_seconds", b ? json(c.median_b) : json()},
         {"ratio", both ? json(c.ratio) : json()},
         {"ratio_ci95", both ? interval(c.ratio_ci) : json()},
         {"p90_ratio", both ? json(c.p90_ratio) : json()},
         {"p90_ratio_ci95", both ? interval(c.p90_ratio_ci) : json()},
         {"p90_a_ci", both ? interval(c.p90_a) : json()},
         {"p90_b_ci", both ? interval(c.p90_b) : json()},
         {"p99_a_ci", both ? interval(c.p99_a) : json()},
         {"p99_b_ci", both ? interval(c.p99_b) : json()},
         {"mann_whitney_p", both ? json(c.p) : json()},
         {"verdict", verdict_name(c.verdict)},
         {"why", c.why}});
  }
  return {{"options",
           {{"alpha", o.alpha},
            {"noise_threshold", o.noise},
            {"min_samples", o.min_samples},
            {"min_repetitions", o.min_repetitions},
            {"bootstrap_resamples", o.resamples},
            {"bootstrap_seed", o.seed}}},
          {"ratio", "median of B / median of A (below 1: B is faster)"},
          {"cases", cases},
          {"only_in_a", r.only_a},
          {"only_in_b", r.only_b}};
}

std::string to_markdown(const Result& r, const Options& o) {
  std::string out = fmt::format(
      "Ratio: median of B / median of A (below 1: B is faster), bootstrap "
      "95 % interval; p: Mann-Whitney U, two-sided; no change below a "
      "{:g} % difference or at p >= {}.\n\n",
      o.noise * 100, o.alpha);
  out +=
      "| case | verdict | ratio | ratio 95 % CI | p | n A/B (unit) | median "
      "ms A | median ms B | p90 ratio (CI) | p99 ms B (CI, coverage) | why "
      "|\n|---|---|---:|---|---:|---|---:|---:|---|---|---|\n";
  for (const auto& c : r.cases) {
    const bool both = c.n_a > 0 && c.n_b > 0;
    const auto ms = [](int n, double s) {
      return n > 0 ? fmt::format("{:.3f}", s * 1e3) : std::string("-");
    };
    out += fmt::format(
        "| {} | {} | {} | {} | {} | {}/{} ({}) | {} | {} | {} | {} | {} |\n",
        c.key, verdict_name(c.verdict),
        both ? fmt::format("{:.3f}", c.ratio) : "-",
        both ? ci_cell(c.ratio_ci) : "-",
        both ? fmt::format("{:.3g}", c.p) : "-", c.n_a, c.n_b, c.unit,
        ms(c.n_a, c.median_a), ms(c.n_b, c.median_b),
        both ? fmt::format("{:.3f} ({})", c.p90_ratio, ci_cell(c.p90_ratio_ci))
             : "-",
        both ? ms_ci(c.p99_b) : "-", c.why);
  }
  for (const auto& k : r.only_a) out += "\nOnly in A: " + k;
  for (const auto& k : r.only_b) out += "\nOnly in B: " + k;
  if (!r.only_a.empty() || !r.only_b.empty()) out += "\n";
  return out;
}

std::vector<const Comparison*> regressions(const Result& r, double pct) {
  std::vector<const Comparison*> out;
  for (const auto& c : r.cases)
    if (c.verdict == Verdict::kSlower && c.ratio - 1 > pct / 100)
      out.push_back(&c);
  return out;
}

}  // namespace nnbench::compare
