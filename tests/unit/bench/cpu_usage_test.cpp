// The probe counts a helper process's CPU with the children it waited for:
// a worker whose framework runs children for it (JAX's on a GPU) is not
// judged contended by its own children.
#include "bench/cpu_usage.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ctime>

namespace nnbench::bench {
namespace {

// `seconds` of this process's CPU time, however busy the machine.
void spin(double seconds) {
  const auto cpu = [] {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) +
           1e-9 * static_cast<double>(t.tv_nsec);
  };
  const double end = cpu() + seconds;
  volatile double x = 0;
  while (cpu() < end) x = x + 1;
}

TEST(UsageProbe, AHelpersWaitedForChildrenAreItsCpu) {
  int go[2], done[2];
  ASSERT_EQ(pipe(go), 0);
  ASSERT_EQ(pipe(done), 0);
  const pid_t helper = fork();
  ASSERT_GE(helper, 0);
  if (helper == 0) {  // waits for "go", runs a busy child, says "done"
    char c;
    if (read(go[0], &c, 1) != 1) _exit(1);
    const pid_t child = fork();
    if (child == 0) {
      spin(0.4);
      _exit(0);
    }
    waitpid(child, nullptr, 0);
    if (write(done[1], &c, 1) != 1) _exit(1);
    pause();  // alive until killed, as a worker is
    _exit(0);
  }
  // The helper killed however the test ends; with the unused ends closed,
  // a helper that dies early ends the read below instead of blocking it.
  struct Reap {
    pid_t pid;
    ~Reap() {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  } reap{helper};
  close(go[0]);
  close(done[1]);
  UsageProbe probe({static_cast<int>(helper)});
  probe.start();
  char c = 'g';
  ASSERT_EQ(write(go[1], &c, 1), 1);
  ASSERT_EQ(read(done[0], &c, 1), 1);  // this process sleeps meanwhile
  const auto u = probe.stop(1);
  // The child's 0.4 s of CPU (ticks of 10 ms); the helper and this
  // process only wait. Without the children's time: about 0.
  EXPECT_GE(u.process_cpu_seconds, 0.37);
  EXPECT_LT(u.process_cpu_seconds, 0.6);
}

}  // namespace
}  // namespace nnbench::bench
