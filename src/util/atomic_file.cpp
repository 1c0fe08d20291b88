#include "util/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "util/error.h"

namespace nnbench::util {
namespace {

std::string temp_path(const std::string& path) {
  return path + ".tmp." + std::to_string(::getpid());
}

[[noreturn]] void fail(const std::string& path, const char* what) {
  throw IoError(path + ": cannot " + what + ": " + std::strerror(errno));
}

}  // namespace

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = temp_path(path);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) fail(path, "write");
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      ::close(fd);
      ::unlink(tmp.c_str());
      fail(path, "write");
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(tmp.c_str());
    fail(path, "write");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    fail(path, "rename into place");
  }
}

void check_writable(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw Error(path + ": cannot write: it is a folder (give a file name)");
  const std::string tmp = temp_path(path);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0)  // before any work: a usage error
    throw Error(path + ": cannot write: " + std::strerror(errno));
  ::close(fd);
  ::unlink(tmp.c_str());
}

}  // namespace nnbench::util
