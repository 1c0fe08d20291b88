// Files and folders nnbench creates (issue 29, items 1 and 5): never
// through a link someone planted, and temporary folders removed however
// the process that made them ends.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "../../common/eventually.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/temp_dir.h"

namespace nnbench::util {
namespace {

namespace fs = std::filesystem;

std::string slurp(const std::string& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

using nnbench_test::eventually;

class Files : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("nnbench_files_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    std::ofstream(victim()) << "victim";
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return dir_ / name; }
  std::string victim() const { return path("victim"); }
  fs::path dir_;
};

// The fault round's reproduction: a link planted at the temporary name
// the old code used (PATH.tmp.PID) made the results land in its target.
TEST_F(Files, AWriteNeverFollowsALinkPlantedAtItsTemporaryName) {
  const std::string out = path("out.json");
  fs::create_symlink(victim(), out + ".tmp." + std::to_string(getpid()));
  write_file_atomically(out, "results");
  EXPECT_EQ(slurp(victim()), "victim");
  EXPECT_FALSE(fs::is_symlink(out));
  EXPECT_EQ(slurp(out), "results");
  check_writable(out);
  EXPECT_EQ(slurp(victim()), "victim");
}

// A link at the target itself is replaced, its target left alone.
TEST_F(Files, AWriteReplacesALinkAtTheTargetNotTheFileItNames) {
  const std::string out = path("out.json");
  fs::create_symlink(victim(), out);
  write_file_atomically(out, "results");
  EXPECT_EQ(slurp(victim()), "victim");
  EXPECT_FALSE(fs::is_symlink(out));
  EXPECT_EQ(slurp(out), "results");
}

TEST_F(Files, ANewFileIsNeverALinkNorAFileThatWasThere) {
  fs::create_symlink(path("nowhere"), path("dangling"));
  EXPECT_LT(create_new_file(path("dangling")), 0);
  EXPECT_FALSE(fs::exists(path("nowhere")));
  EXPECT_LT(create_new_file(victim()), 0);
  EXPECT_EQ(slurp(victim()), "victim");
  const int fd = create_new_file(path("fresh"));
  ASSERT_GE(fd, 0);
  close(fd);
}

// A child makes a temporary folder, says where, starts a grandchild that
// sleeps `grandchild_seconds` (0: none), and waits to be killed.
struct Maker {
  pid_t pid;
  std::string folder;
};
Maker make_folder_in_child(int grandchild_seconds) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    TempDir* d = new TempDir("nnbench-test");  // never destroyed
    if (grandchild_seconds > 0 && fork() == 0) {
      execl("/bin/sleep", "sleep", std::to_string(grandchild_seconds).c_str(),
            static_cast<char*>(nullptr));
      _exit(127);
    }
    const std::string p = d->path() + "\n";
    if (write(fds[1], p.data(), p.size()) < 0) _exit(1);
    for (;;) pause();
  }
  close(fds[1]);
  std::string folder;
  char c;
  while (read(fds[0], &c, 1) == 1 && c != '\n') folder += c;
  close(fds[0]);
  return {pid, folder};
}

// SIGKILL runs no destructor and no handler: the folder's watcher removes
// it.
TEST_F(Files, ATemporaryFolderGoesWhenItsProcessIsKilled) {
  const Maker m = make_folder_in_child(0);
  ASSERT_TRUE(fs::is_directory(m.folder)) << m.folder;
  std::ofstream(m.folder + "/some-file") << "data";
  kill(m.pid, SIGKILL);
  waitpid(m.pid, nullptr, 0);
  EXPECT_TRUE(eventually(2, [&] { return !fs::exists(m.folder); }))
      << m.folder << " is left";
}

// A child the process started may still write there: the folder stays
// while it lives, and goes when it ends.
TEST_F(Files, ATemporaryFolderStaysWhileAChildOfItsProcessLives) {
  const Maker m = make_folder_in_child(2);
  ASSERT_TRUE(fs::is_directory(m.folder)) << m.folder;
  kill(m.pid, SIGKILL);
  waitpid(m.pid, nullptr, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_TRUE(fs::exists(m.folder));
  EXPECT_TRUE(eventually(5, [&] { return !fs::exists(m.folder); }))
      << m.folder << " is left";
}

TEST_F(Files, ATemporaryFolderGoesWithItsObject) {
  std::string p;
  {
    TempDir d("nnbench-test");
    p = d.path();
    std::ofstream(d.file("x")) << "x";
    EXPECT_TRUE(fs::exists(d.file("x")));
  }
  EXPECT_FALSE(fs::exists(p));
}

}  // namespace
}  // namespace nnbench::util
