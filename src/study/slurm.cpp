#include "study/slurm.h"

#include <fmt/core.h>

#include <fstream>

#include "results/result.h"
#include "util/atomic_file.h"
#include "util/capture.h"
#include "util/error.h"

namespace nnbench::study {
namespace {

// sbatch and squeue answer a controller that is up at once; one that is
// down makes them retry for a while before failing.
constexpr double kSlurmDeadlineSeconds = 120;

std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string first_lines(const std::string& s) {
  std::string t = s.substr(0, 600);
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  return t;
}

}  // namespace

std::string shard_store(const SlurmJob& j, int i) {
  return j.dir + "/shard-" + std::to_string(i) + ".db";
}

std::string shard_log(const SlurmJob& j, int i) {
  return j.dir + "/shard-" + std::to_string(i) + ".log";
}

std::string job_script(const SlurmJob& j, const std::string& nnbench) {
  std::string cmd = quoted(nnbench) + " suite " + quoted(j.suite) +
                    " --shard auto --db " + quoted(j.dir) +
                    "/shard-\"$SLURM_ARRAY_TASK_ID\".db";
  if (!j.study.empty()) cmd += " --study " + quoted(j.study);
  for (const auto& a : j.suite_args) cmd += " " + quoted(a);
  return fmt::format(
      "#!/bin/bash\n"
      "# Written by `nnbench slurm submit`: one array task per shard of the\n"
      "# study, each on a node of its own so no two cases share its cores.\n"
      "#SBATCH --job-name=nnbench\n"
      "#SBATCH --array=0-{}\n"
      "#SBATCH --exclusive\n"
      "#SBATCH --nodes=1\n"
      "#SBATCH --output={}/shard-%a.log\n"
      "#SBATCH --chdir={}\n"
      "exec {}\n",
      j.tasks - 1, j.dir, j.dir, cmd);
}

std::string sbatch(const std::string& script,
                   const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"sbatch", "--parsable"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back(script);
  const util::Captured c = util::run_captured(argv, kSlurmDeadlineSeconds);
  if (c.status == 127)
    throw Error(
        "sbatch is not installed here (Slurm's client, Debian "
        "package slurm-client): " +
        first_lines(c.err));
  if (c.status != 0)
    throw Error(fmt::format("sbatch refused the job (exit {}): {}", c.status,
                            first_lines(c.err + c.out)));
  // "1234" or "1234;cluster"
  std::string id = c.out.substr(0, c.out.find_first_of(";\n"));
  if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos)
    throw Error("sbatch answered '" + first_lines(c.out) + "', not a job id");
  return id;
}

bool job_listed(const std::string& job_id) {
  const util::Captured c = util::run_captured(
      {"squeue", "--noheader", "--jobs", job_id, "--format", "%i"},
      kSlurmDeadlineSeconds);
  // A job Slurm has forgotten (finished longer ago than MinJobAge) is an
  // "Invalid job id" error from squeue: it is no longer listed.
  if (c.status != 0 && c.err.find("Invalid job id") != std::string::npos)
    return false;
  if (c.status != 0)
    throw Error(
        fmt::format("squeue could not say whether job {} is done "
                    "(exit {}): {}",
                    job_id, c.status, first_lines(c.err + c.out)));
  return c.out.find_first_not_of(" \n") != std::string::npos;
}

void write_job(const SlurmJob& j) {
  const nlohmann::json o = {
      {"job_id", j.job_id},         {"study", j.study},
      {"suite", j.suite},           {"tasks", j.tasks},
      {"suite_args", j.suite_args}, {"submitted_utc", j.submitted_utc}};
  util::write_file_atomically(j.dir + "/job.json", o.dump(2) + "\n");
}

SlurmJob read_job(const std::string& dir) {
  const std::string path = dir + "/job.json";
  std::ifstream in(path);
  if (!in)
    throw Error(path +
                ": no such file (a folder `nnbench slurm submit` "
                "wrote?)");
  nlohmann::json o;
  try {
    o = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw Error(path + ": not JSON: " + e.what());
  }
  SlurmJob j;
  j.dir = dir;
  try {
    j.job_id = o.at("job_id").get<std::string>();
    j.study = o.at("study").get<std::string>();
    j.suite = o.at("suite").get<std::string>();
    j.tasks = o.at("tasks").get<int>();
    j.suite_args = o.at("suite_args").get<std::vector<std::string>>();
    j.submitted_utc = o.value("submitted_utc", std::string());
  } catch (const nlohmann::json::exception& e) {
    throw Error(path + ": " + e.what());
  }
  if (j.tasks < 1) throw Error(path + ": tasks must be at least 1");
  return j;
}

}  // namespace nnbench::study
