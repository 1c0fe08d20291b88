#pragma once
// The console: each kind's table once the run ends (step loops with the
// verdict per model, training runs, LoadGen's queries), on stdout.
#include <cstdio>
#include <string>

#include "report/source.h"
#include "results/reporter.h"

namespace nnbench::reporters {

class Console : public results::Reporter {
 public:
  explicit Console(std::FILE* out = stdout) : out_(out) {}
  void record(const results::Entry& e) override;
  // Prints text(), unless a signal ended the run (no verdict over part of
  // a study).
  void end(const results::Ending& e) override;
  // The tables of every record so far: the step loops' (also when there
  // is no record at all, so an empty run still shows its header), then
  // training's, then LoadGen's.
  std::string text() const;

 private:
  std::FILE* out_;
  report::Source seen_;
};

}  // namespace nnbench::reporters
