#pragma once
// Exports of training runs in the formats the studies' communities read and
// check: DAWNBench entries (training JSON + per-epoch TSV, inference JSON),
// checked by stanford-futuredata/dawn-bench-entries' tests/test_submissions.py
// and README; and MLPerf `:::MLLOG` logs, checked by mlcommons/logging's
// compliance checker (mlperf_logging/compliance_checker/*/common.yaml).
#include <cstdint>
#include <optional>
#include <string>

#include "cost/catalog.h"
#include "train/task.h"
#include "train/trainer.h"

namespace nnbench::train {

// Who submits, and on what: fields both formats require of every entry.
struct Submitter {
  std::string author;    // DAWNBench `author`, MLPerf submission_poc_name
  std::string email;     // DAWNBench `authorEmail`, submission_poc_email
  std::string org;       // MLPerf submission_org
  std::string platform;  // DAWNBench `hardware`, MLPerf submission_platform
  std::string division = "open";  // MLPerf: closed | open
  std::string status = "onprem";  // MLPerf: cloud | onprem | preview | research
};

// Fills what is empty the way git fills an unset identity: author from the
// login name, email <login>@<hostname>, organisation = author. `platform`
// is left to the caller (it knows the CPU and threads).
Submitter with_defaults(Submitter s);

// Throws nnbench::Error naming the field and the accepted values.
void check_submitter(const Submitter& s);

// What an export needs beyond the run itself.
struct ExportInfo {
  Submitter who;
  std::optional<cost::Price> price;
  int64_t train_samples = 0, eval_samples = 0;  // dataset split sizes
};

// The run's start (wall clock, Unix ms), or now for a run that failed before
// its clock started: its entry still needs a date and its log times.
int64_t run_start_ms(const TrainRun& r);

// yyyy-mm-dd (UTC) of a Unix time in milliseconds: DAWNBench's `timestamp`.
std::string utc_date(int64_t unix_ms);

// The per-epoch TSV of a DAWNBench training entry: epoch, hours of training
// time (as counted for time-to-accuracy), top-1 accuracy in percent.
std::string dawnbench_tsv(const TrainRun& r);

// The training entry's JSON (README "JSON Format" of the training tasks).
nlohmann::json dawnbench_entry(const TrainRun& r, const ExportInfo& info);

// The inference entry's JSON, when latency was measured: `latency` in ms per
// item (DAWNBench: total time over the items one at a time / items, i.e. the
// mean), `cost` in USD per item (costPerHour x latency) when priced.
std::optional<nlohmann::json> dawnbench_inference_entry(const TrainRun& r,
                                                        const ExportInfo& info);

// One run's MLPerf training log, one `:::MLLOG {json}` line per event, in
// the order the checker's state machine needs (submission_division before
// init_stop, init_stop before run_start ...). `recipe` is the task as run
// (epoch budget overridden where it was): hyperparameter keys come from it.
std::string mllog(const TrainRun& r, const Task& recipe,
                  const ExportInfo& info);

}  // namespace nnbench::train
