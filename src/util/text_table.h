#pragma once
// A plain text table: no terminal-table library is packaged for Debian.
#include <string>
#include <vector>

namespace nnbench::util {

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

}  // namespace nnbench::util
