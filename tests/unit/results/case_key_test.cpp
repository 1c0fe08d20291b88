// One name per case: the plan, compare and the report agree, and the ranks
// of a data-parallel run are part of it (compare pooled them with
// one-process runs before).
#include "results/case_key.h"

#include <gtest/gtest.h>

namespace nnbench::results {
namespace {

RunResult a_run(int threads_asked, const std::string& threads_ran) {
  RunResult r;
  r.model = "resnet-56";
  r.backend = "torch";
  r.requested.backend = "torch";
  r.requested.batch = 32;
  r.requested.options.threads = threads_asked;
  r.requested.options.precision = "fp32";
  if (!threads_ran.empty()) r.effective.threads = std::stoi(threads_ran);
  return r;
}

TEST(CaseKey, NamesEveryDimensionInOneOrder) {
  EXPECT_EQ(key_of(a_run(0, "2")).name(), "resnet-56 torch fp32 train b32 t2");
  EXPECT_EQ(key_of(a_run(1, "")).name(), "resnet-56 torch fp32 train b32 t1");
  RunResult dp = a_run(1, "1");
  DistributedRun d;
  d.engine = "gloo";
  d.ranks = 2;
  dp.distributed = d;
  EXPECT_EQ(key_of(dp).name(), "resnet-56 torch fp32 train p2 gloo b32 t1");
  // Not the same case as one process at the same threads.
  EXPECT_NE(key_of(dp).name(), key_of(a_run(1, "1")).name());
  EXPECT_EQ(key_of(dp).name(CaseKey::kRanks), key_of(a_run(1, "1")).name());
  EXPECT_EQ(key_of(dp).name(CaseKey::kBackend | CaseKey::kThreads),
            "resnet-56 fp32 train p2 gloo b32");
  RunResult lat = a_run(1, "1");
  lat.kind = "latency";
  lat.requested.batch = 1;
  lat.requested.mode = backend::Mode::kInfer;
  EXPECT_EQ(key_of(lat).name(), "resnet-56 torch fp32 latency b1 t1");
}

TEST(CaseKey, PlannedAndMeasuredAgree) {
  RunRequest r;
  r.backend = "onednn";
  r.batch = 64;
  r.options.threads = 2;
  r.options.precision = "bf16";
  r.distributed = {"mpi", 2, "strong"};
  EXPECT_EQ(key_of("alexnet-r", "throughput", r).name(),
            "alexnet-r onednn bf16 train p2 mpi b64 t2");
  RunRequest t;
  t.backend = "torch";
  t.options.threads = 1;
  EXPECT_EQ(key_of("fashion-mnist-92", "training", t).name(),
            "fashion-mnist-92 torch fp32 training t1");  // no batch
  TrainRun run;
  run.task = "fashion-mnist-92";
  run.backend = "torch";
  run.effective.precision = "fp32";
  run.effective.threads = 1;
  EXPECT_EQ(key_of(run).name(),
            key_of("fashion-mnist-92", "training", t).name());
}

}  // namespace
}  // namespace nnbench::results
