// `nnbench slurm submit SUITE --tasks N` and `nnbench slurm collect DIR`: a
// study fanned out as a Slurm job array and gathered back (study/slurm.h).
#include <fmt/core.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cli/app.h"
#include "cli/commands.h"
#include "cli/gather.h"
#include "cli/options.h"
#include "results/limits.h"
#include "results/result.h"
#include "study/shard.h"
#include "study/slurm.h"
#include "study/store.h"
#include "util/atomic_file.h"
#include "util/capture.h"
#include "util/error.h"
#include "util/paths.h"

namespace nnbench::cli {
namespace {

namespace fs = std::filesystem;

struct SlurmArgs {
  std::string suite, dir = "nnbench-slurm", study, db;
  int tasks = 0;
  std::vector<std::string> suite_args, sbatch_args;
  bool wait = false;
  double timeout = 0;  // 0: wait as long as the job runs
  double poll = 5;
};

// The last lines of a shard's log: what a shard without a store said.
std::string log_tail(const std::string& path) {
  std::ifstream in(path);
  if (!in) return "(no log: the task never started?)";
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  std::string out;
  for (size_t i = lines.size() > 5 ? lines.size() - 5 : 0; i < lines.size();
       ++i)
    out += "\n    " + lines[i];
  return out.empty() ? "(empty log)" : out;
}

// Whether a shard's store holds a run still being written: importing it
// now would clash with its finished self at the next collect.
bool unfinished(const std::string& store) {
  study::Store s(store, study::Store::Open::kExisting);
  for (const auto& r : s.runs())
    if (r.finished_utc.empty()) return true;
  return false;
}

int collect(const study::SlurmJob& j, const SlurmArgs& a) {
  bool running = false;
  if (a.wait) {
    const auto t0 = std::chrono::steady_clock::now();
    while (study::job_listed(j.job_id)) {
      const double waited =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
              .count();
      if (a.timeout > 0 && waited > a.timeout)
        throw Error(
            fmt::format("job {} still runs after --timeout {:g} s; "
                        "collect again later",
                        j.job_id, a.timeout));
      std::this_thread::sleep_for(std::chrono::duration<double>(a.poll));
    }
  } else if (study::job_listed(j.job_id)) {
    running = true;
    fmt::print(stderr,
               "nnbench: job {} is still running: gathering the shards done "
               "so far (--wait waits for all)\n",
               j.job_id);
  }
  std::vector<std::string> stores;
  for (int i = 0; i < j.tasks; ++i) {
    const std::string store = study::shard_store(j, i);
    if (running && fs::exists(store) && unfinished(store))
      fmt::print(stderr, "nnbench: shard {} is still running; not gathered\n",
                 i);
    else if (fs::exists(store))
      stores.push_back(store);
    else if (running)
      fmt::print(stderr, "nnbench: shard {} has no store yet\n", i);
    else
      fmt::print(stderr, "nnbench: shard {} left no store; its log {}:{}\n", i,
                 study::shard_log(j, i), log_tail(study::shard_log(j, i)));
  }
  if (stores.empty())
    throw Error(fmt::format("job {}: no shard {} a store in {}", j.job_id,
                            running ? "has finished" : "left", j.dir));
  if (const int code = import_files(stores, a.db); code != kExitOk) return code;
  return check_study(a.db, j.study);
}

int submit(SlurmArgs& a) {
  study::SlurmJob j;
  j.dir = fs::absolute(a.dir).lexically_normal().string();
  j.suite = a.suite;
  j.tasks = a.tasks;
  j.study = a.study;
  j.suite_args = a.suite_args;
  const std::string exe = util::exe_path();
  if (exe.empty()) throw Error("cannot find this program (/proc/self/exe)");
  // The shards' command, checked here before any node runs it: a bad
  // suite or option is one usage error now, not N failed tasks later.
  std::vector<std::string> check = {exe,       "suite",
                                    j.suite,   "--check",
                                    "--shard", "0/" + std::to_string(j.tasks)};
  check.push_back("--study");
  check.push_back(j.study.empty() ? "check" : j.study);
  check.insert(check.end(), j.suite_args.begin(), j.suite_args.end());
  const util::Captured c = util::run_captured(check, 600);
  if (c.status != 0)
    throw Error("the shards' suite command fails here: " + c.err + c.out);
  if (fs::exists(j.dir + "/job.json"))
    throw Error(j.dir +
                " already holds a job (job.json): give another --dir, or "
                "collect that one");
  std::error_code ec;
  fs::create_directories(j.dir, ec);
  if (ec) throw Error("cannot create " + j.dir + ": " + ec.message());
  const std::string script = j.dir + "/job.sh";
  util::write_file_atomically(script, study::job_script(j, exe));
  j.job_id = study::sbatch(script, a.sbatch_args);
  if (j.study.empty()) j.study = "slurm-" + j.job_id;
  j.submitted_utc = results::utc_now_iso8601();
  study::write_job(j);
  fmt::print("job {}: study {}, {} array tasks; {}\n", j.job_id, j.study,
             j.tasks, script);
  if (!a.wait) {
    fmt::print("gather with: nnbench slurm collect {} --wait\n", j.dir);
    return kExitOk;
  }
  return collect(j, a);
}

void add_wait_options(CLI::App& app, SlurmArgs& a) {
  app.add_flag("--wait", a.wait,
               "Wait until Slurm no longer lists the job, then gather");
  app.add_option("--timeout", a.timeout,
                 "Give up waiting after this many seconds (0: no limit)")
      ->check(non_negative(results::kMaxSeconds))
      ->capture_default_str();
  app.add_option("--poll", a.poll, "Seconds between squeue calls")
      ->check(positive(3600))
      ->capture_default_str();
  app.add_option("--db", a.db, "The store to gather into");
}

}  // namespace

Action add_slurm(CLI::App& app) {
  auto a = std::make_shared<SlurmArgs>();
  app.require_subcommand(1);
  auto* sub = app.add_subcommand(
      "submit",
      "Write and submit a job array of a study's shards (one node each, "
      "--exclusive); arguments after -- go to every shard's suite");
  sub->add_option("suite", a->suite, "Suite name or file")->required();
  sub->add_option("suite_args", a->suite_args,
                  "After --: options of `nnbench suite` for every shard");
  sub->add_option("--tasks", a->tasks, "Array tasks: the study's shards")
      ->required()
      ->check(positive(study::kMaxShards));
  sub->add_option("--dir", a->dir,
                  "Folder for the script, the shards' stores and logs, on a "
                  "file system every node sees")
      ->capture_default_str();
  sub->add_option("--study", a->study,
                  "The study's name (default: slurm- and the job id)");
  sub->add_option("--sbatch", a->sbatch_args,
                  "One more sbatch argument (repeatable), e.g. "
                  "--sbatch=--partition=cpu");
  add_wait_options(*sub, *a);
  auto* col = app.add_subcommand(
      "collect",
      "Gather a submitted job's shards into the store and check the study");
  col->add_option("dir", a->dir, "The job's folder (submit's --dir)")
      ->capture_default_str();
  add_wait_options(*col, *a);
  return [a, sub] {
    if (sub->parsed()) return submit(*a);
    return collect(study::read_job(a->dir), *a);
  };
}

}  // namespace nnbench::cli
