// nnbench with one more backend, "faulty", for the isolation tests: it runs
// the reference's arithmetic for most models and misbehaves for three, as a
// real engine sometimes does: mnist-cnn aborts, fcn-r hangs, alexnet-r asks
// for far more memory than any limit allows, lstm-ptb runs out of memory
// above batch 12. And "sluggish", for the suite's verdict: the reference's
// arithmetic 20 ms slower a step, its record naming a reference kernel, and
// no embedding layers (unimplemented).
#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

#include "backend/optimizer.h"
#include "backend/registry.h"
#include "cli/app.h"
#include "machine/env_fixes.h"

namespace {

using namespace nnbench;

backend::Description cpu_fp32(const std::string& name) {
  backend::Description d;
  d.name = name;
  d.devices = {"cpu"};
  d.precisions = {"fp32"};
  d.optimizers = backend::known_optimizers();
  return d;
}

class Faulty : public backend::Backend {
 public:
  std::string name() const override { return "faulty"; }
  std::string version() const override { return "faulty 1"; }
  backend::Description describe() const override { return cpu_fp32(name()); }
  backend::Support supports(const model::Layer&,
                            const backend::Options& o) const override {
    return backend::supports_options(describe(), o);
  }
  std::unique_ptr<backend::Executable> compile(
      const model::Model& m, const backend::Options& o,
      const backend::Shapes& shapes) override {
    if (m.name == "mnist-cnn") std::abort();
    if (m.name == "fcn-r")
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    if (m.name == "alexnet-r") {
      std::vector<char> huge(size_t{64} << 30);  // 64 GiB, never touched
      huge[0] = 1;
    }
    if (m.name == "lstm-ptb" && shapes.train_batch > 12)
      throw backend::OutOfMemory("faulty: lstm-ptb fits batches up to 12");
    return backend::make_backend(backend::kOracle)->compile(m, o, shapes);
  }
};

// The reference's executable, 20 ms of spinning later each step (spinning,
// not sleeping: a process that sleeps looks contended to the harness); its
// record says it ran a reference kernel, the reason the verdict should give.
class Sleepy : public backend::Executable {
 public:
  explicit Sleepy(std::unique_ptr<backend::Executable> e) : e_(std::move(e)) {}
  void load_batches(const std::vector<host::Batch>& b) override {
    e_->load_batches(b);
  }
  void infer(int batch) override {
    e_->infer(batch);
    nap();
  }
  void train_step(int batch) override {
    e_->train_step(batch);
    nap();
  }
  double last_loss() override { return e_->last_loss(); }
  void synchronize() override { e_->synchronize(); }
  backend::Effective effective() const override {
    auto e = e_->effective();
    e.extras["reference_kernels"] = "dense_1 inner_product ref:any";
    return e;
  }
  host::Tensor output() override { return e_->output(); }
  std::map<std::string, host::Tensor> parameters() override {
    return e_->parameters();
  }
  std::map<std::string, host::Tensor> gradients() override {
    return e_->gradients();
  }

 private:
  static void nap() {
    const auto end =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
    while (std::chrono::steady_clock::now() < end) {
    }
  }
  std::unique_ptr<backend::Executable> e_;
};

class Sluggish : public backend::Backend {
 public:
  std::string name() const override { return "sluggish"; }
  std::string version() const override { return "sluggish 1"; }
  backend::Description describe() const override { return cpu_fp32(name()); }
  backend::Support supports(const model::Layer& l,
                            const backend::Options& o) const override {
    if (l.op == model::Op::kEmbedding) return backend::Support::no(refusal(l));
    return backend::supports_options(describe(), o);
  }
  std::unique_ptr<backend::Executable> compile(
      const model::Model& m, const backend::Options& o,
      const backend::Shapes& shapes) override {
    for (const auto& l : m.layers)
      if (l.op == model::Op::kEmbedding)
        throw backend::Unimplemented(refusal(l));
    return std::make_unique<Sleepy>(
        backend::make_backend(backend::kOracle)->compile(m, o, shapes));
  }

 private:
  // Two lines: the verdict shows the first.
  static std::string refusal(const model::Layer& l) {
    return "layer '" + l.name + "' (embedding)\nsluggish runs no lookups";
  }
};

}  // namespace

int main(int argc, char** argv) {
  machine::apply_environment_fixes(argv);
  backend::register_backend("faulty",
                            []() -> std::unique_ptr<backend::Backend> {
                              return std::make_unique<Faulty>();
                            });
  backend::register_backend("sluggish",
                            []() -> std::unique_ptr<backend::Backend> {
                              return std::make_unique<Sluggish>();
                            });
  return cli::main(argc, argv);
}
