// Gloo through LibTorch's c10d, as PyTorch DDP uses it on CPUs: a
// ProcessGroupGloo over a FileStore (one machine) or a TCPStore (rank 0
// listens). Tensors wrap the caller's memory (from_blob): no copies.
#include <torch/torch.h>

#include <chrono>
#include <cstdlib>
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "distributed/comm_engines.h"
#include "util/error.h"

namespace nnbench::distributed {
namespace {

using c10d::ProcessGroupGloo;

c10::intrusive_ptr<c10d::Store> make_store(const GroupOptions& o,
                                           std::chrono::milliseconds timeout) {
  const std::string& r = o.rendezvous;
  if (r.rfind("file:", 0) == 0)
    return c10::make_intrusive<c10d::FileStore>(r.substr(5), o.size);
  if (r.rfind("tcp:", 0) == 0) {
    const auto colon = r.rfind(':');
    c10d::TCPStoreOptions t;
    t.port = static_cast<uint16_t>(std::atoi(r.c_str() + colon + 1));
    t.isServer = o.rank == 0;
    t.numWorkers = o.size;
    t.timeout = timeout;
    return c10::make_intrusive<c10d::TCPStore>(r.substr(4, colon - 4), t);
  }
  throw Error("Gloo rendezvous '" + r +
              "': expected file:PATH or tcp:HOST:PORT");
}

class GlooGroup : public Group {
 public:
  explicit GlooGroup(const GroupOptions& o) : rank_(o.rank), size_(o.size) {
    const auto timeout = std::chrono::milliseconds(
        static_cast<int64_t>(o.timeout_seconds * 1000));
    auto opts = ProcessGroupGloo::Options::create(timeout);
    opts->devices.push_back(
        o.interface.empty()
            ? ProcessGroupGloo::createDefaultDevice()
            : ProcessGroupGloo::createDeviceForInterface(o.interface));
    opts->threads = 1;  // one collective at a time
    pg_ = c10::make_intrusive<ProcessGroupGloo>(make_store(o, timeout), rank_,
                                                size_, opts);
  }
  std::string engine() const override { return "gloo"; }
  std::string engine_version() const override {
    return std::string("Gloo in LibTorch ") + TORCH_VERSION;
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void allreduce_sum(float* data, int64_t n) override {
    allreduce(torch::from_blob(data, {n}, torch::kFloat32),
              c10d::ReduceOp::SUM);
  }
  std::function<void()> allreduce_sum_async(float* data, int64_t n) override {
    std::vector<at::Tensor> v{torch::from_blob(data, {n}, torch::kFloat32)};
    c10::intrusive_ptr<c10d::Work> work;
    run_start([&] { work = pg_->allreduce(v, c10d::AllreduceOptions()); });
    return [this, work] { run([&] { return work; }); };
  }
  void allreduce_max(double* data, int64_t n) override {
    allreduce(torch::from_blob(data, {n}, torch::kFloat64),
              c10d::ReduceOp::MAX);
  }
  std::vector<std::vector<double>> allgather(
      const std::vector<double>& mine) override {
    const auto n = static_cast<int64_t>(mine.size());
    std::vector<at::Tensor> in{torch::from_blob(
        const_cast<double*>(mine.data()), {n}, torch::kFloat64)};
    std::vector<std::vector<at::Tensor>> out(1);
    for (int r = 0; r < size_; ++r)
      out[0].push_back(torch::empty({n}, torch::kFloat64));
    run([&] { return pg_->allgather(out, in); });
    std::vector<std::vector<double>> all;
    for (const auto& t : out[0])
      all.emplace_back(t.data_ptr<double>(), t.data_ptr<double>() + n);
    return all;
  }

 private:
  void allreduce(at::Tensor t, c10d::ReduceOp op) {
    std::vector<at::Tensor> v{std::move(t)};
    c10d::AllreduceOptions ao;
    ao.reduceOp = op;
    run([&] { return pg_->allreduce(v, ao); });
  }
  template <typename F>
  void run_start(F start) {
    try {
      start();
    } catch (const c10::Error& e) {
      throw CommError(std::string("Gloo: ") + e.what_without_backtrace());
    }
  }
  template <typename F>
  void run(F start) {
    try {
      start()->wait();
    } catch (const c10::Error& e) {
      throw CommError(std::string("Gloo: ") + e.what_without_backtrace());
    } catch (const std::exception& e) {
      throw CommError(std::string("Gloo: ") + e.what());
    }
  }

  int rank_, size_;
  c10::intrusive_ptr<ProcessGroupGloo> pg_;
};

}  // namespace

}  // namespace nnbench::distributed

// The module's entry point (make_gloo_group, engines.cpp, loads the module
// on first use): `o` is complete, rank and rendezvous resolved there.
extern "C" nnbench::distributed::Group* nnbench_gloo_make_group(
    const nnbench::distributed::GroupOptions& o) {
  using nnbench::Error;
  try {
    return new nnbench::distributed::GlooGroup(o);
  } catch (const c10::Error& e) {
    throw Error(std::string("Gloo: rank ") + std::to_string(o.rank) +
                " could not join the group: " + e.what_without_backtrace());
  } catch (const std::exception& e) {
    throw Error(std::string("Gloo: rank ") + std::to_string(o.rank) +
                " could not join the group: " + e.what());
  }
}
