#pragma once
// The studies' second question, asked of runs gathered from several
// machines: which machine is fastest, and which cheapest, for this job?
// A job is a case without its machine (model, engine, precision, mode,
// batch, the threads asked: "t0" is every CPU of whichever machine); a
// training job is a task on an engine, each machine at its most threads
// (the CPU-vs-GPU study's figure). On each machine: the median time per
// step (per run for training), the throughput, and the cost per 10,000
// samples (per run) at the machine's instance price (machine/instance.h;
// CPU instances marked pro rata charged for the vCPUs the run used), each
// also over the baseline machine's, the first given. The fastest machine is
// compared with the runner-up by compare_case, the cheapest with the next
// cheapest (cost ratio = time ratio x price ratio, so it carries the time
// ratio's interval). Machines differ by process as well as hardware, so a
// difference under engine_options().noise is a tie. A machine without the
// job shows a gap, never a zero.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "compare/compare.h"
#include "compare/verdict.h"
#include "cost/catalog.h"
#include "results/result.h"

namespace nnbench::compare {

struct MachineId {
  // What tells machines apart: the host hash, else the CPU, CPUs, GPUs and
  // instance (an anonymous run of two alike machines is one machine).
  std::string key;
  std::string label;  // "aws-p3.2xlarge" or "AMD EPYC (Zen 4), 2 CPUs"
  std::optional<cost::Instance> instance;  // priced: the catalog has it
};

// The machine a recorded environment describes (labels not yet told apart:
// fastest_machines does that).
MachineId machine_of(const nlohmann::json& environment);

// One run's (or file's) records and where they ran.
struct MachineRuns {
  nlohmann::json environment;
  const std::vector<results::RunResult>* runs = nullptr;
  const std::vector<results::TrainRun>* training = nullptr;
};

struct OnMachine {
  bool measured = false;
  std::string state;      // why not measured: "oom", "failed (...)", "invalid"
  double seconds = 0;     // median per step; per training run
  double per_second = 0;  // samples per second (throughput jobs)
  int threads = 0;        // as ran
  // Per 10,000 samples (throughput), per run (training); none unpriced.
  std::optional<double> usd;
  std::string price;  // the price used, with its source
  std::optional<double> time_vs_base, usd_vs_base;  // over the baseline's
};

struct Ranking {
  std::string first, second;  // machine labels; second "" when alone
  double factor = 0;          // second's figure over first's
  results::Interval ci;       // 95 %, bootstrap (time; cost scaled)
  bool tie = false;
  std::string why;
};

struct MachineJob {
  std::string model;  // or task
  std::string name;   // "resnet-56 torch fp32 train b128 t0"
  bool training = false;
  int64_t batch = 0;
  int threads = 0;  // asked; 0: every CPU (training: each machine's most)
  std::vector<OnMachine> on;  // in MachineAnswer::machines' order
  std::optional<Ranking> fastest, cheapest;
  int machines_measured = 0;
};

struct MachineAnswer {
  std::vector<MachineId> machines;  // the first is the baseline
  std::vector<MachineJob> jobs;
  // Per model (task): its headline job's sentence, "m1 is 1.8x faster than
  // m2 (95 % CI ...); cheapest: m2, $0.012 per 10,000 samples, ...".
  std::vector<std::pair<std::string, std::string>> verdicts;
  std::vector<size_t> headline_jobs;   // each verdict's job, in `jobs`
  std::vector<size_t> source_machine;  // each source's, in `machines`
  // Machines ranked: most headline jobs measured, then the geometric mean
  // of their times over each job's fastest (behind_fastest, 1 for a
  // machine fastest everywhere; none with no headline time), so a report
  // of many machines can lead with the first few.
  std::vector<size_t> ranked;
  std::vector<std::optional<double>> behind_fastest;  // in ranked's order
};

// Sources on the same machine pool; machines are ordered as first seen.
MachineAnswer fastest_machines(const std::vector<MachineRuns>& sources,
                               const Options& o = engine_options());

// For `nnbench compare` across machines: the verdict lines and every job's
// figures, as markdown and as JSON (null for what was not measured).
std::string to_markdown(const MachineAnswer& a);
nlohmann::json to_json(const MachineAnswer& a);

// "$0.0123" with enough digits to tell small costs apart.
std::string usd_text(double usd);

}  // namespace nnbench::compare
