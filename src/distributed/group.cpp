#include "distributed/group.h"

#include <unistd.h>

#include <limits>

#include "distributed/check.h"

namespace nnbench::distributed {

double host_hash() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return hash32(name);
}

int local_ranks(Group& g) {
  const auto all = g.allgather({host_hash()});
  int n = 0;
  for (const auto& r : all) n += r.at(0) == all[g.rank()].at(0);
  return n;
}

int first_failed_rank(Group& g, bool failed) {
  // The maximum of (size - rank) over failed ranks names the lowest one.
  double v = failed ? g.size() - g.rank() : 0;
  g.allreduce_max(&v, 1);
  return v > 0 ? g.size() - static_cast<int>(v) : -1;
}

}  // namespace nnbench::distributed
