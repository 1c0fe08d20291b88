#include "results/request.h"

#include <fmt/core.h>

#include "results/limits.h"
#include "util/error.h"

namespace nnbench::results {

std::string action_name(ContentionPolicy::Action a) {
  switch (a) {
    case ContentionPolicy::Action::kWarn:
      return "warn";
    case ContentionPolicy::Action::kFail:
      return "fail";
    default:
      return "retry";
  }
}

ContentionPolicy::Action action_from_name(const std::string& s) {
  if (s == "warn") return ContentionPolicy::Action::kWarn;
  if (s == "fail") return ContentionPolicy::Action::kFail;
  if (s == "retry") return ContentionPolicy::Action::kRetry;
  throw Error("unknown contention action '" + s + "'; known: warn fail retry");
}

std::string rule_problem(const WarmupRule& w, const StopRule& s) {
  const auto below = [](const char* what, const char* max, const char* max_opt,
                        double max_v, const char* min, const char* min_opt,
                        double min_v) {
    return fmt::format("{} {} ({}) {:g} is below {} ({}) {:g}", what, max,
                       max_opt, max_v, min, min_opt, min_v);
  };
  const auto negative = [](const char* what, const char* field, const char* opt,
                           double v) {
    return fmt::format("{} {} ({}) {:g} must be >= 0", what, field, opt, v);
  };
  // Upper bounds (limits.h) before the orderings: a typo of 10^12 seconds
  // says it is above the bound, not that something else is below it.
  const double its = static_cast<double>(kMaxIterations);
  const struct {
    const char *what, *field, *opt;
    double value, most;
  } bounded[] = {
      {"[warmup]", "min_iterations", "--warmup-iters",
       static_cast<double>(w.min_iterations), its},
      {"[warmup]", "min_seconds", "--warmup-time", w.min_seconds, kMaxSeconds},
      {"[warmup]", "max_seconds", "no option", w.max_seconds, kMaxSeconds},
      {"[stop]", "min_iterations", "--min-iters",
       static_cast<double>(s.min_iterations), its},
      {"[stop]", "max_iterations", "--max-iters",
       static_cast<double>(s.max_iterations), its},
      {"[stop]", "min_seconds", "--min-time", s.min_seconds, kMaxSeconds},
      {"[stop]", "max_seconds", "--max-time", s.max_seconds, kMaxSeconds},
  };
  for (const auto& b : bounded)
    if (!(b.value <= b.most))  // NaN too
      return fmt::format("{} {} ({}) {:g} must be at most {:g} (the bound)",
                         b.what, b.field, b.opt, b.value, b.most);
  if (w.min_iterations < 0)
    return negative("[warmup]", "min_iterations", "--warmup-iters",
                    w.min_iterations);
  if (w.min_seconds < 0)
    return negative("[warmup]", "min_seconds", "--warmup-time", w.min_seconds);
  if (w.max_seconds < w.min_seconds)
    return below("[warmup]", "max_seconds", "no option", w.max_seconds,
                 "min_seconds", "--warmup-time", w.min_seconds);
  if (s.min_iterations < 1)
    return fmt::format(
        "[stop] min_iterations (--min-iters) {} must be at least 1",
        s.min_iterations);
  if (s.min_seconds < 0)
    return negative("[stop]", "min_seconds", "--min-time", s.min_seconds);
  if (s.max_iterations < s.min_iterations)
    return below("[stop]", "max_iterations", "--max-iters", s.max_iterations,
                 "min_iterations", "--min-iters", s.min_iterations);
  if (s.max_seconds < s.min_seconds)
    return below("[stop]", "max_seconds", "--max-time", s.max_seconds,
                 "min_seconds", "--min-time", s.min_seconds);
  return "";
}

void set_max_relative_ci(StopRule& s, double fraction) {
  s.parameters.clear();
  s.criterion = fraction > 0 ? "median-ci" : "minimums";
  if (fraction > 0) s.parameters["max_rel"] = fraction;
}

}  // namespace nnbench::results
