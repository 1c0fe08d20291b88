#pragma once
// What every measurement records, whatever its scenario: what ran, how it
// ended, and whether it can be trusted. Scenarios extend it with their own
// figures (RunResult: throughput; TrainRun: training to a target) and
// serialize through write_record/read_record, so the shared part has one
// shape in every file and in the store.
#include <exception>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "backend/backend.h"
#include "results/cpu_usage.h"
#include "results/validity.h"

namespace nnbench::results {

// How a run ended. The first five are finished runs (which state a scenario
// uses: ok for a throughput or latency measurement; converged,
// not_converged, completed or stopped for training); the rest are failures,
// which every harness maps from exceptions the same way (classify).
enum class State {
  kOk,
  kConverged,     // reached the target
  kNotConverged,  // the budget ran out before the target
  kCompleted,     // fixed epochs, all run
  kStopped,       // fixed epochs, cut short by the time budget
  kOom,
  kUnimplemented,
  kInvalidArgs,
  kFailed,
  kCrashed,  // its process died (a signal, or an exit without a result)
  kTimeout,  // its process ran past the wall-clock limit and was killed
  kNotRun,   // the engine cannot run on this machine (backend::Unavailable)
};
std::string state_name(State s);
State state_from_name(const std::string& s);  // throws nnbench::Error
// oom, unimplemented, invalid_args, failed, crashed, timeout, not_run
bool is_failure(State s);

// A failure raised inside a harness with its state already decided (e.g. a
// non-finite loss: failed; a run refused by its memory estimate: oom).
class RunError : public std::runtime_error {
 public:
  RunError(State state, const std::string& message, std::string oom_source = "")
      : std::runtime_error(message),
        state(state),
        oom_source(std::move(oom_source)) {}
  State state;
  std::string oom_source;
};

struct Outcome {
  State state = State::kFailed;
  std::string message;
  std::string oom_source;  // for oom: "estimate" or "allocation"
};

// The one mapping from an exception to a result state, for every harness:
// RunError keeps its state; backend::Unimplemented -> unimplemented;
// backend::OutOfMemory and std::bad_alloc -> oom ("allocation");
// nnbench::Error (a configuration the backend refuses) -> invalid_args;
// anything else -> failed. An interrupt (util::lifeline::Interrupted) is
// no state of the run: it is thrown on, to end the command.
Outcome classify(std::exception_ptr e);

struct Report;

// The two figures the store keeps in columns for queries (0: none).
struct Headline {
  double median_seconds = 0, samples_per_second = 0;
};

struct Record {
  virtual ~Record() = default;
  // The whole record as written to files and the store.
  virtual nlohmann::json serialize() const = 0;
  // Adds a copy to the report's list of its type; a kind the report has
  // no list for goes to `other` as JSON.
  virtual void file_into(Report& r) const;
  virtual Headline headline() const { return {}; }

  // The scenario that measured it: "throughput", "latency", "training".
  std::string kind;
  std::string model, model_hash, backend, backend_version;
  // What actually ran, read from the backend's own state
  // (backend::Executable::effective).
  backend::Effective effective;
  State state = State::kOk;
  std::string message;  // why, when the state is a failure or a cut-short run
  // For state oom, where it came from: "estimate" when the run was refused
  // because its estimated memory exceeded what was available (nothing was
  // allocated or run), "allocation" when an allocation really failed,
  // "oom_kill" when its process was killed by SIGKILL from outside (the
  // kernel's OOM killer).
  std::string oom_source;
  // Whether a finished run can be trusted (e.g. not contended), with the
  // operating system's view of its measured interval.
  Validity validity;
  CpuUsage cpu_usage;

  void fail(const Outcome& o) {
    state = o.state;
    message = o.message;
    oom_source = o.oom_source;
  }
};

using backend::effective_from_json;
using backend::to_json;
nlohmann::json to_json(const Validity& v);
Validity validity_from_json(const nlohmann::json& j);
nlohmann::json to_json(const CpuUsage& u);
CpuUsage cpu_usage_from_json(const nlohmann::json& j);

// The shared fields, written into (and read from) a record's JSON object:
// kind, model {name, hash}, backend {name, version}, effective, state,
// message, oom_source, validity, cpu_usage.
void write_record(const Record& r, nlohmann::json& j);
void read_record(const nlohmann::json& j, Record& r);

// JSON has no NaN: a figure that does not apply is written as null.
nlohmann::json finite_or_null(double x);
double number_or_nan(const nlohmann::json& j);

}  // namespace nnbench::results
