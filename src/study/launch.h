#pragma once
// Starting the ranks of a data-parallel run on this machine (`nnbench run
// --processes N`, suite cases with processes > 1) and owning its outcome.
// Gloo: N copies of this program with NNBENCH_RANK, NNBENCH_WORLD_SIZE and
// a file rendezvous in a private folder; MPI: one mpirun with N ranks (no
// binding: ranks share the CPUs as the Gloo ranks do). When a rank dies,
// the others get `timeout` seconds to notice and exit with an error, then
// are killed. Each rank gets this process's arguments without
// --processes and with --out pointing into the private folder; rank 0
// writes its result there.
#include <nlohmann/json.hpp>
#include <string>

namespace nnbench::study {

struct Launch {
  std::string engine;  // "mpi" or "gloo"
  int processes = 2;
  std::string rendezvous;  // Gloo; "" = a private file
  double timeout_seconds = 60;
};

struct LaunchOutcome {
  int exit_code = 0;         // rank 0's (mpirun's under MPI)
  int failed_rank = -1;      // the first rank that died or exited abnormally
  std::string why;           // e.g. "was killed by signal 9 (Killed)"
  std::string rank0_output;  // what rank 0 wrote to --out ("" if nothing)
};

LaunchOutcome launch_ranks(const Launch& l);

// "rank 1 was killed by signal 9 (Killed) (a data-parallel run of 2 ranks
// over gloo)".
std::string failure_message(const Launch& l, const LaunchOutcome& o);
// A record's JSON marked as the failed run: state failed, the message
// (with rank 0's own after it), distributed.failed_rank.
void mark_failed(nlohmann::json& record, const Launch& l,
                 const LaunchOutcome& o);

}  // namespace nnbench::study
