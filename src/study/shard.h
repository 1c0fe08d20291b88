#pragma once
// A study split over machines: shard I of N runs a deterministic share of
// the plan (every N-th case in the order of the cases' keys, so the split
// is the same on every machine whatever the order the plan was made in),
// and records the study's name, its shard and the whole plan's hash, so
// that the shards gathered in one store (`results import`) can be checked
// for a case lost, a case run twice or a shard missing (`results study`).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "study/plan.h"

namespace nnbench::study {

inline constexpr int kMaxShards = 10000;

struct Shard {
  int index = 0;      // 0-based
  int count = 1;      // N
  std::string study;  // the name every shard of the study shares
  std::string from;   // where index and count came from, for the record
};

// The shard a suite runs: `spec` is --shard's value ("I/N", "auto" or
// "auto/N"; "" none), `study` --study's (may be empty). "auto" reads the
// job's engine from `env`: a Slurm job array (SLURM_ARRAY_TASK_ID minus
// SLURM_ARRAY_TASK_MIN, of SLURM_ARRAY_TASK_COUNT; the study defaults to
// "slurm-" and SLURM_ARRAY_JOB_ID), else a Kubernetes Indexed Job
// (JOB_COMPLETION_INDEX, of the N that "auto/N" gives). nnbench::Error
// naming the option or variable when a value is missing or out of bounds.
std::optional<Shard> resolve_shard(
    const std::string& spec, const std::string& study,
    const std::map<std::string, std::string>& env);

// This process's environment, for resolve_shard.
std::map<std::string, std::string> process_env();

// The cases of `plan` that shard `s` runs, in plan order.
std::vector<PlannedCase> share(const std::vector<PlannedCase>& plan,
                               const Shard& s);

}  // namespace nnbench::study
