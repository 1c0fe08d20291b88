#pragma once
// A folder of its own under the system's temporary directory, removed with
// everything in it when the object goes.
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <system_error>

#include "util/error.h"

namespace nnbench::util {

class TempDir {
 public:
  // `prefix`: the folder's name before six random characters.
  explicit TempDir(const std::string& prefix) {
    namespace fs = std::filesystem;
    std::string t = fs::temp_directory_path() / (prefix + "-XXXXXX");
    if (!mkdtemp(t.data()))
      throw Error("cannot make a folder in " +
                  fs::temp_directory_path().string());
    dir_ = t;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return dir_; }
  std::string file(const std::string& name) const { return dir_ + "/" + name; }

 private:
  std::string dir_;
};

}  // namespace nnbench::util
