#include "inference/sut.h"

#include <loadgen.h>

#include <algorithm>
#include <chrono>

#include "bench/statistics.h"

namespace nnbench::inference {
namespace {

double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The class of row `row`; a non-finite output is no answer to score (a
// model with NaN in it would otherwise score chance), but the run's failure
// naming the sample.
int64_t argmax(const host::Tensor& out, int64_t row, int64_t sample) {
  const int64_t rows = out.shape.empty() ? 1 : out.shape[0];
  const int64_t classes = static_cast<int64_t>(out.f.size()) / rows;
  const float* p = out.f.data() + row * classes;
  backend::check_finite("the output for sample " + std::to_string(sample), p,
                        static_cast<size_t>(classes));
  return std::max_element(p, p + classes) - p;
}

}  // namespace

struct EngineSut::Copy {
  std::unique_ptr<backend::Executable> exe;
};

EngineSut::EngineSut(EngineSetup setup) : setup_(std::move(setup)) {
  name_ = "nnbench " + setup_.backend->name();
  std::vector<double> warm;  // every copy's warm-up steps
  for (int i = 0; i < setup_.instances; ++i)
    copies_.push_back(std::make_unique<Copy>());
  for (int i = 0; i < setup_.instances; ++i) {
    threads_.emplace_back([this, i, &warm] {
      Copy& c = *copies_[i];
      std::vector<double> mine;
      try {
        // Compiled on the thread that serves: OpenMP's thread count is a
        // per-thread setting, made in compile.
        c.exe = setup_.backend->compile(*setup_.model, setup_.options,
                                        backend::Shapes::infer(setup_.batch));
        c.exe->load_batches(setup_.batches);
        const double start = now();
        for (int s = 0;
             s < setup_.warmup_steps || now() - start < setup_.warmup_seconds;
             ++s) {
          const double t0 = now();
          c.exe->infer(s % static_cast<int>(setup_.batches.size()));
          c.exe->synchronize();
          mine.push_back(now() - t0);
        }
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu_);
        if (!failure_) failure_ = std::current_exception();
        c.exe.reset();
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        warm.insert(warm.end(), mine.begin(), mine.end());
        if (i == 0 && c.exe) effective_ = c.exe->effective();
        ++ready_;
      }
      ready_cv_.notify_all();
      if (c.exe) serve(c);
    });
  }
  std::exception_ptr failed;
  {
    std::unique_lock<std::mutex> lock(mu_);
    ready_cv_.wait(lock, [&] { return ready_ == setup_.instances; });
    failed = failure_;
  }
  if (failed) {
    stop();
    std::rethrow_exception(failed);
  }
  warmup_step_ = bench::quantile(warm, 0.5);
}

EngineSut::~EngineSut() { stop(); }

void EngineSut::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
}

void EngineSut::IssueQuery(const std::vector<mlperf::QuerySample>& samples) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    // One copy runs a query whole, unless it holds more samples than a
    // step takes (offline; every query in accuracy mode, sample by sample).
    const size_t step = static_cast<size_t>(setup_.batch);
    for (size_t i = 0; i < samples.size(); i += step) {
      Work w;
      w.samples.assign(samples.begin() + i,
                       samples.begin() + std::min(samples.size(), i + step));
      queue_.push_back(std::move(w));
    }
  }
  cv_.notify_all();
}

void EngineSut::serve(Copy& c) {
  for (;;) {
    Work w;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, nothing left
      w = std::move(queue_.front());
      queue_.pop_front();
    }
    run_work(c, w);
  }
}

void EngineSut::run_work(Copy& c, const Work& w) {
  const int64_t n = static_cast<int64_t>(w.samples.size());
  int64_t predicted = -1;  // accuracy mode: the engine's class
  bool ok = true;
  try {
    const int count = static_cast<int>(setup_.batches.size());
    const int64_t first = static_cast<int64_t>(w.samples.front().index);
    c.exe->infer(setup_.accuracy
                     ? static_cast<int>(first)
                     : static_cast<int>((first / setup_.batch) % count));
    c.exe->synchronize();
    if (setup_.accuracy) predicted = argmax(c.exe->output(), 0, first);
  } catch (...) {
    ok = false;
    std::lock_guard<std::mutex> lock(mu_);
    if (!failure_) failure_ = std::current_exception();
  }
  // Every sample is completed, a failed one too: LoadGen would otherwise
  // wait for it forever. The run is then recorded as failed.
  std::vector<mlperf::QuerySampleResponse> responses;
  for (const auto& s : w.samples) responses.push_back({s.id, 0, 0, 0});
  mlperf::QuerySamplesComplete(responses.data(), responses.size());
  std::lock_guard<std::mutex> lock(mu_);
  padded_ += setup_.batch - n;
  if (ok && setup_.accuracy) {
    ++scored_;
    correct_ += predicted == setup_.labels.at(w.samples.front().index);
  }
}

void EngineSut::rethrow_failure() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (failure_) std::rethrow_exception(failure_);
}

int64_t EngineSut::padded_samples() const {
  std::lock_guard<std::mutex> lock(mu_);
  return padded_;
}
int64_t EngineSut::scored() const {
  std::lock_guard<std::mutex> lock(mu_);
  return scored_;
}
int64_t EngineSut::correct() const {
  std::lock_guard<std::mutex> lock(mu_);
  return correct_;
}

std::vector<int> EngineSut::processes() const {
  std::vector<int> out;
  for (const auto& c : copies_)
    if (c->exe)
      for (int p : backend::worker_processes(*c->exe)) out.push_back(p);
  return out;
}

}  // namespace nnbench::inference
