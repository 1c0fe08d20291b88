#pragma once
// A plain text table: no terminal-table library is packaged for Debian.
#include <cstdio>
#include <string>
#include <vector>

#include "results/result.h"

namespace nnbench::cli {

class Table {
 public:
  explicit Table(std::vector<std::string> header)
      : header_(std::move(header)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  // Columns padded to their widest cell; text left-aligned, numbers right.
  std::string str() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

std::string results_table(const std::vector<results::RunResult>& runs);
// The verdict lines under a suite's table: per model, the fastest engine
// and by how much (compare/verdict.h), then the engines far behind the
// fastest or with no valid time, and why; "" when no model was asked of two
// engines.
std::string verdict_lines(const std::vector<results::RunResult>& runs);
std::string not_run_lines(const std::vector<results::RunResult>& runs);

}  // namespace nnbench::cli
