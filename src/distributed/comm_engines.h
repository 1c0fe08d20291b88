#pragma once
// The communication engines nnbench runs data-parallel training on, made
// by name. Which are built depends on what was found at configure time
// (Open MPI: libopenmpi-dev; Gloo: LibTorch's c10d with libgloo-dev).
#include <memory>
#include <string>
#include <vector>

#include "distributed/group.h"

namespace nnbench::distributed {

struct GroupOptions {
  // Gloo's meeting point: "file:PATH" (ranks on one machine) or
  // "tcp:HOST:PORT" (rank 0 listens); "" = $NNBENCH_RENDEZVOUS. MPI finds
  // its peers through mpirun.
  std::string rendezvous;
  int rank = -1, size = 0;      // Gloo: -1 reads the launcher's environment
  double timeout_seconds = 60;  // Gloo: a peer silent this long is an error
  // Gloo: network interface; "" = $GLOO_SOCKET_IFNAME, else by host name.
  std::string interface;
};

std::vector<std::string> engine_names();  // the built ones
// Joins the group; collective over all ranks. Throws nnbench::Error for an
// unknown or unbuilt engine or a rank that cannot join.
std::unique_ptr<Group> make_group(const std::string& engine,
                                  const GroupOptions& o);

// Where this process's rank and group size come from when the engine does
// not say: NNBENCH_RANK/NNBENCH_WORLD_SIZE (nnbench run --processes), else
// Open MPI's OMPI_COMM_WORLD_RANK/SIZE (started by mpirun). False if none.
bool rank_from_environment(int* rank, int* size);
// Whether this process was started as one rank of several (either way).
bool started_as_rank();

// The engines, for the registry (engines.cpp).
std::unique_ptr<Group> make_mpi_group(const GroupOptions& o);
std::unique_ptr<Group> make_gloo_group(const GroupOptions& o);

}  // namespace nnbench::distributed
