#pragma once
// One identity for a measured case, wherever nnbench names one: the plan's
// labels and groups (progress lines, the store's label column), compare's
// matching of cases, the report's categories. Before, four formats: compare
// left out the ranks and pooled data-parallel results with one-process ones
// as if they were repetitions. A dimension added later (a framework's
// version, a device) is one field here. The store's case key stays the
// hash of the whole resolved case (rules and settings included): it says
// whether a case ran, not what it is called.
#include <cstdint>
#include <string>

#include "results/request.h"
#include "results/result.h"
#include "results/training.h"

namespace nnbench::results {

struct CaseKey {
  std::string what;  // the model (or model file), or the training task
  std::string backend, precision;
  // "train" or "infer" for a throughput case; else its scenario ("latency",
  // "training"), which fixes the mode
  std::string mode;
  int64_t batch = 0;    // 0: not part of the case (a training task's own)
  std::string threads;  // as ran where known, else as asked ("0": every CPU)
  int ranks = 1;        // data-parallel processes
  std::string engine;   // their engine; "" for one process

  // Fields a name leaves out: a sweep's axis, a chart's series.
  enum Omit : unsigned {
    kNone = 0,
    kBackend = 1,
    kBatch = 2,
    kThreads = 4,
    kRanks = 8,
  };
  // "resnet-56 torch fp32 train p2 gloo b32 t1": the ranks only when more
  // than one, the batch only when the case has one.
  std::string name(unsigned omit = kNone) const;
};

// A planned case: the request as asked (threads 0 stays "0").
CaseKey key_of(const std::string& what, const std::string& scenario,
               const RunRequest& r);
// A record: threads as they ran (effective), else as asked.
CaseKey key_of(const RunResult& r);
CaseKey key_of(const TrainRun& r);

}  // namespace nnbench::results
