#pragma once
// Outputs are written whole or not at all: write a temporary file beside the
// target, then rename it over the target (atomic on POSIX file systems).
// The temporary file has a random name and is created with O_EXCL and
// O_NOFOLLOW: a file or link someone planted there is never opened, so a
// local user cannot make nnbench write through a link of theirs (a name
// they can predict, such as one with the pid, could be planted). rename
// replaces a link at the target itself, never the file it points to.
#include <string>

namespace nnbench::util {

// Throws nnbench::IoError naming the path when it cannot be written.
void write_file_atomically(const std::string& path, const std::string& text);

// Checks early (before a long run) that `path` can be written, without
// leaving anything behind. Throws nnbench::Error naming the path.
void check_writable(const std::string& path);

// Creates `path` for writing, a new file only (O_CREAT | O_EXCL |
// O_NOFOLLOW | O_CLOEXEC): never a link, never a file that was there.
// Returns the descriptor, or -1 with errno set.
int create_new_file(const std::string& path, int mode = 0644);

}  // namespace nnbench::util
