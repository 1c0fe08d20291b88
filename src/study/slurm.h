#pragma once
// A study fanned out over a Slurm cluster: one job-array task per shard
// (`nnbench suite --shard auto`), each on a node of its own (--exclusive,
// so no two cases share a node's cores while measured), each writing its
// own store in the job's folder, which every node must see (a shared file
// system, as Slurm's own --output needs); gathered back with `results
// import` and checked as one study.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace nnbench::study {

struct SlurmJob {
  std::string dir;    // absolute: the script, job.json, shard stores, logs
  std::string suite;  // as given to `nnbench suite`
  int tasks = 1;      // shards, one array task each
  std::string study;  // "" until submitted: "slurm-" and the job id
  std::vector<std::string> suite_args;  // passed to every shard's suite
  std::string job_id;                   // sbatch's
  std::string submitted_utc;
};

// The job script: #SBATCH lines (array 0..tasks-1, exclusive, a log per
// task in `dir`) and one `nnbench suite` command, every word quoted.
std::string job_script(const SlurmJob& j, const std::string& nnbench);

// Where shard i's store and log are.
std::string shard_store(const SlurmJob& j, int i);
std::string shard_log(const SlurmJob& j, int i);

// `sbatch --parsable [args] script`: the job id. nnbench::Error with
// sbatch's own message when it refuses or cannot be run.
std::string sbatch(const std::string& script,
                   const std::vector<std::string>& args);

// Whether Slurm still lists the job (any of its array tasks); Error when
// squeue cannot answer.
bool job_listed(const std::string& job_id);

// dir/job.json, both ways; reading names the file and field at fault.
void write_job(const SlurmJob& j);
SlurmJob read_job(const std::string& dir);

}  // namespace nnbench::study
