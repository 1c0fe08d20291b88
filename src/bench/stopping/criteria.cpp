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
  std::string limit() const override { return "max_iterations"; }
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
  std::string limit() const override { return "max_seconds"; }
  bool must_stop(const Progress& p) const override { return p.elapsed >= max_; }
  bool may_stop(const Progress& p) const override { return p.elapsed >= min_; }

 private:
  double min_, max_;
};

class MedianCiWidth : public Criterion {
 public:
  MedianCiWidth(double fraction, int every)
      : fraction_(fraction), every_(every) {}
  std::string name() const override { return "median-ci"; }
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

// The minimums alone: the default criterion, satisfied at once.
class Minimums : public Criterion {
 public:
  std::string name() const override { return "minimums"; }
  bool may_stop(const Progress&) const override { return true; }
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

std::unique_ptr<Criterion> minimums() { return std::make_unique<Minimums>(); }

std::string Rule::ended_by(const Progress& p) const {
  for (const auto& c : criteria_)
    if (c->must_stop(p)) return c->limit();
  for (const auto& c : criteria_)
    if (!c->may_stop(p)) return "";
  return criteria_.empty() ? "" : criteria_.back()->name();
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

}  // namespace nnbench::bench::stopping
