#pragma once
// The results file (results/result.h's Report as JSON): every record of the
// run with its environment, peak and derived figures, written atomically
// when the run ends (nothing half-written), also when a signal ended it.
#include <string>

#include "results/reporter.h"
#include "results/result.h"

namespace nnbench::reporters {

class JsonFile : public results::Reporter {
 public:
  // "": collect only, until set_path names a file (a suite whose store
  // fails mid-run writes what it had to a file chosen then).
  explicit JsonFile(std::string path = "") : path_(std::move(path)) {}
  void set_path(std::string p) { path_ = std::move(p); }
  const std::string& path() const { return path_; }
  const results::Report& report() const { return report_; }

  void begin(const results::ReportContext& c) override;
  void record(const results::Entry& e) override;
  void end(const results::Ending& e) override;

 private:
  std::string path_;
  results::Report report_;
};

// Writes a results file atomically, stamped with the time it was written.
void write_results_file(const std::string& path, results::Report report);

}  // namespace nnbench::reporters
