#pragma once
// CSV: a header, then one line per record with the case's coordinates and
// its headline figures (empty where nothing was measured, never 0).
#include <string>

#include "results/reporter.h"

namespace nnbench::reporters {

class Csv : public results::Reporter {
 public:
  // Appends to `out`.
  explicit Csv(std::string& out) : out_(out) {}
  void begin(const results::ReportContext& c) override;
  void record(const results::Entry& e) override;

 private:
  std::string& out_;
};

// A field quoted as RFC 4180 asks when it holds a comma, quote or newline.
std::string csv_field(const std::string& s);

}  // namespace nnbench::reporters
