#pragma once
// A folder of its own under the system's temporary directory ($TMPDIR, else
// /tmp), removed with everything in it when the object goes, and also when
// this process dies in a way no destructor or signal handler sees
// (SIGKILL, a crash): a watcher process, started with the folder, blocks
// on a pipe whose writing end only this process and the children it
// starts hold; once every holder has ended, the read returns and the
// watcher removes the folder. Children keep the folder while they live,
// since they may still write there.
#include <string>

namespace nnbench::util {

class TempDir {
 public:
  // `prefix`: the folder's name before six random characters. Throws
  // nnbench::Error when the folder cannot be made.
  explicit TempDir(const std::string& prefix);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return dir_; }
  std::string file(const std::string& name) const { return dir_ + "/" + name; }

 private:
  std::string dir_;
  int keepalive_ = -1;  // the pipe's writing end; -1 when no watcher runs
};

// A file with no name in the system's temporary directory, open for
// reading and writing (close-on-exec): nothing is left behind however
// this process ends. Throws nnbench::Error when it cannot be made.
int anonymous_file();

}  // namespace nnbench::util
