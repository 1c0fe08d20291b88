#pragma once
// The system under test of LoadGen's token-latency mode: copies of one
// engine's generator (backend/generator.h), each on its own thread taking
// samples from one queue in arrival order. A sample is a prompt generated
// greedily to `new_tokens`: its first token is reported to LoadGen as soon
// as the prompt is through (mlperf::FirstTokenComplete), the whole answer
// when the last token is out (QuerySamplesComplete with its token count),
// so that LoadGen times the first token and each later one.
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

#include "backend/generator.h"
#include "model/model.h"

namespace nnbench::inference {

struct GenerationSetup {
  backend::Backend* backend = nullptr;  // not owned
  const model::Model* model = nullptr;  // not owned
  backend::Options options;
  int instances = 1;
  int64_t new_tokens = 2;
  // The prompts LoadGen's samples index (index mod count), one row each.
  std::vector<std::vector<int64_t>> prompts;
};

class GenerationSut : public mlperf::SystemUnderTest {
 public:
  // Starts the copies: each makes its generator and runs one whole
  // generation (untimed by LoadGen) on its own thread. Throws what the
  // first copy that failed threw.
  explicit GenerationSut(GenerationSetup setup);
  ~GenerationSut() override;

  const std::string& Name() override { return name_; }
  void IssueQuery(const std::vector<mlperf::QuerySample>& samples) override;
  void FlushQueries() override {}

  void rethrow_failure() const;
  // The warm-up generation's time, seconds (LoadGen's hint).
  double warmup_seconds() const { return warmup_; }
  backend::Effective effective() const { return effective_; }
  std::vector<int> processes() const;

 private:
  void serve(backend::Generator& g);
  void generate(backend::Generator& g, const mlperf::QuerySample& s);
  void stop();

  GenerationSetup setup_;
  std::string name_;
  std::vector<std::unique_ptr<backend::Generator>> copies_;
  std::vector<std::thread> threads_;
  mutable std::mutex mu_;
  std::condition_variable cv_, ready_cv_;
  std::deque<mlperf::QuerySample> queue_;
  bool stopping_ = false;
  int ready_ = 0;
  std::exception_ptr failure_;
  double warmup_ = 0;
  backend::Effective effective_;
};

}  // namespace nnbench::inference
