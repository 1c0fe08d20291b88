#include <fmt/core.h>

#include "bench/statistics.h"
#include "bench/stopping/criterion.h"
#include "util/text.h"

namespace nnbench::bench::stopping {
namespace {

class Iterations : public Criterion {
 public:
  Iterations(int min, int max) : min_(min), max_(max) {}
  std::string name() const override { return "iterations"; }
  std::string requirement() const override {
    return util::count(min_, "iteration");
  }
  bool must_stop(const Progress& p) const override {
    return static_cast<int>(p.samples.size()) >= max_;
  }
  bool may_stop(const Progress& p) const override {
    return static_cast<int>(p.samples.size()) >= min_;
  }

 private:
  int min_, max_;
};

class Time : public Criterion {
 public:
  Time(double min, double max) : min_(min), max_(max) {}
  std::string name() const override { return "time"; }
  std::string requirement() const override {
    return fmt::format("{:g} s", min_);
  }
  bool must_stop(const Progress& p) const override { return p.elapsed >= max_; }
  bool may_stop(const Progress& p) const override { return p.elapsed >= min_; }

 private:
  double min_, max_;
};

class MedianCiWidth : public Criterion {
 public:
  MedianCiWidth(double fraction, int every)
      : fraction_(fraction), every_(every) {}
  std::string name() const override { return "median_ci_width"; }
  std::string requirement() const override {
    return fmt::format("the median's 95 % CI within +-{:g} %", fraction_ * 100);
  }
  bool may_stop(const Progress& p) const override {
    const size_t n = p.samples.size();
    return n > 0 && n % every_ == 0 && satisfied(p);
  }
  bool satisfied(const Progress& p) const override {
    if (p.samples.empty()) return false;
    const results::Interval ci = median_ci(p.samples);
    return (ci.hi - ci.lo) / 2 <= fraction_ * median(p.samples);
  }

 private:
  double fraction_;
  size_t every_;
};

}  // namespace

std::unique_ptr<Criterion> iterations(int min, int max) {
  return std::make_unique<Iterations>(min, max);
}
std::unique_ptr<Criterion> time(double min_seconds, double max_seconds) {
  return std::make_unique<Time>(min_seconds, max_seconds);
}
std::unique_ptr<Criterion> median_ci_width(double fraction, int every) {
  return std::make_unique<MedianCiWidth>(fraction, every < 1 ? 1 : every);
}

bool Rule::done(const Progress& p) const {
  for (const auto& c : criteria_)
    if (c->must_stop(p)) return true;
  for (const auto& c : criteria_)
    if (!c->may_stop(p)) return false;
  return true;
}

std::vector<std::string> Rule::unmet(const Progress& p) const {
  std::vector<std::string> out;
  for (const auto& c : criteria_)
    if (!c->satisfied(p)) out.push_back(c->requirement());
  return out;
}

std::vector<std::string> Rule::names() const {
  std::vector<std::string> out;
  for (const auto& c : criteria_) out.push_back(c->name());
  return out;
}

Rule from_rule(const results::StopRule& s) {
  std::vector<std::unique_ptr<Criterion>> c;
  c.push_back(iterations(s.min_iterations, s.max_iterations));
  c.push_back(time(s.min_seconds, s.max_seconds));
  if (s.max_relative_ci > 0) c.push_back(median_ci_width(s.max_relative_ci));
  return Rule(std::move(c));
}

}  // namespace nnbench::bench::stopping
