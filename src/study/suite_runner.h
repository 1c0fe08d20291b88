#pragma once
// Running a planned suite, apart from the command line that asks for it and
// the reporters that print, write and store it (results/reporter.h, as
// google/benchmark keeps its runner apart from its reporters): each case
// isolated or in process, every record handed to the reporters as it ends
// (the results store is one of them), resume, the max-batch search, derived
// figures and costs, the contention stop.
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cost/catalog.h"
#include "machine/environment.h"
#include "machine/peak.h"
#include "results/reporter.h"
#include "results/result.h"
#include "study/child.h"
#include "study/plan.h"
#include "study/shard.h"
#include "study/store.h"
#include "study/suite_file.h"

namespace nnbench::study {

struct SuiteRunOptions {
  bool in_process = false;      // no isolation: a crash ends the suite
  bool find_max_batch = false;  // a search per case with its batch left out
  int64_t max_batch_cap = 4096;
  ChildLimits limits;
  std::string resume;   // the run to continue; "" starts one
  std::string command;  // recorded with a new run
  std::optional<uint64_t> interleave_seed;
  std::optional<CostRule> pricing;  // with `instance` from the catalog
  std::optional<cost::Instance> instance;
  // One shard of a study split over machines (shard.h): recorded with the
  // whole plan's hash and size, from which gathering checks the shards.
  std::optional<Shard> shard;
  std::string study_plan_sha256;
  int study_cases = 0;
};

// What the command line shows as the suite goes.
struct SuiteEvents {
  // The run is begun (or resumed): its id ("" without a store).
  std::function<void(const std::string& run_id)> began;
  std::function<void(size_t index, const PlannedCase&, double estimate)>
      started;
  std::function<void(const PlannedCase&, const results::Record&)> finished;
  // The store failed (reading a resumed run back; the store's reporter
  // says the same through its own callback).
  std::function<void(const std::string&)> error;
  std::function<void(const std::string&)> note;  // why the suite stopped
  std::function<void(const std::string&)> line;  // a result line (max batch)
};

struct SuiteOutcome {
  std::string run_id;       // "" without a store
  std::string store_error;  // reading a resumed run back failed; "" no
  bool failures = false;    // a case failed, crashed, timed out, was invalid
  // A signal ended the suite (its case in flight ended, the run stays
  // unfinished); the reporters had every case finished before it.
  int interrupted = 0;
};

// The stored keys of the run to resume, after checking that `cases` are the
// cases it was started with (nnbench::Error naming both, else). Empty when
// not resuming.
std::set<std::string> resumable(Store* store, const std::string& resume,
                                const SuiteSpec& spec,
                                const std::vector<PlannedCase>& cases);

// Begins the run in the store (unless resuming `done`), then hands the
// reporters the whole run in plan order: the cases stored before (resumed)
// and every case not done as it ends, then the derived figures.
SuiteOutcome run_suite(const SuiteSpec& spec,
                       const std::vector<PlannedCase>& cases, Store* store,
                       const std::set<std::string>& done,
                       const machine::Environment& env,
                       const machine::Peak& peak, const SuiteRunOptions& o,
                       const SuiteEvents& events, results::Reporter& reporter);

// "<price source>; relative to <baseline>": how a run's costs were priced.
std::string price_note(const CostRule& c, const cost::Instance& i);

// The plan as one hash: its sorted case keys (an interleave seed only
// changes their order).
std::string plan_hash(const std::vector<PlannedCase>& cases);

}  // namespace nnbench::study
