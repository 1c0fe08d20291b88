#pragma once
// Outputs are written whole or not at all: write a temporary file beside the
// target, then rename it over the target (atomic on POSIX file systems).
#include <string>

namespace nnbench::util {

// Throws nnbench::IoError naming the path when it cannot be written.
void write_file_atomically(const std::string& path, const std::string& text);

// Checks early (before a long run) that `path` can be written, without
// leaving anything behind. Throws nnbench::Error naming the path.
void check_writable(const std::string& path);

}  // namespace nnbench::util
