#pragma once
// `nnbench run --processes N`: starts the ranks of a data-parallel run on
// this machine and owns its outcome. Gloo: N copies of this program with
// NNBENCH_RANK, NNBENCH_WORLD_SIZE and a file rendezvous in a private
// folder; MPI: one mpirun with N ranks (no binding: ranks share the CPUs as
// the Gloo ranks do). When a rank dies, the others get `timeout` seconds to
// notice and exit with an error, then are killed; the result records state
// failed with the rank. Rank 0 writes the result; the launcher moves it to
// --out.
#include <functional>
#include <string>

namespace nnbench::cli {

struct Launch {
  std::string engine;  // "mpi" or "gloo"
  int processes = 2;
  std::string out;  // the user's --out ("" for none)
  std::string rendezvous;
  double timeout_seconds = 60;
  // Writes a failed result to `out` when rank 0 wrote none (mpirun ends
  // every rank when one dies): message, failed rank.
  std::function<void(const std::string&, int)> write_failed;
};

// The exit code: rank 0's, or kExitRunNotOk when a rank failed.
int launch_ranks(const Launch& l);

}  // namespace nnbench::cli
