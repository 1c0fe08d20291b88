#include "inference/generation_sut.h"

#include <loadgen.h>

#include <algorithm>
#include <chrono>

namespace nnbench::inference {
namespace {

double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

GenerationSut::GenerationSut(GenerationSetup setup) : setup_(std::move(setup)) {
  name_ = "nnbench " + setup_.backend->name() + " generation";
  const int n = setup_.instances;
  copies_.resize(n);
  std::vector<double> warm(n, 0);
  int64_t longest = 0;
  for (const auto& p : setup_.prompts)
    longest = std::max(longest, static_cast<int64_t>(p.size()));
  for (int i = 0; i < n; ++i) {
    threads_.emplace_back([this, i, longest, &warm] {
      try {
        // Made on the thread that serves: OpenMP's thread count is a
        // per-thread setting.
        copies_[i] = setup_.backend->generator(*setup_.model, setup_.options,
                                               {1, longest, setup_.new_tokens});
        const double start = now();
        auto next = copies_[i]->prefill({setup_.prompts.at(0)});
        for (int64_t k = 1; k < setup_.new_tokens; ++k)
          next = copies_[i]->decode(next);
        warm[i] = now() - start;
        if (i == 0) {
          std::lock_guard<std::mutex> lock(mu_);
          effective_ = copies_[i]->effective();
        }
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu_);
        if (!failure_) failure_ = std::current_exception();
        copies_[i].reset();
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        ++ready_;
      }
      ready_cv_.notify_all();
      if (copies_[i]) serve(*copies_[i]);
    });
  }
  std::exception_ptr failed;
  {
    std::unique_lock<std::mutex> lock(mu_);
    ready_cv_.wait(lock, [&] { return ready_ == n; });
    failed = failure_;
  }
  if (failed) {
    stop();
    std::rethrow_exception(failed);
  }
  warmup_ = *std::max_element(warm.begin(), warm.end());
}

GenerationSut::~GenerationSut() { stop(); }

void GenerationSut::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
}

void GenerationSut::IssueQuery(
    const std::vector<mlperf::QuerySample>& samples) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.insert(queue_.end(), samples.begin(), samples.end());
  }
  cv_.notify_all();
}

void GenerationSut::serve(backend::Generator& g) {
  for (;;) {
    mlperf::QuerySample s;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, nothing left
      s = queue_.front();
      queue_.pop_front();
    }
    generate(g, s);
  }
}

void GenerationSut::generate(backend::Generator& g,
                             const mlperf::QuerySample& s) {
  std::vector<int64_t> tokens;
  bool first_sent = false;
  try {
    const auto& prompt = setup_.prompts.at(s.index % setup_.prompts.size());
    auto next = g.prefill({prompt});
    tokens.push_back(next.at(0));
    mlperf::QuerySampleResponse first{
        s.id, reinterpret_cast<uintptr_t>(tokens.data()), sizeof(int64_t), 1};
    mlperf::FirstTokenComplete(&first, 1);
    first_sent = true;
    for (int64_t k = 1; k < setup_.new_tokens; ++k) {
      next = g.decode(next);
      tokens.push_back(next.at(0));
    }
  } catch (...) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!failure_) failure_ = std::current_exception();
  }
  // Every sample is completed, a failed one too: LoadGen would otherwise
  // wait for it forever. The run is then recorded as failed.
  if (!first_sent) {
    mlperf::QuerySampleResponse none{s.id, 0, 0, 1};
    mlperf::FirstTokenComplete(&none, 1);
  }
  mlperf::QuerySampleResponse done{
      s.id, reinterpret_cast<uintptr_t>(tokens.data()),
      tokens.size() * sizeof(int64_t),
      std::max<int64_t>(2, static_cast<int64_t>(tokens.size()))};
  mlperf::QuerySamplesComplete(&done, 1);
}

void GenerationSut::rethrow_failure() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (failure_) std::rethrow_exception(failure_);
}

std::vector<int> GenerationSut::processes() const {
  std::vector<int> out;
  for (const auto& g : copies_)
    if (g)
      for (int p : g->processes()) out.push_back(p);
  return out;
}

}  // namespace nnbench::inference
