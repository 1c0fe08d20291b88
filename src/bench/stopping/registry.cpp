#include "bench/stopping/registry.h"

#include <fmt/core.h>

#include <mutex>

#include "util/error.h"

namespace nnbench::bench::stopping {
namespace {

std::vector<Type> builtins() {
  return {
      {"minimums",
       "the iterations and time minimums are enough",
       {},
       [](const Values&) { return minimums(); }},
      {"median-ci",
       "the median's 95 % CI (order statistics) within +-max_rel of the "
       "median, checked every 8 samples",
       {{"max_rel", 0.01, 1e-6, 0.5, "half-width of the CI over the median"}},
       [](const Values& v) { return median_ci_width(v.at("max_rel")); }},
  };
}

struct Table {
  std::mutex mu;
  std::map<std::string, Type> types;
  Table() {
    for (auto& t : builtins()) types.emplace(t.name, std::move(t));
  }
};

Table& table() {
  static Table t;
  return t;
}

}  // namespace

void register_criterion(Type t) {
  Table& tb = table();
  std::lock_guard<std::mutex> lock(tb.mu);
  const std::string name = t.name;
  if (!tb.types.emplace(name, std::move(t)).second)
    throw Error("stopping criterion '" + name + "' is already registered");
}

const Type* find_criterion(const std::string& name) {
  Table& tb = table();
  std::lock_guard<std::mutex> lock(tb.mu);
  const auto it = tb.types.find(name);
  return it == tb.types.end() ? nullptr : &it->second;
}

std::vector<std::string> criterion_names() {
  Table& tb = table();
  std::lock_guard<std::mutex> lock(tb.mu);
  std::vector<std::string> out;
  for (const auto& [name, t] : tb.types) out.push_back(name);
  return out;
}

std::string problem(const results::StopRule& s) {
  const Type* t = find_criterion(s.criterion);
  if (!t) {
    std::string known;
    for (const auto& n : criterion_names()) known += " " + n;
    return fmt::format(
        "[stop] criterion (--criterion) '{}' is unknown; known:{}", s.criterion,
        known);
  }
  for (const auto& [name, value] : s.parameters) {
    const Parameter* p = nullptr;
    for (const auto& q : t->parameters)
      if (q.name == name) p = &q;
    if (!p) {
      std::string known;
      for (const auto& q : t->parameters) known += " " + q.name;
      return fmt::format(
          "[stop] criterion '{}' has no parameter '{}' (--criterion-param); "
          "its parameters:{}",
          s.criterion, name, known.empty() ? " none" : known);
    }
    if (!(value >= p->lo && value <= p->hi))
      return fmt::format(
          "[stop] {} (--criterion-param) {:g} of criterion '{}' must be in "
          "[{:g}, {:g}]",
          name, value, s.criterion, p->lo, p->hi);
  }
  return "";
}

std::string rules_problem(const results::WarmupRule& w,
                          const results::StopRule& s) {
  const std::string why = results::rule_problem(w, s);
  return why.empty() ? problem(s) : why;
}

Values resolved(const results::StopRule& s) {
  if (const std::string why = problem(s); !why.empty()) throw Error(why);
  Values v;
  for (const auto& p : find_criterion(s.criterion)->parameters) {
    const auto it = s.parameters.find(p.name);
    v[p.name] = it == s.parameters.end() ? p.value : it->second;
  }
  return v;
}

std::string describe_criteria() {
  std::string out;
  for (const auto& name : criterion_names()) {
    const Type* t = find_criterion(name);
    out += fmt::format("{}: {}", name, t->help);
    for (const auto& p : t->parameters)
      out += fmt::format(" ({} {:g}, in [{:g}, {:g}]: {})", p.name, p.value,
                         p.lo, p.hi, p.help);
    out += "\n";
  }
  return out;
}

Rule from_rule(const results::StopRule& s) {
  const Values v = resolved(s);
  std::vector<std::unique_ptr<Criterion>> c;
  c.push_back(iterations(s.min_iterations, s.max_iterations));
  c.push_back(time(s.min_seconds, s.max_seconds));
  c.push_back(find_criterion(s.criterion)->make(v));
  return Rule(std::move(c));
}

}  // namespace nnbench::bench::stopping
