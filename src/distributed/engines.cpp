#include "distributed/engines.h"

#include <cstdlib>

#include "util/error.h"

namespace nnbench::distributed {
namespace {

bool read_pair(const char* rank_var, const char* size_var, int* rank,
               int* size) {
  const char* r = std::getenv(rank_var);
  const char* s = std::getenv(size_var);
  if (!r || !s) return false;
  *rank = std::atoi(r);
  *size = std::atoi(s);
  return *size > 0 && *rank >= 0 && *rank < *size;
}

}  // namespace

bool rank_from_environment(int* rank, int* size) {
  return read_pair("NNBENCH_RANK", "NNBENCH_WORLD_SIZE", rank, size) ||
         read_pair("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", rank, size);
}

bool started_as_rank() {
  int r, s;
  return rank_from_environment(&r, &s);
}

std::vector<std::string> engine_names() {
  std::vector<std::string> names;
#ifdef NNBENCH_WITH_MPI
  names.push_back("mpi");
#endif
#ifdef NNBENCH_WITH_GLOO
  names.push_back("gloo");
#endif
  return names;
}

std::unique_ptr<Group> make_group(const std::string& engine,
                                  const GroupOptions& o) {
#ifdef NNBENCH_WITH_MPI
  if (engine == "mpi") return make_mpi_group(o);
#endif
#ifdef NNBENCH_WITH_GLOO
  if (engine == "gloo") return make_gloo_group(o);
#endif
  std::string built;
  for (const auto& n : engine_names()) built += " " + n;
  throw Error("communication engine '" + engine +
              "' is not built (built:" + (built.empty() ? " none" : built) +
              "; Open MPI needs libopenmpi-dev, Gloo libgloo-dev and "
              "LibTorch)");
}

}  // namespace nnbench::distributed
