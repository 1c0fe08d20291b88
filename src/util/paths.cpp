#include "util/paths.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

#ifndef NNBENCH_SOURCE_DIR
#define NNBENCH_SOURCE_DIR ""
#endif
#ifndef NNBENCH_BINARY_DIR
#define NNBENCH_BINARY_DIR ""
#endif

namespace nnbench::util {

namespace fs = std::filesystem;

namespace {

std::string xdg(const char* variable, const char* under_home) {
  if (const char* x = std::getenv(variable); x && *x)
    return std::string(x) + "/nnbench";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : ".") + under_home + "/nnbench";
}

}  // namespace

std::string data_dir() { return xdg("XDG_DATA_HOME", "/.local/share"); }
std::string cache_dir() { return xdg("XDG_CACHE_HOME", "/.cache"); }

std::string exe_path() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? "" : p.string();
}

std::string shipped_path(const std::string& installed,
                         const std::string& source) {
  const std::string exe = exe_path();
  std::error_code ec;
  if (!exe.empty()) {
    const fs::path beside = fs::path(exe).parent_path().parent_path() /
                            "share" / "nnbench" / installed;
    if (fs::exists(beside, ec)) return beside.string();
  }
  const std::string build = NNBENCH_BINARY_DIR;
  const std::string src = NNBENCH_SOURCE_DIR;
  if (!build.empty() && !src.empty() && exe.rfind(build + "/", 0) == 0) {
    const fs::path in_tree = fs::path(src) / source;
    if (fs::exists(in_tree, ec)) return in_tree.string();
  }
  return "";
}

}  // namespace nnbench::util
