#include "machine/threads.h"

#include <sched.h>

namespace nnbench::machine {

int resolve_threads(int requested) {
  if (requested > 0) return requested;
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof(mask), &mask) != 0) return 1;
  const int n = CPU_COUNT(&mask);
  return n > 0 ? n : 1;
}

}  // namespace nnbench::machine
