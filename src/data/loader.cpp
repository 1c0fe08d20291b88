#include "data/loader.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <numeric>
#include <random>
#include <thread>

#include "data/format_util.h"
#include "util/clock.h"

namespace nnbench::data {
namespace {

using util::Clock;
using util::nanoseconds_since;

}  // namespace

struct Loader::State {
  State(const Split& s, LoaderOptions opts) : split(s), o(opts) {}

  const Split& split;
  const LoaderOptions o;
  // Fixed while a worker runs: start_epoch joins it before changing them.
  std::vector<int64_t> order;
  int epoch = -1;
  uint64_t epoch_seed = 0;
  int64_t batches = 0;
  int64_t next_sync = 0;  // prefetch 0: the next batch to build

  std::thread worker;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<host::Batch> queue;
  bool stop = false, done = false;
  std::exception_ptr error;

  std::atomic<int64_t> wait_ns{0}, prepare_ns{0};

  host::Batch build(int64_t k) {
    const auto t0 = Clock::now();
    const int64_t first = k * o.batch;
    const int64_t last = std::min(first + o.batch, split.size);
    host::Batch b = gather_batch(split, order, first, last);
    if (o.augment) {
      augment_crop_flip(
          b.input, split, o.crop_padding,
          internal::mix_seed(internal::splitmix64(epoch_seed + 1), k));
    }
    prepare_ns += nanoseconds_since(t0);
    return b;
  }

  void run() {
    try {
      for (int64_t k = 0; k < batches; ++k) {
        {
          std::lock_guard<std::mutex> l(mu);
          if (stop) return;
        }
        host::Batch b = build(k);
        std::unique_lock<std::mutex> l(mu);
        cv.wait(l, [&] {
          return stop || static_cast<int>(queue.size()) < o.prefetch;
        });
        if (stop) return;
        queue.push_back(std::move(b));
        cv.notify_all();
      }
    } catch (...) {
      std::lock_guard<std::mutex> l(mu);
      error = std::current_exception();
    }
    std::lock_guard<std::mutex> l(mu);
    done = true;
    cv.notify_all();
  }

  void stop_worker() {
    {
      std::lock_guard<std::mutex> l(mu);
      stop = true;
    }
    cv.notify_all();
    if (worker.joinable()) worker.join();
  }
};

Loader::Loader(const Split& split, LoaderOptions o)
    : s_(std::make_unique<State>(split, o)) {
  if (o.batch < 1) throw nnbench::Error("loader: batch must be >= 1");
  if (o.prefetch < 0) throw nnbench::Error("loader: prefetch must be >= 0");
  if (o.augment) {
    if (split.input.dtype != model::DType::kFloat32 ||
        split.input.shape.size() != 3) {
      throw nnbench::Error(
          "loader: augmentation (random crop and flip) needs [C,H,W] float "
          "images, the data is " +
          model::shape_str(split.input.shape));
    }
    if (o.crop_padding < 0) {
      throw nnbench::Error("loader: crop_padding must be >= 0");
    }
  }
}

Loader::~Loader() { s_->stop_worker(); }

void Loader::start_epoch(int epoch) {
  State& s = *s_;
  s.stop_worker();
  s.queue.clear();
  s.stop = s.done = false;
  s.error = nullptr;
  s.epoch = epoch;
  s.epoch_seed = internal::mix_seed(s.o.seed, static_cast<uint64_t>(epoch));
  s.batches = batches_per_epoch();
  s.next_sync = 0;
  s.order.resize(s.split.size);
  std::iota(s.order.begin(), s.order.end(), int64_t{0});
  if (s.o.shuffle) {
    // Fisher-Yates.
    std::mt19937_64 rng(s.epoch_seed);
    for (int64_t k = s.split.size - 1; k > 0; --k) {
      std::swap(s.order[k], s.order[internal::uniform_below(rng, k + 1)]);
    }
  }
  if (s.o.prefetch > 0) s.worker = std::thread([&s] { s.run(); });
}

std::optional<host::Batch> Loader::next() {
  State& s = *s_;
  if (s.epoch < 0) throw nnbench::Error("loader: next() before start_epoch()");
  const auto t0 = Clock::now();
  if (s.o.prefetch == 0) {
    if (s.next_sync >= s.batches) return std::nullopt;
    host::Batch b = s.build(s.next_sync++);
    s.wait_ns += nanoseconds_since(t0);
    return b;
  }
  std::unique_lock<std::mutex> l(s.mu);
  s.cv.wait(l, [&] { return !s.queue.empty() || s.done; });
  s.wait_ns += nanoseconds_since(t0);
  if (!s.queue.empty()) {
    host::Batch b = std::move(s.queue.front());
    s.queue.pop_front();
    s.cv.notify_all();
    return b;
  }
  if (s.error) std::rethrow_exception(s.error);
  return std::nullopt;
}

int64_t Loader::batches_per_epoch() const {
  const int64_t n = s_->split.size, b = s_->o.batch;
  return s_->o.drop_last ? n / b : (n + b - 1) / b;
}

const std::vector<int64_t>& Loader::order() const { return s_->order; }

double Loader::wait_seconds() const { return s_->wait_ns.load() * 1e-9; }

double Loader::prepare_seconds() const { return s_->prepare_ns.load() * 1e-9; }

}  // namespace nnbench::data
