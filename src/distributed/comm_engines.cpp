#include "distributed/comm_engines.h"

#include <cstdlib>

#include "util/error.h"
#include "util/module.h"

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

#ifdef NNBENCH_WITH_GLOO
// Gloo comes with LibTorch, in the torch module (src/CMakeLists.txt), which
// only a process that joins a Gloo group loads (util/module.h).
constexpr const char* kGlooModule = "nnbench_torch";
constexpr const char* kGlooEntry = "nnbench_gloo_make_group";
using MakeGlooGroup = Group* (*)(const GroupOptions&);
#endif

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

#ifdef NNBENCH_WITH_GLOO
std::unique_ptr<Group> make_gloo_group(const GroupOptions& given) {
  GroupOptions o = given;
  if (o.rank < 0 && !rank_from_environment(&o.rank, &o.size))
    throw Error(
        "Gloo needs this process's rank: start it with `nnbench run "
        "--processes N` or with mpirun");
  // As PyTorch does: GLOO_SOCKET_IFNAME names the interface when the
  // caller did not.
  if (o.interface.empty())
    if (const char* i = std::getenv("GLOO_SOCKET_IFNAME")) o.interface = i;
  // The launcher (`nnbench run --processes`, suite cases) and the test
  // scripts hand every rank the meeting point this way.
  if (o.rendezvous.empty())
    if (const char* r = std::getenv("NNBENCH_RENDEZVOUS")) o.rendezvous = r;
  if (o.rendezvous.empty())
    throw Error(
        "Gloo needs a rendezvous (--rendezvous file:PATH or tcp:HOST:PORT) "
        "when started by mpirun");
  std::string why;
  auto make = reinterpret_cast<MakeGlooGroup>(
      util::module_symbol(kGlooModule, kGlooEntry, &why));
  if (!make) throw Error("Gloo (LibTorch's c10d) cannot be loaded: " + why);
  return std::unique_ptr<Group>(make(o));
}
#endif

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
