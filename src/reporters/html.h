#pragma once
// The HTML report (report/page.h) of the run's records, written atomically
// when the run ends: the same page `nnbench report` makes from a stored
// run.
#include <string>

#include "report/source.h"
#include "results/reporter.h"

namespace nnbench::reporters {

class Html : public results::Reporter {
 public:
  explicit Html(std::string path) : path_(std::move(path)) {}
  void begin(const results::ReportContext& c) override;
  void record(const results::Entry& e) override;
  // Writes the page unless a signal ended the run.
  void end(const results::Ending& e) override;

 private:
  std::string path_;
  report::Source source_;
};

}  // namespace nnbench::reporters
