#include "study/shard.h"

#include <algorithm>
#include <charconv>

#include "util/error.h"
#include "util/spawn.h"

namespace nnbench::study {
namespace {

// A whole number in [lo, hi] from `text`; nnbench::Error naming `what`.
int whole(const std::string& text, int lo, int hi, const std::string& what) {
  int v = 0;
  const auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < lo || v > hi)
    throw Error(what + " is '" + text + "': a whole number from " +
                std::to_string(lo) + " to " + std::to_string(hi) +
                " was expected");
  return v;
}

std::string need(const std::map<std::string, std::string>& env,
                 const std::string& name, const std::string& why) {
  const auto it = env.find(name);
  if (it == env.end() || it->second.empty())
    throw Error("--shard auto: " + name + " is not set (" + why + ")");
  return it->second;
}

}  // namespace

std::map<std::string, std::string> process_env() {
  std::map<std::string, std::string> out;
  for (const auto& kv : util::environment_with({})) {
    const auto eq = kv.find('=');
    if (eq != std::string::npos) out[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return out;
}

std::optional<Shard> resolve_shard(
    const std::string& spec, const std::string& study,
    const std::map<std::string, std::string>& env) {
  if (spec.empty()) {
    if (!study.empty())
      throw Error("--study names a study of shards: give --shard too");
    return std::nullopt;
  }
  Shard s;
  s.study = study;
  const auto slash = spec.find('/');
  const std::string head = spec.substr(0, slash);
  const std::string tail =
      slash == std::string::npos ? "" : spec.substr(slash + 1);
  if (head == "auto" && tail.empty() && env.count("SLURM_ARRAY_TASK_ID")) {
    const int id = whole(need(env, "SLURM_ARRAY_TASK_ID", "a Slurm job array"),
                         0, 4000000, "SLURM_ARRAY_TASK_ID");
    const int min = env.count("SLURM_ARRAY_TASK_MIN")
                        ? whole(env.at("SLURM_ARRAY_TASK_MIN"), 0, 4000000,
                                "SLURM_ARRAY_TASK_MIN")
                        : 0;
    s.count = whole(
        need(env, "SLURM_ARRAY_TASK_COUNT", "the array's size, set by Slurm"),
        1, kMaxShards, "SLURM_ARRAY_TASK_COUNT");
    s.index = id - min;
    s.from = "Slurm job array (SLURM_ARRAY_TASK_ID " + std::to_string(id) +
             ", SLURM_ARRAY_TASK_MIN " + std::to_string(min) +
             ", SLURM_ARRAY_TASK_COUNT " + std::to_string(s.count) + ")";
    if (s.study.empty() && env.count("SLURM_ARRAY_JOB_ID"))
      s.study = "slurm-" + env.at("SLURM_ARRAY_JOB_ID");
  } else if (head == "auto") {
    if (tail.empty())
      throw Error(
          "--shard auto: neither a Slurm job array (SLURM_ARRAY_TASK_ID) nor "
          "a count: in a Kubernetes Indexed Job give --shard auto/N, N its "
          "completions");
    s.count = whole(tail, 1, kMaxShards, "--shard's count");
    s.index = whole(
        need(env, "JOB_COMPLETION_INDEX", "a Kubernetes Indexed Job sets it"),
        0, kMaxShards, "JOB_COMPLETION_INDEX");
    s.from = "Kubernetes Indexed Job (JOB_COMPLETION_INDEX " +
             std::to_string(s.index) + ", of " + std::to_string(s.count) + ")";
  } else {
    if (tail.empty())
      throw Error("--shard is '" + spec +
                  "': I/N (0 <= I < N), auto (a Slurm job array) or auto/N "
                  "(a Kubernetes Indexed Job of N completions)");
    s.count = whole(tail, 1, kMaxShards, "--shard's count");
    s.index = whole(head, 0, kMaxShards, "--shard's index");
    s.from = "--shard " + spec;
  }
  if (s.index < 0 || s.index >= s.count)
    throw Error("shard " + std::to_string(s.index) + " of " +
                std::to_string(s.count) + " (" + s.from +
                "): the index must be from 0 to " +
                std::to_string(s.count - 1));
  if (s.study.empty())
    throw Error(
        "--shard needs --study NAME, the name every shard of the study "
        "shares (a Slurm job array gives one: slurm-JOBID)");
  if (s.study.size() > 100 ||
      s.study.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRST"
                                "UVWXYZ0123456789._-") != std::string::npos)
    throw Error("--study is '" + s.study.substr(0, 100) +
                "': 1 to 100 letters, digits, '.', '_' or '-'");
  return s;
}

std::vector<PlannedCase> share(const std::vector<PlannedCase>& plan,
                               const Shard& s) {
  std::vector<std::string> keys;
  for (const auto& c : plan) keys.push_back(c.key);
  std::sort(keys.begin(), keys.end());
  std::vector<PlannedCase> out;
  for (const auto& c : plan) {
    const auto rank =
        std::lower_bound(keys.begin(), keys.end(), c.key) - keys.begin();
    if (rank % s.count == s.index) out.push_back(c);
  }
  return out;
}

}  // namespace nnbench::study
