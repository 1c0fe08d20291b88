#pragma once
// Stopping criteria of a measurement loop, as small plug-ins. After each
// sample the loop stops as soon as one criterion says it must (a maximum is
// reached), or once all agree it may (every minimum holds). They are asked
// in order and the first "not yet" ends the asking, so an expensive check
// (the CI width) placed last runs only once the cheap minimums hold.
// The iterations and time bounds always apply; on top, one criterion chosen
// by name (registry.h) says when the measurement has converged. A new rule
// (e.g. MLPerf LoadGen's: a minimum query count, then a bound on a
// percentile's confidence interval) is a new Criterion in this folder and
// one line in registry.cpp's built-ins; the runner does not change.
#include <memory>
#include <string>
#include <vector>

#include "results/request.h"

namespace nnbench::bench::stopping {

// What the loop has measured so far.
struct Progress {
  const std::vector<double>& samples;  // seconds per step, in order
  double elapsed = 0;                  // seconds since measurement began
};

class Criterion {
 public:
  virtual ~Criterion() = default;
  virtual std::string name() const = 0;
  // A limit reached: stop whatever the others say. Its name is limit().
  virtual bool must_stop(const Progress&) const { return false; }
  virtual std::string limit() const { return name(); }
  // This criterion is satisfied.
  virtual bool may_stop(const Progress& p) const = 0;
  // Whether it holds at p, asked once at the end (may_stop may check only
  // now and then, to save time).
  virtual bool satisfied(const Progress& p) const { return may_stop(p); }
  // What may_stop asks for, for a record: "10 iterations".
  virtual std::string requirement() const { return name(); }
};

// At least `min` samples; never more than `max`.
std::unique_ptr<Criterion> iterations(int min, int max);
// At least `min` seconds; never more than `max`.
std::unique_ptr<Criterion> time(double min_seconds, double max_seconds);
// The 95 % CI of the median no wider than +-fraction of the median, checked
// every `every` samples (it costs O(n log n)).
std::unique_ptr<Criterion> median_ci_width(double fraction, int every = 8);
// Always satisfied: the iterations and time minimums decide.
std::unique_ptr<Criterion> minimums();

class Rule {
 public:
  explicit Rule(std::vector<std::unique_ptr<Criterion>> criteria)
      : criteria_(std::move(criteria)) {}
  bool done(const Progress& p) const { return !ended_by(p).empty(); }
  // "" while the loop goes on; else what ends it: the limit a criterion
  // reached ("max_iterations", "max_seconds"), or, once every criterion
  // may stop, the name of the last one (the convergence criterion).
  std::string ended_by(const Progress& p) const;
  // The requirements of the criteria not satisfied at p: empty when the
  // loop ended with every minimum met, else what a maximum cut short.
  std::vector<std::string> unmet(const Progress& p) const;
  std::vector<std::string> names() const;

 private:
  std::vector<std::unique_ptr<Criterion>> criteria_;
};

// The criteria a request's StopRule names: iterations and time always,
// then its named criterion (registry.h). Throws nnbench::Error for an
// unknown criterion or parameter (stopping::problem says which first).
Rule from_rule(const results::StopRule& s);

}  // namespace nnbench::bench::stopping
