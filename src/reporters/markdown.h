#pragma once
// Markdown in the studies' shape: a row per network, a column per thread
// count or batch size, OOM cells marked, then the derived figures (speed-up
// and efficiency as DLBench prints them, costs) and how costs were priced.
#include <string>
#include <vector>

#include "results/reporter.h"
#include "study/store.h"

namespace nnbench::reporters {

class Markdown : public results::Reporter {
 public:
  // Appends to `out` when the run ends.
  explicit Markdown(std::string& out) : out_(out) {}
  void begin(const results::ReportContext& c) override;
  void record(const results::Entry& e) override;
  void end(const results::Ending& e) override;

 private:
  std::string& out_;
  std::string suite_, run_id_;
  std::vector<study::ResultRow> rows_;
};

// The table (a row per case without its column axis; cells: the median
// over repetitions of median ms per mini-batch, or seconds per training
// run) and the derived figures' tables.
std::string rows_md(const std::string& suite, const std::string& run_id,
                    const std::vector<study::ResultRow>& rows);
std::string derived_md(const std::vector<study::DerivedRow>& rows);

// "valid", or "invalid: " and the record's reasons (contended, ...).
std::string validity_text(const study::ResultRow& r);
// Median ms per mini-batch, or seconds per training run ("s" appended),
// or the state where nothing was measured ("OOM" for oom).
std::string cell_text(const study::ResultRow& r);

}  // namespace nnbench::reporters
