// `nnbench compare A B`: two runs (ids in the store) or results files, case
// by case, with verdicts that say "inconclusive" rather than guess.
#include <fmt/core.h>

#include "cli/app.h"
#include "cli/commands.h"
#include "cli/loaded.h"
#include "cli/options.h"
#include "compare/compare.h"
#include "compare/machines.h"
#include "results/case_key.h"
#include "results/limits.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace nnbench::cli {
namespace {

struct CompareArgs {
  std::string a, b, db, format = "md", out;
  compare::Options options;
  double noise_pct = 1;
  std::optional<double> fail_on_regression;
  bool ignore_threads = false, ignore_loop = false, allow_disjoint = false;
};

// Every result of a case is one repetition; a case that never ran ok is
// still a case (with no samples), so it is not reported as missing.
compare::Cases cases_of(const Loaded& l, bool with_threads, bool with_loop) {
  compare::Cases out;
  std::map<std::string, size_t> at;
  for (const auto& r : l.runs) {
    const std::string k = case_key(r, with_threads);
    if (!at.count(k)) {
      at[k] = out.size();
      out.push_back({k, {}});
    }
    if (r.state == results::State::kOk && !r.samples.empty())
      out[at[k]].second.repetitions.push_back(r.samples);
  }
  // Training runs: each run (seed) is a repetition of one sample, its time
  // to target, or its whole training time for a fixed-epoch task; a run
  // that did neither has none.
  for (const auto& r : l.training) {
    results::CaseKey key = results::key_of(r);
    if (!with_loop) key.mode = "training";  // steps and the own loop alike
    const std::string k = key.name(with_threads ? results::CaseKey::kNone
                                                : results::CaseKey::kThreads);
    if (!at.count(k)) {
      at[k] = out.size();
      out.push_back({k, {}});
    }
    if (r.state == results::State::kConverged)
      out[at[k]].second.repetitions.push_back({r.time_to_target});
    else if (r.state == results::State::kCompleted)
      out[at[k]].second.repetitions.push_back({r.total_train_seconds});
  }
  return out;
}

// "ID1,ID2,...": several runs (or files) as one side, their results pooled
// as repetitions, so the two sides can be interleaved in time (A B A B ...)
// on a machine whose speed drifts.
Loaded load_side(const std::string& names, const std::string& db) {
  Loaded all;
  size_t start = 0;
  while (start <= names.size()) {
    const size_t comma = std::min(names.find(',', start), names.size());
    const std::string one = names.substr(start, comma - start);
    start = comma + 1;
    if (one.empty()) continue;
    Loaded l = load_results(one, db);
    if (all.environment.is_null()) all.environment = l.environment;
    all.label += (all.label.empty() ? "" : " + ") + l.label;
    all.runs.insert(all.runs.end(), l.runs.begin(), l.runs.end());
    all.training.insert(all.training.end(), l.training.begin(),
                        l.training.end());
  }
  if (all.label.empty()) throw Error("compare: an empty side");
  return all;
}

int compare_command(CompareArgs& a) {
  a.options.noise = a.noise_pct / 100;
  if (!a.out.empty()) util::check_writable(a.out);
  const Loaded la = load_side(a.a, a.db), lb = load_side(a.b, a.db);
  const auto r = compare::compare_all(
      cases_of(la, !a.ignore_threads, !a.ignore_loop),
      cases_of(lb, !a.ignore_threads, !a.ignore_loop), a.options);
  // Nothing in common compares nothing: a CI gate must not pass on it.
  if (r.cases.empty() && !a.allow_disjoint)
    throw Error(fmt::format(
        "compare: {} and {} have no case in common ({} cases only in A, {} "
        "only in B{}{}); --allow-disjoint reports them anyway",
        la.label, lb.label, r.only_a.size(), r.only_b.size(),
        a.ignore_threads ? "" : "; --ignore-threads matches across threads",
        a.ignore_loop ? ""
                      : "; --ignore-loop matches training through the "
                        "harness's steps and the framework's own loop"));
  // Two machines: the studies' second question before the case table.
  std::optional<compare::MachineAnswer> machines;
  if (compare::machine_of(la.environment).key !=
      compare::machine_of(lb.environment).key)
    machines =
        compare::fastest_machines({{la.environment, &la.runs, &la.training},
                                   {lb.environment, &lb.runs, &lb.training}});
  std::string text;
  if (a.format == "json") {
    auto j = compare::to_json(r, a.options);
    j["a"] = la.label;
    j["b"] = lb.label;
    if (machines) j["machines"] = compare::to_json(*machines);
    text = j.dump(2) + "\n";
  } else {
    text = fmt::format("A: {}\nB: {}\n\n", la.label, lb.label) +
           (machines ? compare::to_markdown(*machines) + "\n" : "") +
           compare::to_markdown(r, a.options);
  }
  if (a.out.empty())
    fmt::print("{}", text);
  else
    util::write_file_atomically(a.out, text);
  if (a.fail_on_regression) {
    const auto bad = compare::regressions(r, *a.fail_on_regression);
    for (const auto* c : bad)
      fmt::print(stderr, "nnbench: regression: {} is {:.1f} % slower\n", c->key,
                 (c->ratio - 1) * 100);
    if (!bad.empty()) return kExitRunNotOk;
  }
  return kExitOk;
}

}  // namespace

Action add_compare(CLI::App& app) {
  auto a = std::make_shared<CompareArgs>();
  app.add_option("a", a->a, "Baseline: a run id or a results file")->required();
  app.add_option("b", a->b, "Compared: a run id or a results file")->required();
  app.add_option("--db", a->db, "Results store for run ids");
  app.add_option("--format", a->format, "md or json")
      ->check(CLI::IsMember({"md", "json"}))
      ->capture_default_str();
  app.add_option("--out", a->out, "Write here instead of stdout");
  app.add_option("--noise", a->noise_pct,
                 "Percent difference below which a significant change is "
                 "still 'no change'")
      ->check(non_negative(1000))
      ->capture_default_str();
  app.add_option("--alpha", a->options.alpha,
                 "Significance level of the Mann-Whitney U test")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--min-samples", a->options.min_samples,
                 "Fewer samples on either side: inconclusive")
      ->check(positive(results::kMaxIterations))
      ->capture_default_str();
  app.add_option("--min-repetitions", a->options.min_repetitions,
                 "Fewer repetitions (processes) on either side: "
                 "inconclusive. 1 accepts one process a side, whose "
                 "iterations do not show process-to-process variation")
      ->check(positive(results::kMaxRepetitions))
      ->capture_default_str();
  app.add_option("--seed", a->options.seed, "Bootstrap seed (0 to 2^64-1)")
      ->capture_default_str();
  app.add_option("--fail-on-regression", a->fail_on_regression,
                 "Exit 1 when a case is slower by more than this percent")
      ->check(non_negative(1e6));
  app.add_flag("--allow-disjoint", a->allow_disjoint,
               "Report sides with no case in common (exit 0) instead of the "
               "usage error (exit 2)");
  app.add_flag("--ignore-threads", a->ignore_threads,
               "Match cases whatever their thread counts (e.g. a 1-thread "
               "run against a 2-thread run)");
  app.add_flag("--ignore-loop", a->ignore_loop,
               "Match training runs through the harness's steps with the "
               "same task through the framework's own loop (--loop)");
  return [a] { return compare_command(*a); };
}

}  // namespace nnbench::cli
