#pragma once
// Stopping criteria by name, each with its own parameters and defaults (as
// nvbench's --stopping-criterion): `--criterion median-ci --criterion-param
// max_rel=0.02` on the command line, `criterion = "median-ci"` and
// `max_rel = 0.02` in a suite's [stop]. A criterion is one Type here; the
// built-ins are listed once in registry.cpp, and register_criterion adds one
// from elsewhere (tests/unit/bench/stopping_test.cpp adds a toy).
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench/stopping/criterion.h"
#include "results/request.h"

namespace nnbench::bench::stopping {

struct Parameter {
  std::string name;
  double value = 0;       // the default
  double lo = 0, hi = 0;  // valid range, both ends included
  std::string help;
};

using Values = std::map<std::string, double>;

struct Type {
  std::string name, help;
  std::vector<Parameter> parameters;
  // Makes the criterion from every parameter (defaults filled in).
  std::function<std::unique_ptr<Criterion>(const Values&)> make;
};

// Throws nnbench::Error for a name already taken.
void register_criterion(Type t);
const Type* find_criterion(const std::string& name);  // nullptr: unknown
std::vector<std::string> criterion_names();

// "" when the rule's criterion and parameters are known and in range, else
// what is wrong, naming the field as a suite file spells it and the
// option: "[stop] criterion (--criterion) 'ci' is unknown; known: ...".
std::string problem(const results::StopRule& s);
// results::rule_problem (bounds), then problem (the criterion).
std::string rules_problem(const results::WarmupRule& w,
                          const results::StopRule& s);
// The criterion's parameters with the defaults filled in. Throws
// nnbench::Error where problem() is not empty.
Values resolved(const results::StopRule& s);
// "median-ci: the median's 95 % CI within +-max_rel of it (max_rel 0.01,
// in [1e-06, 0.5])", one line per criterion, for --help and docs.
std::string describe_criteria();

}  // namespace nnbench::bench::stopping
