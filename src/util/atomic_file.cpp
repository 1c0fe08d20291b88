#include "util/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>

#include "util/error.h"

namespace nnbench::util {
namespace {

// A new temporary file beside `path`, under a name nobody can guess; its
// name in `tmp`. -1 with errno set when none could be made.
int create_temp_beside(const std::string& path, std::string& tmp) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  static const char kChars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  for (int attempt = 0; attempt < 100; ++attempt) {
    tmp = path + ".tmp.";
    for (int i = 0; i < 12; ++i) tmp += kChars[rng() % (sizeof kChars - 1)];
    const int fd = create_new_file(tmp);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;
}

[[noreturn]] void fail(const std::string& path, const char* what) {
  throw IoError(path + ": cannot " + what + ": " + std::strerror(errno));
}

}  // namespace

int create_new_file(const std::string& path, int mode) {
  return ::open(path.c_str(),
                O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
}

void write_file_atomically(const std::string& path, const std::string& text) {
  std::string tmp;
  const int fd = create_temp_beside(path, tmp);
  if (fd < 0) fail(path, "write");
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      errno = e;
      fail(path, "write");
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    errno = e;
    fail(path, "write");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    errno = e;
    fail(path, "rename into place");
  }
}

void check_writable(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw Error(path + ": cannot write: it is a folder (give a file name)");
  std::string tmp;
  const int fd = create_temp_beside(path, tmp);
  if (fd < 0)  // before any work: a usage error
    throw Error(path + ": cannot write: " + std::strerror(errno));
  ::close(fd);
  ::unlink(tmp.c_str());
}

}  // namespace nnbench::util
