#pragma once
// A whole file as a string ("" when it cannot be read), for tests that
// read what a command wrote.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace nnbench::test {

inline std::string slurp_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace nnbench::test
