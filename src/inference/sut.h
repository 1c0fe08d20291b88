#pragma once
// The system under test LoadGen drives: copies of one compiled engine
// (instances), each on its own thread with the request's threads, taking
// work from one queue in arrival order. A query goes whole to one copy
// (single-stream, server: one sample; multi-stream: its samples as one
// batch); offline's one big query is cut into batches of `batch`, the last
// one padded (counted). The engine was compiled for exactly those sizes
// before the run, as every nnbench harness does.
#include <query_sample_library.h>
#include <system_under_test.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "backend/backend.h"
#include "host/host.h"
#include "model/model.h"

namespace nnbench::inference {

struct EngineSetup {
  backend::Backend* backend = nullptr;  // not owned
  const model::Model* model = nullptr;  // not owned
  backend::Options options;
  int instances = 1;
  // The batch size every step runs at (1 in accuracy mode).
  int64_t batch = 1;
  // Batches loaded into every copy before the run, each of `batch`
  // samples. Performance mode: synthetic, a query runs on batch
  // (first sample / batch) mod count. Accuracy mode: one per sample of
  // the test split (batch 1), a sample runs on its own.
  std::vector<host::Batch> batches;
  bool accuracy = false;
  // Accuracy mode: the test split's labels, one per sample.
  std::vector<int64_t> labels;
  // Warm-up per copy, before the run (untimed by LoadGen): at least this
  // many steps and this many seconds.
  int warmup_steps = 5;
  double warmup_seconds = 0.5;
};

class EngineSut : public mlperf::SystemUnderTest {
 public:
  // Starts the copies: each compiles, loads its batches and warms up on
  // its own thread. Throws what the first copy that failed threw.
  explicit EngineSut(EngineSetup setup);
  ~EngineSut() override;

  const std::string& Name() override { return name_; }
  void IssueQuery(const std::vector<mlperf::QuerySample>& samples) override;
  void FlushQueries() override {}

  // After the run.
  // The first failure of a step during the run (rethrown), if any.
  void rethrow_failure() const;
  int64_t padded_samples() const;
  // Accuracy mode: samples scored and how many the engine got right.
  int64_t scored() const;
  int64_t correct() const;
  // The warm-up's median step, seconds (LoadGen's hints come from it).
  double warmup_step_seconds() const { return warmup_step_; }
  backend::Effective effective() const { return effective_; }
  std::vector<int> processes() const;

 private:
  struct Work {
    std::vector<mlperf::QuerySample> samples;
  };
  struct Copy;
  void serve(Copy& c);
  void run_work(Copy& c, const Work& w);
  void stop();  // ends and joins the copies' threads

  EngineSetup setup_;
  std::string name_;
  std::vector<std::unique_ptr<Copy>> copies_;
  std::vector<std::thread> threads_;
  mutable std::mutex mu_;
  std::condition_variable cv_, ready_cv_;
  std::deque<Work> queue_;
  bool stopping_ = false;
  int ready_ = 0;
  std::exception_ptr failure_;
  int64_t padded_ = 0, scored_ = 0, correct_ = 0;
  double warmup_step_ = 0;
  backend::Effective effective_;
};

// LoadGen's sample library: `total` samples, of which `performance` at a
// time are loaded; every copy already holds them (EngineSetup::batches),
// so loading is a no-op.
class SampleLibrary : public mlperf::QuerySampleLibrary {
 public:
  SampleLibrary(size_t total, size_t performance)
      : total_(total), performance_(performance) {}
  const std::string& Name() override { return name_; }
  size_t TotalSampleCount() override { return total_; }
  size_t PerformanceSampleCount() override { return performance_; }
  void LoadSamplesToRam(const std::vector<mlperf::QuerySampleIndex>&) override {
  }
  void UnloadSamplesFromRam(
      const std::vector<mlperf::QuerySampleIndex>&) override {}

 private:
  std::string name_ = "nnbench samples";
  size_t total_, performance_;
};

}  // namespace nnbench::inference
