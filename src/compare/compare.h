#pragma once
// Comparing two sets of results case by case: the ratio of medians (B over
// A: below 1 is faster) with a bootstrap interval, the Mann-Whitney p-value,
// and a verdict that refuses to call a change it cannot support.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "results/summary.h"

namespace nnbench::compare {

struct Options {
  double alpha = 0.05;  // significance level of the U test
  double noise = 0.01;  // |ratio - 1| at or below this is "no change"
  int min_samples = 5;  // fewer on either side: inconclusive
  // Fewer repetitions (processes) on either side: inconclusive. Iterations
  // of one process do not show how much processes differ (on this machine
  // two runs of one suite a minute apart differed by 3-13 %), so a verdict
  // from one process a side would be overconfident. 1 accepts them.
  int min_repetitions = 5;
  int resamples = 2000;  // bootstrap
  uint64_t seed = 1;     // bootstrap generator (recorded)
};

enum class Verdict { kFaster, kSlower, kNoChange, kInconclusive };
std::string verdict_name(Verdict v);

// One case on one side: the per-iteration seconds of each repetition.
struct Side {
  std::vector<std::vector<double>> repetitions;
};

// The samples compared: each repetition's median when both sides have at
// least 2 repetitions (processes differ more than iterations of one
// process do), else every iteration pooled (stated in `unit`).
std::vector<double> samples_of(const Side& s, bool by_repetition);

struct Comparison {
  std::string key;
  std::string unit;            // "repetitions" or "iterations"
  int reps_a = 0, reps_b = 0;  // repetitions (processes) measured ok
  int n_a = 0, n_b = 0;        // samples in `unit`
  double median_a = 0, median_b = 0;
  double ratio = 0;                              // median_b / median_a
  results::Interval ratio_ci;                    // bootstrap
  double p90_ratio = 0;                          // p90_b / p90_a
  results::Interval p90_ratio_ci;                // bootstrap
  results::Interval p90_a, p90_b, p99_a, p99_b;  // order-statistic CIs
  double p = 1;                                  // Mann-Whitney, two-sided
  Verdict verdict = Verdict::kInconclusive;
  std::string why;
};

// The verdict from the repetitions, the sample sizes, the p-value and the
// ratio, and why.
Verdict decide(int reps_a, int reps_b, int n_a, int n_b, double p, double ratio,
               const Options& o, std::string* why);

Comparison compare_case(const std::string& key, const Side& a, const Side& b,
                        const Options& o);

struct Result {
  std::vector<Comparison> cases;  // in A's order
  std::vector<std::string> only_a, only_b;
};

// Sides keyed by case, in a stable order.
using Cases = std::vector<std::pair<std::string, Side>>;
Result compare_all(const Cases& a, const Cases& b, const Options& o);

nlohmann::json to_json(const Result& r, const Options& o);
std::string to_markdown(const Result& r, const Options& o);

// Cases slower by more than pct percent (ratio - 1 > pct / 100).
std::vector<const Comparison*> regressions(const Result& r, double pct);

}  // namespace nnbench::compare
