#pragma once
// Helpers shared by the dataset tests: scratch folders, raw file I/O, and
// catching the DataError a malformed file must raise.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>

#include "data/dataset.h"

namespace nnbench::data::testing {

namespace fs = std::filesystem;

// A fresh folder under the system temp dir, removed with the object.
struct TempDir {
  fs::path path;
  TempDir() {
    static int counter = 0;
    path = fs::temp_directory_path() /
           ("nnbench_data_" + std::to_string(getpid()) + "_" +
            std::to_string(counter++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

inline std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

inline void write_all(const fs::path& p, const std::string& b) {
  std::ofstream(p, std::ios::binary) << b;
}

// The DataError message of fn(), or "" when it does not throw one.
inline std::string data_error(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const DataError& e) {
    return e.what();
  }
  return "";
}

inline bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace nnbench::data::testing
